"""Extract again, offline: ``blogarchive reextract`` calls this.

Each archived post is extracted again with the current code from its latest
raw capture, with its entry from the captured feeds, and no network; its links to
its media are saved again, less the source's theme images (an image found
only now is listed, not fetched). Yields one dict per post whose
extraction changed (``url``, ``changed`` fields, ``change`` recorded) or
failed (``url``, ``error``), then a summary. Without ``dry_run`` the changes
are saved, each as a new version.
"""

import json
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

from w3lib.encoding import html_to_unicode

from archive import save_post
from archive.core.urls import normalize_url
from archive.tables.captures import latest_capture
from archive.tables.history import record_version
from archive.tables.media import theme_media
from archive.tables.writes import POST_FIELDS

from crawler.discover.feeds import FeedError, parse_feed
from crawler.extract.post import extract_post


def feed_entries(db: Any, feeds: list[str]) -> dict[str, dict[str, Any]]:
    """Entries of the captured feeds, by normalised post URL."""
    entries: dict[str, dict[str, Any]] = {}
    for url in feeds:
        capture = latest_capture(db, url)
        if not capture or not capture["body"]:
            continue
        try:
            feed = parse_feed(capture["body"], url)
        except FeedError:
            continue
        for entry in feed["entries"]:
            if entry["url"]:  # an entry with no link is a post of its own, not a page's evidence
                entries.setdefault(normalize_url(entry["url"]), entry)
    return entries


def reextract(db: Any, *, source: str | None = None, dry_run: bool = False) -> Iterator[dict[str, Any]]:
    """Extract every post (of one source) again from its capture; yield what changed."""
    where, params = ("where name = ?", [source]) if source else ("", [])
    sources = list(db.query(f"select * from sources {where} order by id", params))
    if source and not sources:
        raise ValueError(f"no source named {source!r}")
    total = changed = 0
    for src in sources:
        entries = feed_entries(db, json.loads(src["feeds"] or "[]"))
        theme = None if src["media"] == "off" else theme_media(db, src["id"])
        for post in list(db.query("select * from posts where source_id = ? order by id", [src["id"]])):
            total += 1
            result = _reextract_post(db, post, entries.get(post["url"]), theme, dry_run=dry_run)
            if result:
                changed += "changed" in result
                yield result
    yield {"summary": True, "posts": total, "changed": changed, "dry_run": dry_run}


def _reextract_post(db: Any, post: dict[str, Any], entry: dict[str, Any] | None, theme: set[str] | None, *,
                    dry_run: bool) -> dict[str, Any] | None:
    """``theme``: the source's theme images, never a post's media (None: the source keeps no media)."""
    capture = latest_capture(db, post["url"])
    if capture is None or capture["body"] is None:
        return {"url": post["url"], "error": "no capture of this page"}
    _, html = html_to_unicode(capture["headers"].get("content-type"), capture["body"])
    new = extract_post(post["url"], html, feed_entry=entry)
    if new is None:
        return {"url": post["url"], "error": "no article text found now"}
    new.media = None if theme is None else [m for m in new.media or [] if normalize_url(m["url"]) not in theme]
    fields = {k: json.dumps(v, ensure_ascii=False) if isinstance(v, list) else v for k, v in asdict(new).items()}
    changed = [k for k in POST_FIELDS if fields[k] is not None and fields[k] != post[k]]
    if not changed:
        return None
    result: dict[str, Any] = {"url": post["url"], "changed": changed}
    if not dry_run:
        save_post(db, {**asdict(new), "source_id": post["source_id"]}, run_id=0)
        result["change"] = record_version(db, post["url"], run_id=None)
    return result

