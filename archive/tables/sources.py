"""Per-source crawl settings, kept in the ``sources`` table.

``delay`` (seconds between requests to the blog's host), ``max_pages`` (page
budget per run), ``revisit`` (the revisit policy, see ``archive.tables.revisit``)
``media`` (``all``, ``metadata``: their URLs only, or ``off``; see ``archive.tables.media``),
``media_max_mb`` (the largest post image fetched, in MB),
``render`` (``auto``: a browser for the pages that need one, ``always``, ``never``; docs/rendering.md),
``map_host`` (``HOST=BASE``: fetch HOST's URLs from BASE, one host at a time, a host given again mapped
anew; ``HOST=default``: that host's mapping removed; column ``map_hosts``) and ``enabled``; ``default`` as a
value returns to the crawl's own (for ``map_host``: no mapping).

What ``crawl URL`` was given for a source (``remember_setup``) becomes its settings, so that a later
``crawl`` with no URL runs as the first did. The rule, once: an option given to a crawl wins for that
run, then the source's own setting, then the crawl's default (``crawler/settings.py``).
"""

import json
from typing import Any

from sqlite_utils import Database

from archive.core.db import writing
from archive.core.urls import host_of, parse_host_map
from archive.tables.media import MODES
from archive.tables.revisit import parse_policy

SOURCE_SETTINGS = ("delay", "max_pages", "revisit", "media", "media_max_mb", "render", "map_host", "enabled")
RENDER_MODES = ("auto", "always", "never")
TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off"}
# the numeric settings: their type, the least value (and whether it is allowed) and what they take, said on a bad value
NUMBERS: dict[str, tuple[type, float, bool, str]] = {
    "delay": (float, 0, True, "a number of seconds, 0 or more, as in 1.5"),
    "max_pages": (int, 1, True, "a whole number of pages, 1 or more"),
    "media_max_mb": (float, 0, False, "a number of MB over 0, as in 10"),
}


def _number(key: str, raw: str) -> float:
    kind, least, included, expected = NUMBERS[key]
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(expected) from None
    if not least <= value < float("inf") or value == least and not included:  # nan is no number either
        raise ValueError(expected)
    return value


def parse_setting(key: str, raw: str) -> Any:
    """The stored value of ``KEY=RAW`` (None for ``default``; for ``map_host``, ``{HOST: BASE}``, BASE None
    for ``HOST=default``).

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
        if key in NUMBERS:
            value: Any = _number(key, raw)
        elif key == "revisit":
            parse_policy(raw)
            value = raw
        elif key == "media":
            if raw.lower() not in MODES:
                raise ValueError(f"one of {', '.join(MODES)}")
            value = raw.lower()
        elif key == "render":
            if raw.lower() not in RENDER_MODES:
                raise ValueError(f"one of {', '.join(RENDER_MODES)}")
            value = raw.lower()
        elif key == "map_host":
            host, _, base = raw.partition("=")
            try:  # HOST=default: that host's mapping removed
                value = {host.strip().lower(): None} if host.strip() and base.strip().lower() == "default" else parse_host_map([raw])
            except ValueError:
                raise ValueError("HOST=BASE, as in example.com=http://127.0.0.1:8000, or HOST=default") from None
        else:
            if raw.lower() not in TRUE | FALSE:
                raise ValueError("1 or 0")
            value = int(raw.lower() in TRUE)
    except ValueError as e:
        raise ValueError(f"bad value for {key}: {raw!r}: {e}") from None
    return value


def set_source_settings(db: Database, name: str, values: dict[str, Any]) -> dict[str, Any]:
    """Change settings of the source called ``name`` (``map_host``: hosts added to its map, or None: none
    left); return its row.

    Raises:
        ValueError: no source has that name.
    """
    with writing(db):
        rows = list(db.query("select id, map_hosts from sources where name = ?", [name]))
        if not rows:
            raise ValueError(f"no source named {name!r} (see blogarchive sources)")
        columns = {k: v for k, v in values.items() if k != "map_host"}
        if "map_host" in values:
            merged = {**host_map_of(rows[0]), **values["map_host"]} if values["map_host"] else {}
            columns["map_hosts"] = _host_map_column({host: base for host, base in merged.items() if base})
        db.table("sources").update(rows[0]["id"], columns)
    return dict(db.table("sources").get(rows[0]["id"]))


def remove_source(db: Database, name: str, *, keep_posts: bool) -> dict[str, int]:
    """Take the source called ``name`` out of the archive, with what its crawls kept: pages judged, fetches,
    errors, and with its posts (their versions, aliases, provenance), their captures and the images no
    other source's post shows; the bodies nothing holds any more go too.

    With ``keep_posts``, a source with posts stays as the name of their blog, disabled (``enabled=0``: no
    crawl asks for it), its posts with their captures and images; its pages, fetches, errors and the feeds
    it found go, so that a crawl of its URL starts afresh. One with no post goes. Returns the counts
    removed (``posts``, ``pages``, ``captures``, ``images``) and ``kept``, the posts kept.

    Raises:
        ValueError: no source has that name.
    """
    with writing(db):
        found = list(db.query("select id from sources where name = ?", [name]))
        if not found:
            raise ValueError(f"no source named {name!r} (see blogarchive sources)")
        source_id = found[0]["id"]
        kept = db.execute("select count(*) from posts where source_id = ?", [source_id]).fetchone()[0] if keep_posts else 0
        removed = dict.fromkeys(("posts", "pages", "captures", "images"), 0)
        if not kept:
            for table in ("post_media", "provenance", "post_aliases", "post_versions"):
                db.execute(f"delete from {table} where post_id in (select id from posts where source_id = ?)", [source_id])
            removed["posts"] = db.execute("delete from posts where source_id = ?", [source_id]).rowcount
            removed["captures"] = db.execute("delete from captures where source_id = ?", [source_id]).rowcount
            # an image another source's post shows stays, as that source's
            db.execute("update media set source_id = (select p.source_id from post_media pm join posts p on p.id = pm.post_id "
                       "where pm.media_id = media.id limit 1) where source_id = ? and id in (select media_id from post_media)",
                       [source_id])
            removed["images"] = db.execute("delete from media where source_id = ?", [source_id]).rowcount
        removed["pages"] = db.execute("delete from pages where source_id = ?", [source_id]).rowcount
        db.execute("delete from fetches where source_id = ?", [source_id])
        db.execute("delete from crawl_errors where source_id = ?", [source_id])
        db.execute("delete from capture_bodies where sha256 not in (select sha256 from captures where sha256 is not null) "
                   "and sha256 not in (select sha256 from media where sha256 is not null) "
                   "and sha256 not in (select sha256 from fetches where sha256 is not null)")
        if kept:
            db.execute("update sources set enabled = 0, feeds = '[]', sitemaps = '[]', complete_at = null, run_state = null "
                       "where id = ?", [source_id])
        else:
            db.execute("delete from sources where id = ?", [source_id])
    return {**removed, "kept": kept}


def host_map_of(source: dict[str, Any]) -> dict[str, str]:
    """A source's own ``HOST -> BASE`` map."""
    return dict(json.loads(source.get("map_hosts") or "{}"))


