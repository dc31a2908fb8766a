"""Metadata candidates: every title, author, date and tag a page or feed offers, with its origin.

The order of each list is the order of trust: the first candidate that
parses wins (``crawler.extract`` does the choosing and keeps the rest as
provenance).
"""

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urljoin, urlsplit

from parsel import Selector

from .pages import ARTICLE_TYPES, ld_nodes, url_date, visible_date

SEPARATOR = re.compile(r"\s+[|\-–—·»]\s+")
TAG_FOLDERS = {"tag", "tags", "t"}  # /tags/NAME/, /t/NAME, /tags/#name, ?tag=NAME
CATEGORY_FOLDERS = {"category", "categories", "cat"}
# Site furniture: menus, sidebars, headers and footers, by element or by id/class.
BOILERPLATE = " or ".join(
    ["self::nav", "self::header", "self::footer", "self::aside"]
    + [f'contains(translate(@id, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"), "{w}")'
       f' or contains(translate(@class, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"), "{w}")'
       for w in ("menu", "nav", "sidebar", "widget", "footer", "header")]
)


@dataclass
class Candidate:
    field: str  # title, author, published, updated, tags, categories
    value: Any  # a string, or a list of strings for tags and categories
    origin: str  # where it was read: "feed", "og:title", "JSON-LD", ...


def candidates(sel: Selector, url: str, entry: dict[str, Any], *, site_name: str | None) -> list[Candidate]:
    """Every metadata candidate of a page and its feed entry, most trusted first per field."""
    ld = _ld_article(sel)
    found: list[tuple[str, Any, str]] = [
        ("title", entry.get("title"), "feed"),
        ("title", _meta(sel, "og:title"), "og:title"),
        ("title", ld.get("headline"), "JSON-LD headline"),
        ("title", _meta(sel, "twitter:title", "name"), "twitter:title"),
        ("title", _single_h1(sel), "<h1>"),
        ("title", strip_site_name(sel.xpath("string(//title)").get(), site_name or _meta(sel, "og:site_name")), "<title>"),
        ("author", entry.get("author"), "feed"),
        ("author", _ld_author(ld), "JSON-LD author"),
        ("author", _meta(sel, "author", "name"), "meta author"),
        ("author", sel.xpath('string(//a[@rel="author"][1])').get(), "rel=author"),
        ("published", entry.get("published"), "feed"),
        ("published", ld.get("datePublished"), "JSON-LD datePublished"),
        ("published", _meta(sel, "article:published_time"), "article:published_time"),
        ("published", sel.xpath('//*[@itemprop="datePublished"]/@content | //*[@itemprop="datePublished"]/@datetime').get(), "itemprop datePublished"),
        ("published", sel.xpath("(//article//time/@datetime | //main//time/@datetime)[1]").get(), "<time datetime>"),
        ("published", visible_date(sel), "visible date"),
        ("published", url_date(url), "URL date"),
        ("updated", entry.get("updated"), "feed"),
        ("updated", ld.get("dateModified"), "JSON-LD dateModified"),
        ("updated", _meta(sel, "article:modified_time"), "article:modified_time"),
        ("updated", _meta(sel, "og:updated_time"), "og:updated_time"),
    ]
    page_tags, page_categories = _term_links(sel, url)
    feed_tags = entry.get("tags") or []
    known_categories = {c.lower() for c in page_categories}
    found += [
        ("tags", sel.xpath('//meta[@property="article:tag"]/@content').getall(), "article:tag"),
        ("tags", page_tags, "tag links"),
        ("tags", _keywords(ld.get("keywords")), "JSON-LD keywords"),
        ("tags", [t for t in feed_tags if t.lower() not in known_categories], "feed"),
        ("categories", page_categories, "category links"),
        ("categories", [t for t in feed_tags if t.lower() in known_categories], "feed"),
    ]
    return [Candidate(f, _clean(v), o) for f, v, o in found if _clean(v)]


