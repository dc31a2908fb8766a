"""One date helper for the whole archive, with an explicit failure policy.

Every date is stored as ISO 8601 text in UTC (``2024-07-30T06:03:00Z``).
A value that cannot be read gives ``None``: an unknown date stays NULL and is
never replaced by the crawl time.
"""

import re
import time
import warnings
from datetime import datetime, timezone, tzinfo

from dateutil import parser as dateutil_parser

CJK_DATE = re.compile(
    r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]?\s*(?:(\d{1,2})[:：时](\d{1,2})(?:[:：分](\d{1,2}))?)?"
)
UNIX_TIME = re.compile(r"^\d{9,11}(\.\d+)?$")
# Go's default layout, common in Hugo templates: 2006-01-02 15:04:05 -0700 MST. The
# numeric offset says it all; the abbreviation after it may be ambiguous (CST).
OFFSET_THEN_NAME = re.compile(r"([+-]\d{2}:?\d{2})\s+\(?[A-Za-z][A-Za-z0-9+-]{1,5}\)?$")
# Zone abbreviations that mean one offset only; any other name is read as the blog's zone.
ZONE_NAMES = {"UTC": timezone.utc, "GMT": timezone.utc, "Z": timezone.utc, "UT": timezone.utc}
# Dates before this are almost always a parser's invention (year 0001 etc.).
EARLIEST = datetime(1990, 1, 1, tzinfo=timezone.utc)


def parse_date(
    value: str | int | float | datetime | time.struct_time | None,
    *,
    default_tz: tzinfo | None = None,
) -> str | None:
    """Read a date in any common form and return it as ISO 8601 UTC text.

    Args:
        value: RFC 822, ISO 8601, ``2024年7月30日``, a Unix time, a
            ``datetime`` or a UTC ``struct_time`` (as feedparser gives).
        default_tz: the zone of a value that names none (the blog's zone);
            UTC when not given.

    Returns:
        ``YYYY-MM-DDTHH:MM:SSZ``, or None when the value is empty or unreadable.
    """
    dt = _to_datetime(value)
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=default_tz or timezone.utc)
    dt = dt.astimezone(timezone.utc)
    if dt < EARLIEST:
        return None
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def _to_datetime(value: object) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value
    if isinstance(value, time.struct_time):
        return datetime(*value[:6], tzinfo=timezone.utc)
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, tz=timezone.utc)
    text = str(value).strip()
    if UNIX_TIME.match(text):
        return datetime.fromtimestamp(float(text), tz=timezone.utc)
    cjk = CJK_DATE.search(text)
    if cjk:
        year, month, day, hour, minute, second = (int(g or 0) for g in cjk.groups())
        try:
            return datetime(year, month, day, hour, minute, second)
        except ValueError:
            return None
    text = OFFSET_THEN_NAME.sub(r"\1", text)
    try:
        # A date without a day or year would be completed from today: refuse it.
        default = datetime(1, 1, 1)
        with warnings.catch_warnings():
            # an unknown abbreviation (MST, CST) leaves the date naive: the blog's zone applies
            warnings.simplefilter("ignore", dateutil_parser.UnknownTimezoneWarning)
            dt = dateutil_parser.parse(text, default=default, tzinfos=ZONE_NAMES)
    except (ValueError, OverflowError):
        return None
    return None if dt.year == 1 else dt
