"""Post or not? Evidence read from a page and its URL, and the decision.

Everything here is pure: it reads a parsel ``Selector`` and URLs, never the
network or the archive.
"""

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlsplit

from lxml import etree
from parsel import Selector

ARTICLE_TYPES = {
    "Article",
    "BlogPosting",
    "NewsArticle",
    "TechArticle",
    "ScholarlyArticle",
    "Report",
    "SocialMediaPosting",
    "LiveBlogPosting",
}
# Path segments that name listings or site furniture, in the usual English
# and Chinese blog engines (WordPress, Ghost, Typecho, Hexo, Hugo, Jekyll).
LISTING_SEGMENTS = {
    "tag", "tags", "t", "category", "categories", "cat", "author", "authors",
    "page", "search", "label", "labels", "topic", "topics",
    "feed", "comments", "wp-json", "wp-admin", "wp-login.php",
}
# Archive folders list posts by date (/archives/2024/07/), but WordPress and
# Typecho also keep posts in them (/archives/123, /archives/123.html).
ARCHIVE_SEGMENTS = {"archive", "archives"}
PAGE_SLUGS = {
    "about", "about-me", "about-us", "contact", "contact-me", "privacy",
    "privacy-policy", "imprint", "impressum", "legal", "terms", "login", "register",
    "signup", "subscribe", "sitemap", "links", "friends", "404", "guestbook",
    "resume", "cv", "donate", "now", "uses",
}
PAGINATION = re.compile(r"^page-?\d+$|^index\d+\.html?$", re.I)
PAGE_PARAMS = {"page", "paged", "start", "offset"}
DIGITS = re.compile(r"\d")
# The whole text of a teaser's link on a listing page, in the usual languages.
READ_MORE = re.compile(
    r"^(read more|continue reading|more|more\.\.\.|read the rest|keep reading|read full (post|article)|"
    r"阅读全文|继续阅读|阅读更多|查看全文|read note|続きを読む|weiterlesen|lire la suite|leer más)\s*[»›→…>.]*$",
    re.I,
)
URL_DATE = re.compile(r"/((?:19|20)\d{2})/(0?[1-9]|1[0-2])/(0?[1-9]|[12]\d|3[01])/")
CJK_DATE_TEXT = re.compile(r"\d{4}\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*日(?:\s*\d{1,2}[:：]\d{2})?")


@dataclass
class PageEvidence:
    og_type: str | None = None
    ld_types: list[str] = field(default_factory=list)
    published: str | None = None  # raw value of the first machine-readable publish date
    canonical: str | None = None
    refresh: str | None = None  # target of <meta http-equiv="refresh">
    articles: int = 0  # number of <article> elements
    lang: str | None = None  # <html lang>
    read_more: int = 0  # links named "Read more", "阅读全文" ...: a listing's teasers
    visible_date: str | None = None  # a date written out, such as 2024年7月30日

    @property
    def ld_article(self) -> bool:
        return any(t in ARTICLE_TYPES for t in self.ld_types)


# Compiled once: XPath on the lxml tree costs a fraction of parsel's per-node Selectors.
_OG_TYPE = etree.XPath('//meta[@property="og:type"]/@content')
_LD_JSON = etree.XPath('//script[@type="application/ld+json"]/text()')
_PUBLISHED = etree.XPath('//meta[@property="article:published_time"]/@content')
_ARTICLE_TIME = etree.XPath("//article//time/@datetime")
_CANONICAL = etree.XPath('//link[@rel="canonical"]/@href')
_REFRESH = etree.XPath('//meta[translate(@http-equiv,"REFSH","refsh")="refresh"]/@content')
_ARTICLES = etree.XPath("count(//article)")
_LANG = etree.XPath("/html/@lang")
_LINK_TEXTS = etree.XPath("//a")
_DATE_SCOPES = (etree.XPath("//article"), etree.XPath("//main"), etree.XPath("//body"))


def read_evidence(sel: Selector) -> PageEvidence:
    """Read the machine-readable signals of a page."""
    root = sel.root
    ev = PageEvidence()
    ev.og_type = _first(_OG_TYPE(root)).strip().lower() or None
    ld = [node for script in _LD_JSON(root) for node in ld_nodes(script)]
    for node in ld:
        t = node.get("@type")
        ev.ld_types.extend(t if isinstance(t, list) else [t] if isinstance(t, str) else [])
    ev.published = _first(_PUBLISHED(root)) or _ld_date(ld) or _first(_ARTICLE_TIME(root)) or None
    ev.canonical = _first(_CANONICAL(root)) or None
    refresh = _first(_REFRESH(root))
    if refresh and "url=" in refresh.lower():
        ev.refresh = refresh[refresh.lower().index("url=") + 4 :].strip(" '\"")
    ev.articles = int(_ARTICLES(root))
    ev.lang = page_lang(sel)
    ev.read_more = sum(bool(READ_MORE.match(" ".join(a.xpath("string()").split()))) for a in _LINK_TEXTS(root))
    ev.visible_date = visible_date(sel)
    return ev


def page_lang(sel: Selector) -> str | None:
    """The language ``<html lang>`` declares, or None."""
    return _first(_LANG(sel.root)).strip() or None


def _first(values: list) -> str:
    return str(values[0]) if values else ""


def visible_date(sel: Selector) -> str | None:
    """A date the article writes out in words, such as 2024年7月30日."""
    for path in _DATE_SCOPES:
        scope = path(sel.root)
        if scope:
            match = CJK_DATE_TEXT.search(scope[0].xpath("string()"))
            return match.group(0) if match else None
    return None