def _host_map_column(host_map: dict[str, str]) -> str | None:
    return json.dumps(host_map, sort_keys=True) if host_map else None


def described_settings(source: dict[str, Any], keys: tuple[str, ...] = SOURCE_SETTINGS, *, unset: bool = False) -> list[str]:
    """``KEY=VALUE`` for a source's settings among ``keys``: those set (a disabled source's ``enabled=0``),
    or with ``unset`` every one, ``default`` where it has none; one ``map_host=HOST=BASE`` per host."""
    described = []
    for key in keys:
        if key == "map_host":
            host_map = host_map_of(source)
            described += [f"map_host={host}={base}" for host, base in host_map.items()] or (["map_host=default"] if unset else [])
        elif key == "enabled":
            described += [f"enabled={source[key]}"] if unset or not source[key] else []
        elif source[key] is not None or unset:
            value = source[key]
            described.append(f"{key}={'default' if value is None else f'{value:g}' if isinstance(value, float) else value}")
    return described


def remember_setup(db: Database, sources: list[dict[str, Any]], *, host_map: dict[str, str],
                   delay: float | None, media: str | None, render: str | None = None,
                   media_max_mb: float | None = None) -> list[dict[str, Any]]:
    """Keep what a crawl of these sources (its URLs) was given as their settings; return their rows.

    Each source keeps the ``--map-host`` entries of its own hosts (its scope's, the other hosts it took
    as its own, and those mapped to the same server) and those of no source of the crawl (an image
    host, say), added to its map; ``--delay``, ``--media``, ``--media-max-mb`` and ``--render`` when given. ``--max-pages``
    is a run's budget, never kept.
    """
    claimed = [_claimed_hosts(source, host_map) for source in sources]
    kept = []
    for source, mine in zip(sources, claimed):
        others = set().union(*(c for c in claimed if c is not mine))
        entries = {host: base for host, base in host_map.items() if host in mine or host not in others}
        values: dict[str, Any] = {"delay": delay, "media": media, "media_max_mb": media_max_mb, "render": render}
        values = {k: v for k, v in values.items() if v is not None}
        if entries:
            values["map_hosts"] = _host_map_column({**host_map_of(source), **entries})
        if values:
            db.table("sources").update(source["id"], values)
        kept.append(dict(db.table("sources").get(source["id"])))
    return kept


def _claimed_hosts(source: dict[str, Any], host_map: dict[str, str]) -> set[str]:
    hosts = {host_of(source["scope"]), *json.loads(source.get("hosts") or "[]")}
    bases = {host_map[h] for h in hosts if h in host_map}
    return hosts | {h for h, base in host_map.items() if base in bases}


def crawl_host_map(sources: list[dict[str, Any]], host_map: dict[str, str]) -> dict[str, str]:
    """The one map of a crawl's processes: the union of its sources' own maps, the run's ``--map-host``
    winning over them."""
    merged: dict[str, str] = {}
    for source in sources:
        merged.update(host_map_of(source))
    return merged | host_map
