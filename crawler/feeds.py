"""Feed parsing: RSS, Atom (feedparser) and JSON Feed, to plain entry dicts."""

import json
from typing import Any
from urllib.parse import urljoin

import feedparser

from archive.dates import parse_date

from .encoding import xml_to_utf8

JSON_FEED_VERSION_PREFIX = "https://jsonfeed.org/version/"
# RFC 5005: paged feeds (next, previous) and archived feeds (prev-archive, next-archive).
PAGING_RELS = ("next", "previous", "prev-archive", "next-archive")


class FeedError(ValueError):
    """The body is not a feed that can be read."""


def looks_like_feed(body: bytes, content_type: str = "") -> bool:
    """Cheap sniff: RSS, Atom, RDF or JSON Feed rather than HTML."""
    head = body[:1024].lstrip().lower()
    if "json" in content_type or head.startswith(b"{"):
        return JSON_FEED_VERSION_PREFIX.encode() in body[:4096]
    if b"<html" in head or b"<!doctype html" in head:
        return False
    return any(tag in body[:4096].lower() for tag in (b"<rss", b"<feed", b"<rdf:rdf"))


def parse_feed(body: bytes, url: str, *, http_charset: str | None = None) -> dict[str, Any]:
    """Parse a feed into ``{"title", "link", "entries", "next", "wordpress"}``.

    Each entry is ``{"url", "guid", "title", "author", "published",
    "published_raw", "updated", "tags", "summary", "content"}`` with absolute
    URLs and ISO 8601 UTC dates (``published_raw`` as the feed wrote it).
    ``next`` lists RFC 5005 paging links; ``wordpress`` says the feed pages
    with ``?paged=N``.

    Raises:
        FeedError: the body is neither a readable XML feed nor a JSON Feed.
    """
    if body.lstrip()[:1] == b"{":
        return _parse_json_feed(body, url)
    # feedparser trusts a wrong HTTP charset; hand it UTF-8 it cannot misread.
    parsed = feedparser.parse(xml_to_utf8(body, http_charset), response_headers={"content-location": url})
    if parsed.bozo and not parsed.entries:
        raise FeedError(f"not a readable feed: {parsed.get('bozo_exception')}")
    if not parsed.get("version") and not parsed.entries:
        raise FeedError("not a feed")
    feed = parsed.feed
    return {
        "title": feed.get("title"),
        "link": feed.get("link"),
        "entries": [_entry(e, url) for e in parsed.entries if e.get("link")],
        "next": [
            link["href"]
            for link in feed.get("links", [])
            if link.get("rel") in PAGING_RELS and link.get("href")
        ],
        "wordpress": "wordpress" in (feed.get("generator") or "").lower(),
    }


def _entry(entry: Any, base: str) -> dict[str, Any]:
    content = entry.get("content") or []
    # dict.get: feedparser's own get() maps a missing "updated" to "published"
    updated = parse_date(dict.get(entry, "updated_parsed")) or parse_date(dict.get(entry, "updated"))
    published = parse_date(dict.get(entry, "published_parsed")) or parse_date(dict.get(entry, "published"))
    return {
        "url": urljoin(base, entry["link"]),
        "guid": entry.get("id") or entry["link"],
        "title": entry.get("title"),
        "author": entry.get("author"),
        # RSS 1.0's dc:date is the item's only date; feedparser files it as "updated"
        "published": published or updated,
        "published_raw": dict.get(entry, "published") or dict.get(entry, "updated"),
        "updated": updated,
        "tags": [t["term"].strip() for t in entry.get("tags", []) if (t.get("term") or "").strip()],
        "summary": entry.get("summary"),
        "content": content[0].get("value") if content else None,
    }


def _parse_json_feed(body: bytes, url: str) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except ValueError as e:
        raise FeedError(f"not valid JSON: {e}") from e
    if not isinstance(data, dict) or not str(data.get("version", "")).startswith(
        JSON_FEED_VERSION_PREFIX
    ):
        raise FeedError("not a JSON Feed")
    entries = []
    for item in data.get("items") or []:
        link = isinstance(item, dict) and (item.get("url") or item.get("external_url"))
        if not link:
            continue
        authors = item.get("authors") or ([item["author"]] if item.get("author") else [])
        entries.append(
            {
                "url": urljoin(url, link),
                "guid": str(item.get("id") or link),
                "title": item.get("title"),
                "author": (authors[0] or {}).get("name") if authors else None,
                "published": parse_date(item.get("date_published")),
                "published_raw": item.get("date_published"),
                "updated": parse_date(item.get("date_modified")),
                "tags": [str(t) for t in item.get("tags") or []],
                "summary": item.get("summary"),
                "content": item.get("content_html") or item.get("content_text"),
            }
        )
    return {
        "title": data.get("title"),
        "link": data.get("home_page_url"),
        "entries": entries,
        "next": [data["next_url"]] if data.get("next_url") else [],
        "wordpress": False,
    }
