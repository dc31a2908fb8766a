"""An OPDS 1.2 catalogue of the blogs, each offered as its EPUB, for e-reader apps.

``opds_catalogue`` writes an acquisition feed (Atom, ``kind=acquisition``):
one entry per blog with posts, its title, authors, language and the time of
its newest post, a link to the blog and an acquisition link to its EPUB
(``export_epub``, made when asked for). The entry's id is the EPUB's
``dc:identifier``, so an app knows a book it already holds.
"""

from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from lxml import etree
from sqlite_utils import Database

from archive.formats.epub import book_identifier, xml_text

ATOM, DC, OPDS = "http://www.w3.org/2005/Atom", "http://purl.org/dc/terms/", "http://opds-spec.org/2010/catalog"
ACQUISITION_FEED = "application/atom+xml;profile=opds-catalog;kind=acquisition"
ACQUISITION = "http://opds-spec.org/acquisition"
EPUB_TYPE = "application/epub+zip"


def catalogue_blogs(db: Database) -> list[dict[str, Any]]:
    """The sources with posts, each with its title, authors, most common language, post count and
    the time of its newest post, in the order they were added."""
    blogs = []
    for source in db.query("select * from sources order by id"):
        posts = list(db.query("select author, lang, coalesce(updated, published, first_seen) as at from posts "
                              "where source_id = ?", [source["id"]]))
        if not posts:
            continue
        langs = Counter(p["lang"] for p in posts if p["lang"])
        blogs.append({
            "name": source["name"], "title": source.get("title") or source["name"], "url": source["url"],
            "site_url": source.get("site_url") or source["url"], "posts": len(posts),
            "authors": list(dict.fromkeys(p["author"] for p in posts if p["author"])),
            "lang": langs.most_common(1)[0][0] if langs else None,
            "updated": max((p["at"] for p in posts if p["at"]), default=None) or source.get("last_crawl_at"),
        })
    return blogs


def opds_catalogue(blogs: list[dict[str, Any]], *, title: str, feed_url: str,
                   epub_url: Callable[[dict[str, Any]], str]) -> str:
    """The blogs as an OPDS 1.2 acquisition feed; ``epub_url`` gives a blog's EPUB link."""
    feed = etree.Element(f"{{{ATOM}}}feed", nsmap={None: ATOM, "dc": DC, "opds": OPDS})
    _add(feed, "id", book_identifier(feed_url))
    _add(feed, "title", title)
    _add(feed, "updated", max((b["updated"] for b in blogs if b["updated"]), default=None)
         or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    _add(_add(feed, "author"), "name", "blogarchive")
    for rel in ("self", "start"):
        _add(feed, "link", rel=rel, href=feed_url, type=ACQUISITION_FEED)
    for blog in blogs:
        entry = _add(feed, "entry")
        _add(entry, "title", blog["title"])
        _add(entry, "id", book_identifier(blog["url"]))
        _add(entry, "updated", blog["updated"] or "1970-01-01T00:00:00Z")
        for author in blog["authors"]:
            _add(_add(entry, "author"), "name", author)
        if blog["lang"]:
            etree.SubElement(entry, f"{{{DC}}}language").text = xml_text(blog["lang"])
        _add(entry, "summary", f"{blog['posts']} posts of {blog['site_url']}", type="text")
        _add(entry, "link", rel="alternate", href=blog["site_url"], type="text/html")
        _add(entry, "link", rel=ACQUISITION, href=epub_url(blog), type=EPUB_TYPE)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + etree.tostring(feed, encoding="unicode", pretty_print=True)


def _add(parent: Any, tag: str, text: str | None = None, **attrs: str) -> Any:
    element = etree.SubElement(parent, f"{{{ATOM}}}{tag}", attrs)
    element.text = xml_text(text) if text else text
    return element