def strip_site_name(title: str | None, site_name: str | None) -> str | None:
    """``title`` without the blog's name before or after a separator."""
    title = " ".join((title or "").split())
    if not title or not site_name:
        return title or None
    parts = SEPARATOR.split(title)
    kept = [p for p in parts if p.strip().lower() != site_name.strip().lower()]
    return " - ".join(kept) if kept and len(kept) < len(parts) else title


def title_edges(title: str | None) -> list[str]:
    """The first and last separated parts of a ``<title>``: where site names sit."""
    parts = SEPARATOR.split(" ".join((title or "").split()))
    return [parts[0], parts[-1]] if len(parts) > 1 else []


def _clean(value: Any) -> Any:
    if isinstance(value, list):
        out: dict[str, None] = {}
        for item in value:
            item = " ".join(str(item).split()).lstrip("#")
            if item and item.lower() not in {k.lower() for k in out}:
                out[item] = None
        return list(out)
    return " ".join(str(value).split()) if value else None


def _meta(sel: Selector, name: str, attr: str = "property") -> str | None:
    return sel.xpath(f'//meta[@{attr}="{name}"]/@content').get()


def _texts(nodes: Any) -> list[str]:
    return [t for t in (" ".join(n.xpath("string()").get().split()) for n in nodes) if t]


def _single_h1(sel: Selector) -> str | None:
    h1s = _texts(sel.xpath("//h1"))
    return h1s[0] if len(h1s) == 1 else None


def _term_links(sel: Selector, url: str) -> tuple[list[str], list[str]]:
    """Tags and categories the post links to: ``/tags/NAME``, ``/tags/#name``, ``?tag=NAME``.

    Only links within the blog count, and only in the article when there is one.
    When a page marks some of them ``rel=tag``, the unmarked ones are navigation
    (a sidebar's tag cloud) and are left out.
    """
    article = sel.xpath("(//article)[1]")
    # Inside an <article>, its own header and footer hold the post's terms;
    # without one, menus, sidebars, headers and footers are site furniture.
    links = article.xpath(".//a[@href]") if article else sel.xpath(f"//a[@href][not(ancestor::*[{BOILERPLATE}])]")
    host = urlsplit(url).netloc
    found: dict[str, list[tuple[str, bool]]] = {"tags": [], "categories": []}
    for link in links:
        href = urlsplit(urljoin(url, link.attrib["href"]))
        text = " ".join(link.xpath("string()").get().split()).lstrip("#").strip()
        if href.netloc != host or not text:
            continue
        rel = (link.attrib.get("rel") or "").lower().split()
        segments = [unquote(s).lower() for s in href.path.split("/") if s]
        folder = segments[-1] if href.fragment and segments else (segments[-2] if len(segments) > 1 else "")
        params = {k.lower() for k, _ in parse_qsl(href.query)}
        folder = folder or next((p for p in params if p in TAG_FOLDERS | CATEGORY_FOLDERS), "")
        if folder in CATEGORY_FOLDERS or ("category" in rel and folder not in TAG_FOLDERS):
            found["categories"].append((text, bool(rel)))
        elif folder in TAG_FOLDERS or "tag" in rel:
            found["tags"].append((text, "tag" in rel))
    tags, categories = (
        [text for text, marked in links if marked or not any(m for _, m in links)]
        for links in (found["tags"], found["categories"])
    )
    return tags, categories


def _ld_article(sel: Selector) -> dict[str, Any]:
    for script in sel.xpath('//script[@type="application/ld+json"]/text()').getall():
        for node in ld_nodes(script):
            t = node.get("@type")
            if set(t if isinstance(t, list) else [t]) & ARTICLE_TYPES:
                return node
    return {}


def _ld_author(ld: dict[str, Any]) -> str | None:
    author = ld.get("author")
    if isinstance(author, list):
        author = author[0] if author else None
    if isinstance(author, dict):
        return author.get("name")
    return author if isinstance(author, str) else None


def _keywords(value: Any) -> list[str]:
    if isinstance(value, str):
        return [k for k in re.split(r"\s*,\s*", value) if k]
    return [str(k) for k in value] if isinstance(value, list) else []


