"""Per-source crawl settings, kept in the ``sources`` table.

``delay`` (seconds between requests to the blog's host), ``max_pages`` (page
budget per run), ``revisit`` (the revisit policy, see ``archive.tables.revisit``)
``media`` (``all``, ``metadata``: their URLs only, or ``off``; see ``archive.tables.media``)
and ``enabled``; ``default`` as a value returns to the crawl's own setting.
"""

from typing import Any

from sqlite_utils import Database

from archive.tables.media import MODES
from archive.tables.revisit import parse_policy

SOURCE_SETTINGS = ("delay", "max_pages", "revisit", "media", "enabled")
TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off"}


def parse_setting(key: str, raw: str) -> Any:
    """The stored value of ``KEY=RAW`` (None for ``default``).

    Raises:
        ValueError: an unknown key or a value it cannot take.
    """
    if key not in SOURCE_SETTINGS:
        raise ValueError(f"unknown setting {key!r}: one of {', '.join(SOURCE_SETTINGS)}")
    raw = raw.strip()
    if raw.lower() == "default":
        if key == "enabled":
            raise ValueError("enabled is 1 or 0")
        return None
    try:
        if key == "delay":
            value: Any = float(raw)
            if value < 0:
                raise ValueError
        elif key == "max_pages":
            value = int(raw)
            if value < 1:
                raise ValueError
        elif key == "revisit":
            parse_policy(raw)
            value = raw
        elif key == "media":
            if raw.lower() not in MODES:
                raise ValueError(f"one of {', '.join(MODES)}")
            value = raw.lower()
        else:
            if raw.lower() not in TRUE | FALSE:
                raise ValueError
            value = int(raw.lower() in TRUE)
    except ValueError as e:
        detail = f": {e}" if str(e) else ""
        raise ValueError(f"bad value for {key}: {raw!r}{detail}") from None
    return value


def set_source_settings(db: Database, name: str, values: dict[str, Any]) -> dict[str, Any]:
    """Change settings of the source called ``name``; return its row.

    Raises:
        ValueError: no source has that name.
    """
    rows = list(db.query("select id from sources where name = ?", [name]))
    if not rows:
        raise ValueError(f"no source named {name!r} (see blogarchive sources)")
    with db.atomic():
        db.table("sources").update(rows[0]["id"], values)
    return dict(db.table("sources").get(rows[0]["id"]))