def url_date(url: str) -> str | None:
    """The ``YYYY-MM-DD`` of a ``/YYYY/MM/DD/`` URL."""
    match = URL_DATE.search(url)
    return "-".join(f"{int(g):02d}" for g in match.groups()) if match else None


def ld_nodes(script: str) -> list[dict]:
    try:
        data = json.loads(script)
    except ValueError:
        return []
    nodes = data if isinstance(data, list) else [data]
    out = []
    for node in nodes:
        if isinstance(node, dict):
            out.extend(n for n in node.get("@graph", [node]) if isinstance(n, dict))
    return out


def _ld_date(nodes: list[dict]) -> str | None:
    for node in nodes:
        t = node.get("@type")
        if (t if isinstance(t, list) else [t])[0] in ARTICLE_TYPES and node.get("datePublished"):
            return str(node["datePublished"])
    return None


def in_scope(url: str, scope: str) -> bool:
    """True when ``url`` lies under the blog's scope prefix."""
    return url.startswith(scope) or url == scope.rstrip("/")


def listing_reason(url: str, scope: str) -> str | None:
    """Why the URL alone shows a listing or a site page, or None."""
    parts = urlsplit(url)
    rel = unquote(parts.path)[len(urlsplit(scope).path) :].strip("/")
    if not rel and not parts.query:
        return "the blog's home page"
    if PAGE_PARAMS & set(parse_qs(parts.query)):
        return "a paginated listing (page parameter)"
    segments = [s.lower() for s in rel.split("/") if s]
    for i, seg in enumerate(segments):
        if seg in LISTING_SEGMENTS:
            return f"a listing URL (/{seg}/)"
        if seg in ARCHIVE_SEGMENTS and (_is_date_path(segments[i + 1 :]) or _is_page_path(segments[i + 1 :])):
            return f"a listing URL (/{seg}/)"
    if _is_date_path(segments) and segments:
        return "a date archive"
    if segments and PAGINATION.match(segments[-1]):
        return "a paginated listing"
    if segments and segments[-1].rsplit(".", 1)[0] in PAGE_SLUGS:
        return f"a site page (/{segments[-1]}/)"
    return None


def _is_date_path(segments: list[str]) -> bool:
    """``[]``, ``[2024]``, ``[2024, 07]`` or ``[2024, 07, 30]``."""
    if not segments:
        return True
    year, rest = segments[0], segments[1:]
    return (len(year) == 4 and year.isdigit() and 1990 <= int(year) <= 2100 and len(rest) <= 2
            and all(s.isdigit() and len(s) <= 2 for s in rest))


def _is_page_path(segments: list[str]) -> bool:
    return len(segments) == 2 and segments[0] == "page" and segments[1].isdigit()


def url_shape(url: str, scope: str) -> str:
    """The URL's pattern: folders kept, digits masked, the last segment a ``*``."""
    rel = unquote(urlsplit(url).path)[len(urlsplit(scope).path) :].strip("/")
    segments = rel.split("/")
    head = [DIGITS.sub("9", s) if DIGITS.search(s) and s.isdigit() else s.lower() for s in segments[:-1]]
    ext = segments[-1].rsplit(".", 1)[1] if "." in segments[-1] else ""
    return "/".join([*head, "*" + (f".{ext}" if ext else "")])


@dataclass
class SectionStats:
    """How many known posts (feed entries) each URL shape holds in one blog."""

    shapes: Counter = field(default_factory=Counter)
    min_share: float = 0.2  # a shape under this share of the largest is a site section

    def add(self, shape: str) -> None:
        self.shapes[shape] += 1

    def minor_section(self, shape: str) -> str | None:
        """A reason when ``shape`` is a small section beside the blog's posts."""
        count = self.shapes.get(shape, 0)
        if not count or sum(self.shapes.values()) < 5:
            return None
        top_shape, top = self.shapes.most_common(1)[0]
        if count < self.min_share * top:
            return f"its URL shape {shape} holds {count} feed entries against {top} in {top_shape}"
        return None


def decide(
    url: str, scope: str, ev: PageEvidence, *, in_feed: bool, dated_text: bool, sections: SectionStats
) -> tuple[str, str]:
    """Classify a page as ``post``, ``listing``, ``page`` or ``alias``, with the reason."""
    if ev.refresh:
        return "alias", f"meta refresh to {ev.refresh}"
    reason = listing_reason(url, scope)
    if reason:
        return ("page" if reason.startswith("a site page") else "listing"), reason
    if ev.og_type and ev.og_type != "article" and not (in_feed and ev.ld_article):
        return "page", f"og:type is {ev.og_type}"
    if ev.read_more and not in_feed:
        return "listing", f"{ev.read_more} \"read more\" links to other pages"
    evidence = [
        name
        for name, present in (
            ("listed in a feed", in_feed),
            ("og:type article", ev.og_type == "article"),
            ("JSON-LD " + "/".join(t for t in ev.ld_types if t in ARTICLE_TYPES), ev.ld_article),
        )
        if present
    ]
    shape = url_shape(url, scope)
    if not evidence and sections.shapes.get(shape, 0) >= 2:
        evidence = [f"its URL shape {shape} holds {sections.shapes[shape]} feed entries"]
    if not evidence:
        if dated_text and ev.articles <= 1:
            evidence = ["an article body with a publish date"]
        else:
            return "page", "no post evidence (no feed entry, og:type, JSON-LD or dated article)"
    minor = sections.minor_section(shape)
    if minor:
        return "page", minor
    return "post", ", ".join(evidence)
