"""EPUB 3 of one blog, made with EbookLib from the archive alone, for e-readers.

``export_epub`` writes one chapter per post in publication order (the posts
with no date last): its title, author, dates, tags and original URL above its
Markdown rendered to XHTML. The table of contents groups the chapters by year;
the book's title is the blog's, its ``dc:source`` the blog's URL, its language
the one most of its posts are in (each chapter carries its own). Images come
from the archive, never from the network: a post's archived PNG, JPEG and GIF
images are embedded, and an image that is not archived, or that an EPUB 3.2
reader need not show (WebP) or that may hold scripts (SVG), is replaced by its
alt text. The XHTML keeps a known set of elements and attributes: scripts,
styles, forms and frames are dropped, and links are made absolute (or point
to the post's chapter when the book holds it). No font, size or writing
direction is set: Chinese text and vertical writing are the reader's choice.
"""

import json
import re
import uuid
from collections import Counter
from datetime import UTC, datetime
from itertools import groupby
from typing import IO, Any
from urllib.parse import urljoin, urlsplit

import markdown
from ebooklib import epub
from lxml import html
from lxml.html import builder as E
from sqlite_utils import Database
from w3lib.url import safe_url_string

from archive.core.dates import parse_date
from archive.core.urls import normalize_url, parse_url
from archive.tables.captures import load_body
from archive.tables.media import OK, post_media

EMBEDDED_TYPES = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif"}  # EPUB 3.2's core image types
KEPT_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code", "em", "strong", "b", "i",
    "u", "s", "del", "ins", "sub", "sup", "small", "mark", "q", "cite", "abbr", "kbd", "samp", "var", "span",
    "div", "a", "img", "ul", "ol", "li", "dl", "dt", "dd", "table", "thead", "tbody", "tfoot", "tr", "th", "td",
    "caption", "figure", "figcaption", "ruby", "rt", "rp",
}
DROPPED_TAGS = {  # with all they hold
    "script", "noscript", "style", "template", "iframe", "frame", "frameset", "object", "embed", "applet",
    "form", "input", "button", "select", "textarea", "video", "audio", "canvas", "svg", "math", "head", "title",
}
KEPT_ATTRS = {"href", "src", "alt", "title"}
LINK_SCHEMES = {"http", "https", "mailto"}
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")  # characters XML 1.0 cannot hold
UNDATED = "undated"


def export_epub(db: Database, out: str | IO[bytes], *, source: str, since: str | None = None) -> int:
    """Write the posts of the source named ``source`` (published since ``since``) as an EPUB 3 book;
    return the chapters written.

    Raises:
        ValueError: no source has that name, ``since`` is not a date, or it has no post to put in a book.
    """
    found = list(db.query("select * from sources where name = ?", [source]))
    if not found:
        raise ValueError(f"no source named {source!r}")
    since_at = parse_date(since) if since else None
    if since and since_at is None:
        raise ValueError(f"not a date: {since!r}")
    blog = found[0]
    posts = list(db.query(
        "select * from posts where source_id = ?" + (" and published >= ?" if since_at else "")
        + " order by published is null, published, id", [blog["id"], since_at] if since_at else [blog["id"]]))
    if not posts:
        raise ValueError(f"{source} has no post" + (f" published since {since}" if since else "") + " to make a book of")
    book = _book(blog, posts)
    chapters = {p["url"]: f"post-{i:04d}.xhtml" for i, p in enumerate(posts, 1)}  # by the post's own URL
    images: dict[int, str] = {}  # media id -> its file in the book
    made = [_chapter(db, book, post, chapters, images) for post in posts]
    book.toc = [(epub.Section(year, href=items[0].file_name), items)
                for year, items in ((y, list(g)) for y, g in groupby(made, key=lambda c: c.year))]
    book.spine = ["nav", *made]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    epub.write_epub(out, book, {"mtime": datetime.now(UTC), "raise_exceptions": True})
    return len(made)


def _book(blog: dict[str, Any], posts: list[dict[str, Any]]) -> epub.EpubBook:
    """The book and its metadata: the blog's title, URL, language and authors."""
    book = epub.EpubBook()
    book.set_identifier(book_identifier(blog["url"]))
    book.set_title(xml_text(blog.get("title") or blog["name"]))
    langs = Counter(p["lang"] for p in posts if p["lang"])
    book.set_language(langs.most_common(1)[0][0] if langs else "und")
    for i, author in enumerate(dict.fromkeys(p["author"] for p in posts if p["author"]), 1):
        book.add_author(xml_text(author), uid=f"creator-{i}")
    book.add_metadata("DC", "source", blog["url"])
    book.add_metadata("DC", "publisher", "blogarchive")
    book.add_metadata("DC", "description", f"{len(posts)} posts of {blog.get('site_url') or blog['url']}, "
                                           "from the archive")
    return book


