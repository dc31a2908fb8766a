"""archive.core.dates, and the python-dateutil 4.0 behaviour it rests on."""

from datetime import datetime, timedelta, timezone

import pytest
from dateutil import parser as dateutil_parser

from archive.core.dates import parse_date

SHANGHAI = timezone(timedelta(hours=8))


@pytest.mark.parametrize(
    "value,expected",
    [
        ("Tue, 30 Jul 2024 14:03:00 +0800", "2024-07-30T06:03:00Z"),  # RFC 822
        ("Tue, 30 Jul 2024 14:03:00 GMT", "2024-07-30T14:03:00Z"),
        ("2024-07-30T14:03:00-04:00", "2024-07-30T18:03:00Z"),  # ISO 8601
        ("2016-05-19T12:04:35.000Z", "2016-05-19T12:04:35Z"),
        ("1722319380", "2024-07-30T06:03:00Z"),  # Unix time
        (1722319380, "2024-07-30T06:03:00Z"),
        ("2024年7月30日", "2024-07-30T00:00:00Z"),
        ("2021年3月3日 10:05", "2021-03-03T10:05:00Z"),
        (datetime(2024, 7, 30, 14, 3, tzinfo=SHANGHAI), "2024-07-30T06:03:00Z"),
        # Go's default layout, which Hugo themes write into JSON-LD
        ("2020-05-01 00:00:00 +0000 UTC", "2020-05-01T00:00:00Z"),
        ("2019-03-04 10:20:00 +0800 CST", "2019-03-04T02:20:00Z"),  # CST is ambiguous: the offset decides
        ("Mon, 02 Jan 2006 15:04:05 MST", "2006-01-02T15:04:05Z"),  # an unknown name: naive, the blog's zone
    ],
)
def test_parse_date(value, expected):
    assert parse_date(value) == expected


def test_naive_dates_take_the_blogs_zone():
    assert parse_date("2024-07-30 14:03", default_tz=SHANGHAI) == "2024-07-30T06:03:00Z"
    assert parse_date("2024年7月30日", default_tz=SHANGHAI) == "2024-07-29T16:00:00Z"


@pytest.mark.parametrize("value", [None, "", "garbage", "Monday", "0001-01-01", "2024年13月40日"])
def test_unreadable_dates_are_none_never_now(value):
    assert parse_date(value) is None


def test_dateutil_cannot_read_cjk_dates_so_we_do_not_ask_it():
    # Pinned: dateutil refuses 2021年3月3日, and with fuzzy=True takes it for
    # March 3 of the current year; parse_date reads CJK dates itself.
    with pytest.raises(dateutil_parser.ParserError):
        dateutil_parser.parse("2021年3月3日")
    fuzzy = dateutil_parser.parse("2021年3月3日", fuzzy=True)
    assert (fuzzy.year, fuzzy.month, fuzzy.day) == (datetime.now().year, 3, 3)


def test_dateutil_defaults_fill_missing_fields():
    # Pinned: a missing day comes from `default`; parse_date passes year 1 to notice a missing year.
    assert dateutil_parser.parse("July 30", default=datetime(1, 1, 1)).year == 1
    assert parse_date("July 30") is None
