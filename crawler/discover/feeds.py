"""Feed parsing: RSS, Atom (feedparser) and JSON Feed, to plain entry dicts."""

import hashlib
import json
import re
from typing import Any
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

import feedparser

from archive.core.dates import parse_date
from archive.core.urls import is_http_url, parse_url, url_key
from archive.core.xmlsafety import check_entities

from crawler.judge.encoding import xml_to_utf8
from crawler.judge.pages import term_kind

JSON_FEED_VERSION_PREFIX = "https://jsonfeed.org/version/"
# RFC 5005: paged feeds (next, previous) and archived feeds (prev-archive, next-archive).
PAGING_RELS = ("next", "previous", "prev-archive", "next-archive")
# Entries read at most from one feed document, newest first as feeds are written: feedparser
# takes about 0.5 ms and 4 kB per entry, so a feed of 100,000 would stall the crawl for a minute
# (the posts past the cut are still found through the sitemap and the listings).
MAX_ENTRIES = 5_000
ENTRY_END = re.compile(rb"</(?:[\w.-]+:)?(?:item|entry)\s*>", re.I)
# How a feed in UTF-16 or UTF-32 begins (a BOM, or "<" next to a zero byte), where ENTRY_END's
# ASCII bytes are not the document's: it is cut once re-encoded as UTF-8.
WIDE_STARTS = (b"\xff\xfe", b"\xfe\xff", b"<\x00", b"\x00<", b"\x00\x00")


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


def parse_feed(body: bytes, url: str, *, http_charset: str | None = None, max_entries: int = MAX_ENTRIES,
               page: str | None = None) -> dict[str, Any]:
    """Parse a feed into ``{"title", "link", "entries", "replies", "next", "wordpress"}``.

    Each entry is ``{"url", "guid", "title", "author", "published",
    "published_raw", "updated", "tags", "categories", "summary", "content"}`` with absolute
    URLs and ISO 8601 UTC dates (``published_raw`` as the feed wrote it).
    An entry without a link has ``url`` None and a guid made from its
    content, stable from one crawl to the next. ``warnings`` says what was
    wrong and kept anyway (unreadable dates, duplicate guids). ``next`` lists
    RFC 5005 paging links; ``wordpress`` says the feed pages with ``?paged=N``.
    Only the first ``max_entries`` entries are read (a warning says so).
    ``replies`` holds the entries that point inside a page rather than at a post
    (comments: see ``_split_replies``; ``page`` is the page that declared the
    feed); they are evidence about no post and are not in ``entries``.

    Raises:
        FeedError: the body is neither a readable XML feed nor a JSON Feed.
        archive.core.xmlsafety.XmlEntitiesError: an entity bomb, or an external entity (never parsed).
    """
    if body.lstrip()[:1] == b"{":
        return _parse_json_feed(body, url, max_entries, page)
    # feedparser trusts a wrong HTTP charset; hand it UTF-8 it cannot misread.
    if body.startswith(WIDE_STARTS):
        xml, cut = _first_entries(xml_to_utf8(body, http_charset), max_entries)
    else:  # cut on the bytes first: a huge feed is not re-encoded whole
        body, cut = _first_entries(body, max_entries)
        xml = xml_to_utf8(body, http_charset)
    check_entities(xml)  # before feedparser, which expands them, or holds every reference
    parsed = feedparser.parse(xml, response_headers={"content-location": url})
    # no Content-Type is handed to feedparser (the body is UTF-8 XML by now): its complaint of that is no fault
    faulty = parsed.bozo and not isinstance(parsed.get("bozo_exception"), feedparser.NonXMLContentType)
    if faulty and not parsed.entries:
        raise FeedError(f"not a readable feed: {parsed.get('bozo_exception')}")
    if not parsed.get("version") and not parsed.entries:
        raise FeedError("not a feed")
    feed = parsed.feed
    read = [(_entry(e, url, xml), _thread_mark(e)) for e in parsed.entries]
    posts, replies = _split_replies(read, [feed.get("link"), page], url)
    entries, warnings = _checked(posts)
    if cut:
        warnings.append(f"more than {max_entries} entries: only the first {max_entries} read")
    return {
        "title": feed.get("title"),
        "link": feed.get("link"),
        "entries": entries,
        "replies": replies,
        "warnings": warnings,
        "next": [
            link["href"]
            for link in feed.get("links", [])
            if link.get("rel") in PAGING_RELS and link.get("href")
        ],
        "wordpress": "wordpress" in (feed.get("generator") or "").lower(),
    }


