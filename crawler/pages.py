"""Post or not? Evidence read from a page and its URL, and the decision.

Everything here is pure: it reads a parsel ``Selector`` and URLs, never the
network or the archive.
"""

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlsplit

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
    "archive", "archives", "page", "search", "label", "labels", "topic", "topics",
    "feed", "comments", "wp-json", "wp-admin", "wp-login.php",
}
PAGE_SLUGS = {
    "about", "about-me", "about-us", "contact", "contact-me", "privacy",
    "privacy-policy", "imprint", "impressum", "legal", "terms", "login", "register",
    "signup", "subscribe", "sitemap", "links", "friends", "404", "guestbook",
    "resume", "cv", "donate", "now", "uses",
}
PAGINATION = re.compile(r"^page-?\d+$|^index\d+\.html?$", re.I)
PAGE_PARAMS = {"page", "paged", "start", "offset"}
DIGITS = re.compile(r"\d")


@dataclass
class PageEvidence:
    og_type: str | None = None
    ld_types: list[str] = field(default_factory=list)
    published: str | None = None  # raw value of the first machine-readable publish date
    canonical: str | None = None
    refresh: str | None = None  # target of <meta http-equiv="refresh">
    articles: int = 0  # number of <article> elements
    lang: str | None = None  # <html lang>

    @property
    def ld_article(self) -> bool:
        return any(t in ARTICLE_TYPES for t in self.ld_types)


def read_evidence(sel: Selector) -> PageEvidence:
    """Read the machine-readable signals of a page."""
    ev = PageEvidence()
    ev.og_type = (sel.xpath('//meta[@property="og:type"]/@content').get() or "").strip().lower() or None
    for script in sel.xpath('//script[@type="application/ld+json"]/text()').getall():
        ev.ld_types.extend(_ld_types(script))
    ev.published = (
        sel.xpath('//meta[@property="article:published_time"]/@content').get()
        or _ld_date(sel)
        or sel.xpath('//article//time/@datetime').get()
    )
    ev.canonical = sel.xpath('//link[@rel="canonical"]/@href').get()
    refresh = sel.xpath(
        '//meta[translate(@http-equiv,"REFSH","refsh")="refresh"]/@content'
    ).get()
    if refresh and "url=" in refresh.lower():
        ev.refresh = refresh[refresh.lower().index("url=") + 4 :].strip(" '\"")
    ev.articles = len(sel.xpath("//article"))
    ev.lang = (sel.xpath("/html/@lang").get() or "").strip() or None
    return ev


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


def _ld_types(script: str) -> list[str]:
    types = []
    for node in ld_nodes(script):
        t = node.get("@type")
        types.extend(t if isinstance(t, list) else [t] if isinstance(t, str) else [])
    return types


def _ld_date(sel: Selector) -> str | None:
    for script in sel.xpath('//script[@type="application/ld+json"]/text()').getall():
        for node in ld_nodes(script):
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
    for seg in segments:
        if seg in LISTING_SEGMENTS:
            return f"a listing URL (/{seg}/)"
    if segments and PAGINATION.match(segments[-1]):
        return "a paginated listing"
    if segments and segments[-1].rsplit(".", 1)[0] in PAGE_SLUGS:
        return f"a site page (/{segments[-1]}/)"
    return None


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
    evidence = [
        name
        for name, present in (
            ("listed in a feed", in_feed),
            ("og:type article", ev.og_type == "article"),
            ("JSON-LD " + "/".join(t for t in ev.ld_types if t in ARTICLE_TYPES), ev.ld_article),
        )
        if present
    ]
    if not evidence:
        if dated_text and ev.articles <= 1:
            evidence = ["an article body with a publish date"]
        else:
            return "page", "no post evidence (no feed entry, og:type, JSON-LD or dated article)"
    minor = sections.minor_section(url_shape(url, scope))
    if minor:
        return "page", minor
    return "post", ", ".join(evidence)