class Chapter(epub.EpubHtml):
    """A post's chapter, with the year it sits under in the table of contents."""

    year: str


def _chapter(db: Database, book: epub.EpubBook, post: dict[str, Any], chapters: dict[str, str],
             images: dict[int, str]) -> Chapter:
    title = xml_text(post["title"] or post["url"])
    chapter = Chapter(title=title, file_name=chapters[post["url"]], lang=post["lang"] or None)
    chapter.year = (post["published"] or "")[:4] or UNDATED
    embedded = {}  # the post's archived images, by URL: their files in the book
    for medium in post_media(db, post["id"]):
        if medium["status"] == OK and medium["content_type"] in EMBEDDED_TYPES and medium["kind"] == "image":
            if medium["id"] not in images and (data := load_body(db, medium["sha256"])):
                images[medium["id"]] = f"images/{medium['id']}.{EMBEDDED_TYPES[medium['content_type']]}"
                book.add_item(epub.EpubImage(uid=f"image-{medium['id']}", file_name=images[medium["id"]],
                                             media_type=medium["content_type"], content=data))
            if medium["id"] in images:
                embedded[medium["url"]] = (images[medium["id"]], medium["alt"] or "")
    body = _body(post, chapters, embedded)
    if body and body[0].tag in ("h1", "h2") and body[0].text_content().strip() == title.strip():
        body = body[1:]  # the title, which the Markdown often begins with
    article = E.DIV(E.H1(title), _about(post), *body)
    chapter.content = "<html><body>" + html.tostring(article, encoding="unicode") + "</body></html>"
    book.add_item(chapter)
    return chapter


def _about(post: dict[str, Any]) -> Any:
    """The post's author, dates, tags and original URL, as a definition list."""
    about = E.DL()
    tags = ", ".join(json.loads(post["tags"] or "[]"))
    for label, value in (("Author", post["author"]), ("Published", post["published"]), ("Updated", post["updated"]),
                         ("Tags", tags), ("Removed from the blog", post.get("gone_at"))):
        if value:
            about.append(E.DT(label))
            about.append(E.DD(xml_text(value)))
    about.append(E.DT("Original"))
    about.append(E.DD(E.A(xml_text(post["url"]), href=safe_url_string(post["url"]))))
    return about


def _body(post: dict[str, Any], chapters: dict[str, str], embedded: dict[str, tuple[str, str]]) -> list[Any]:
    """The post's Markdown as XHTML elements: kept tags and attributes only, links made absolute or
    to their chapter, images to their file in the book (those the Markdown does not show added at the end)."""
    source = xml_text(post["markdown"] or post["text"] or "")
    root = html.fragment_fromstring(markdown.markdown(source, extensions=["tables", "fenced_code"]) or "<p></p>",
                                    create_parent="div")
    shown = set()
    for element in list(root.iter()):
        if element is root:
            continue
        if not isinstance(element.tag, str) or element.tag in DROPPED_TAGS:
            element.drop_tree()
            continue
        if element.tag not in KEPT_TAGS:
            element.drop_tag()
            continue
        for name in set(element.attrib) - KEPT_ATTRS:
            del element.attrib[name]
        if element.tag == "a":
            _link(element, post["url"], chapters)
        elif element.tag == "img":
            shown.add(_image(element, post["url"], embedded))
    for url, (file_name, alt) in embedded.items():
        if url not in shown:
            root.append(E.P(E.IMG(src=file_name, alt=alt)))
    return list(root)


def _absolute(href: str, base: str) -> str | None:
    """``href`` read against the post's URL, normalised; None when it is no URL."""
    url = parse_url(href.strip(), base)
    return normalize_url(url) if url else None


def _link(a: Any, base: str, chapters: dict[str, str]) -> None:
    """The link to its chapter when the book holds that post, else absolute; none for other schemes."""
    href = a.attrib.pop("href", None)
    if not href:
        return
    target = urljoin(base, href.strip())
    if urlsplit(target).scheme not in LINK_SCHEMES:
        return
    url = _absolute(href, base)
    a.set("href", chapters.get(url or "") or safe_url_string(target))


def _image(img: Any, base: str, embedded: dict[str, tuple[str, str]]) -> str | None:
    """Point the image at its file in the book, or put its alt text in its place; the URL it showed."""
    url = _absolute(img.get("src") or "", base)
    if url in embedded:
        img.set("src", embedded[url][0])
        img.set("alt", img.get("alt") or embedded[url][1])
        return url
    alt = img.get("alt") or ""
    if alt:
        img.addprevious(E.SPAN(alt))
    img.drop_tree()
    return None


def xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold."""
    return NOT_XML.sub("", text)


def book_identifier(url: str) -> str:
    """The EPUB's ``dc:identifier`` for the blog at ``url``: a UUID made from it, the same in every export."""
    return uuid.uuid5(uuid.NAMESPACE_URL, url).urn