def _first_entries(xml: bytes, limit: int) -> tuple[bytes, bool]:
    """The document up to the end of its ``limit``-th entry (feedparser reads the unclosed rest),
    and whether anything was cut."""
    for count, end in enumerate(ENTRY_END.finditer(xml), 1):
        if count == limit:
            return (xml[: end.end()], True) if ENTRY_END.search(xml, end.end()) else (xml, False)
    return xml, False


def _checked(entries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Entries with their guids made unique and their dates checked, and what was wrong."""
    warnings, guids = [], set()
    for entry in entries:
        where = entry["url"] or entry["title"] or entry["guid"]
        if entry["guid"] in guids:
            warnings.append(f"duplicate guid {entry['guid']!r} (entry {where}): kept without it")
            entry["guid"] = None
        guids.add(entry["guid"])
        if entry["published_raw"] and not entry["published"]:
            warnings.append(f"unreadable date {entry['published_raw']!r} (entry {where}): kept without a date")
    return entries, warnings


def _fallback_guid(entry: Any) -> str:
    content = entry.get("content") or [{}]
    return _content_id(entry.get("title"), entry.get("summary"), content[0].get("value"))


def _content_id(title: str | None, summary: str | None, content: str | None) -> str:
    key = json.dumps([title, summary, content], ensure_ascii=False)
    return "sha1:" + hashlib.sha1(key.encode("utf-8")).hexdigest()


def item_id(entry: dict[str, Any]) -> str:
    """An entry's id: its guid, else (a guid another entry of the feed had first) one made from its content."""
    return entry["guid"] or _content_id(entry["title"], entry["summary"], entry["content"])


def _thread_mark(entry: Any) -> str | None:
    """What an entry says of its place in a thread (RFC 4685, WordPress's wfw/slash): ``reply``
    when it answers another entry, ``post`` when it has replies of its own (a feed or a count)."""
    if dict.get(entry, "thr_in-reply-to"):
        return "reply"
    if dict.get(entry, "wfw_commentrss") or dict.get(entry, "slash_comments") is not None \
            or any(link.get("rel") == "replies" for link in entry.get("links", [])):
        return "post"
    return None


def _split_replies(read: list[tuple[dict[str, Any], str | None]], hangs_off: list[str | None],
                   base: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The entries about posts, and the replies: entries that point inside a page rather than at a post.

    An entry is a reply when it says so (``thr:in-reply-to``); when it carries no mark of a post
    (its own replies), also when its link holds a fragment (``POST#comment-3``), when it links
    the page the feed is about (the feed's own ``<link>``: a post's comments feed), or when all
    the feed's entries link one page (two or more, or the one page that declared the feed).
    """
    pages = [_page_key(entry["url"], base) for entry, _ in read]
    one_page = pages[0] if pages and pages[0] and len(set(pages)) == 1 else None
    own = {key for key in (_page_key(u, base) for u in hangs_off if u) if key}
    if one_page and len(pages) < 2 and one_page not in own:
        one_page = None
    posts: list[dict[str, Any]] = []
    replies: list[dict[str, Any]] = []
    for (entry, mark), page in zip(read, pages):
        inside = bool(entry["url"]) and (bool(urlsplit(entry["url"]).fragment) or page in own or page == one_page)
        (replies if mark == "reply" or (mark is None and inside) else posts).append(entry)
    return posts, replies


def _page_key(url: str | None, base: str) -> str | None:
    """The page a link leads to, as ``url_key`` names it; None for no link or one that cannot be read."""
    link = parse_url(url, base) if url else None
    return url_key(link) if link else None


def _own_link(entry: Any, xml: bytes) -> str | None:
    """The entry's link: its ``<link>``, else its guid when that is a permalink (feedparser takes an
    ``isPermaLink`` guid or an Atom id for the link) written as an absolute http(s) URL: ``123`` or
    ``urn:uuid:...`` is no address, not even one relative to the feed."""
    if any(link.get("rel") == "alternate" for link in entry.get("links", [])):
        return entry.get("link")
    guid = entry.get("link")
    # feedparser has resolved that guid against the feed's URL: "6" reads http://host/6, not in the document
    if not guid or not is_http_url(guid) or (xml and escape(guid).encode() not in xml and guid.encode() not in xml):
        return None
    return str(guid)


ZERO_YEAR = re.compile(r"(?<!\d)0{3}1(?!\d)")  # year 0001: a generator's zero date (Hugo's), no date at all


def _date(entry: Any, key: str) -> str | None:
    """The entry's date ``key`` (published, updated), None for a zero date: feedparser reads
    Hugo's ``Mon, 01 Jan 0001`` of an undated page as the year 2001."""
    raw = dict.get(entry, key)
    if isinstance(raw, str) and ZERO_YEAR.search(raw):
        return None
    return parse_date(dict.get(entry, f"{key}_parsed")) or parse_date(raw)


def _entry(entry: Any, base: str, xml: bytes = b"") -> dict[str, Any]:
    content = entry.get("content") or []
    # dict.get: feedparser's own get() maps a missing "updated" to "published"
    updated = _date(entry, "updated")
    published = _date(entry, "published")
    terms = [t for t in entry.get("tags", []) if (t.get("term") or "").strip()]
    return {
        "url": parse_url(link, base) if (link := _own_link(entry, xml)) else None,  # a link that is no URL is none
        "guid": entry.get("id") or entry.get("link") or _fallback_guid(entry),
        "title": entry.get("title"),
        "author": (entry.get("author_detail") or {}).get("name") or entry.get("author"),
        # RSS 1.0's dc:date is the item's only date; feedparser files it as "updated"
        "published": published or updated,
        "published_raw": dict.get(entry, "published") or dict.get(entry, "updated"),
        "updated": updated,
        # a term whose scheme is a category's page is a category (Hexo and others file both as <category>)
        "tags": [t["term"].strip() for t in terms if term_kind(t.get("scheme") or "") != "categories"],
        "categories": [t["term"].strip() for t in terms if term_kind(t.get("scheme") or "") == "categories"],
        "summary": entry.get("summary"),
        "content": content[0].get("value") if content else None,
    }


def _scrub(obj: dict[str, Any]) -> dict[str, Any]:
    """Lone surrogates become U+FFFD, as a browser shows them."""
    return {
        k: v.encode("utf-16", "surrogatepass").decode("utf-16", "replace") if isinstance(v, str) else v
        for k, v in obj.items()
    }


def _parse_json_feed(body: bytes, url: str, max_entries: int, page: str | None) -> dict[str, Any]:
    try:
        # JSON may escape lone surrogates ("\ud800"), which no UTF-8 text can hold
        data = json.loads(body.decode("utf-8", "replace"), object_hook=_scrub)
    except ValueError as e:
        raise FeedError(f"not valid JSON: {e}") from e
    if not isinstance(data, dict) or not str(data.get("version", "")).startswith(
        JSON_FEED_VERSION_PREFIX
    ):
        raise FeedError("not a JSON Feed")
    entries = []
    items = data.get("items") or []
    for item in items[:max_entries]:
        if not isinstance(item, dict):
            continue
        link = item.get("url") or item.get("external_url")
        content = item.get("content_html") or item.get("content_text")
        authors = item.get("authors") or ([item["author"]] if item.get("author") else [])
        entries.append(
            {
                "url": parse_url(link, url) if isinstance(link, str) else None,
                "guid": str(item.get("id") or link or _fallback_guid({**item, "content": [{"value": content}]})),
                "title": item.get("title"),
                "author": (authors[0] or {}).get("name") if authors else None,
                "published": parse_date(item.get("date_published")),
                "published_raw": item.get("date_published"),
                "updated": parse_date(item.get("date_modified")),
                "tags": [str(t) for t in item.get("tags") or []],
                "categories": [],
                "summary": item.get("summary"),
                "content": content,
            }
        )
    posts, replies = _split_replies([(e, None) for e in entries], [data.get("home_page_url"), page], url)
    entries, warnings = _checked(posts)
    if len(items) > max_entries:
        warnings.append(f"more than {max_entries} entries: only the first {max_entries} read")
    return {
        "title": data.get("title"),
        "link": data.get("home_page_url"),
        "entries": entries,
        "replies": replies,
        "next": [data["next_url"]] if isinstance(data.get("next_url"), str) else [],
        "wordpress": False,
        "warnings": warnings,
    }
