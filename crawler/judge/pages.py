"""Post or not? Evidence read from a page and its URL, and the decision.

Everything here is pure: it reads a parsel ``Selector`` and URLs, never the
network or the archive.
"""

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any
from urllib.parse import parse_qs, parse_qsl, unquote, urlsplit

from lxml import etree
from parsel import Selector

from archive.core.dates import parse_date
from archive.core.urls import HASH_ROUTE

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
FILE_EXTENSION = re.compile(r"^[a-z][a-z0-9]{0,4}$")
# The whole text of a teaser's link on a listing page, in the usual languages.
READ_MORE = re.compile(
    r"^(read more|continue reading|more|more\.\.\.|read the rest|keep reading|read full (post|article)|"
    r"阅读全文|继续阅读|阅读更多|查看全文|read note|続きを読む|weiterlesen|lire la suite|leer más)\s*[»›→…>.]*$",
    re.I,
)
URL_DATE = re.compile(r"/((?:19|20)\d{2})/(0?[1-9]|1[0-2])/(0?[1-9]|[12]\d|3[01])/")
MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
# A date as blogs write it out: 2024年7月30日, 2024-07-30 10:20, 2024/7/30, July 30, 2024, 30 Jul 2024.
DATE_TEXT = re.compile(
    r"(?:19|20)\d{2}\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*[日号]?(?:\s*\d{1,2}[:：]\d{2}(?:[:：]\d{2})?)?"
    r"|(?<!\d)(?:19|20)\d{2}([-/.])\d{1,2}\1\d{1,2}(?:[T\s]+\d{1,2}:\d{2}(?::\d{2})?(?:\s*[+-]\d{2}:?\d{2})?)?(?!\d)"
    rf"|\b{MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+(?:19|20)\d{{2}}\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{MONTHS},?\s+(?:19|20)\d{{2}}\b",
    re.I,
)
# Words that say the date after them is the publish date, or that it is not.
LABEL = (r"(?:\b(?:posted|published|publish date|written|created|date)|发布于|发表于|发布时间|发表时间|发布日期|创建于|"
         r"创建时间|日期|时间|写于|公開日|投稿日|作成日|作成|投稿)\W{0,3}(?:on|at|于)?")
PUBLISHED_LABEL = re.compile(LABEL + r"\W{0,3}$", re.I)
NOT_PUBLISHED = re.compile(r"update|modified|edited|revised|更新|修改|编辑|最后|最終|更新日", re.I)
# A short element whose class or id marks metadata holds an unlabelled date near the title.
META_MARK = re.compile(r"date|time|meta|posted|publish|byline|info|entry-footer|post-footer", re.I)
MAX_META_CHARS = 160
# Text nodes holding a year read at most for a page's visible date: a post shows a few dozen,
# while each costs a look at its holder (a page of 500,000 dated links would take minutes).
MAX_DATE_NODES = 1000
LISTING_LINKS = 5  # posts of the feeds a page's content links to: a listing, unless a feed lists it
LANGUAGE_PREFIX = re.compile(r"^[a-z]{2}(?:[-_][a-z]{2,4})?$", re.I)  # /en/, /zh-cn/, /pt_BR/
ENTRY_CHARS = 400  # of an entry of a list of posts: its title, date, byline and a line of teaser at most
PROSE_CHARS = 60  # of a paragraph's text besides its links: a sentence, where a listing's entry has a date or a byline
SITE_PAGE_DATED = 3  # dated entries of a blog's feeds before an undated one alone in its shape is a site page
SECTION_LINKS = 3  # pages below its own folder a page's content links to: a section's index
LISTING_DATES = 3  # distinct dates shown by titles and bylines: a list of posts, not one
HOME = "the blog's home page"
DAY_ARCHIVE = "a date archive (one day)"


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
    read_more_hrefs: list[str] = field(default_factory=list)  # where they lead (the spider counts the blog's own)
    teaser_hrefs: list[str] = field(default_factory=list)  # of those, where another link of the page leads too (a title's)
    visible_date: str | None = None  # a date written out by the title or byline: 发布于 2024-07-30
    title: str | None = None  # the <title>
    site_name: str | None = None  # og:site_name
    headings: list[str] = field(default_factory=list)  # the texts of the <h1>s
    keywords: str | None = None  # <meta name="keywords">

    @property
    def ld_article(self) -> bool:
        return any(t in ARTICLE_TYPES for t in self.ld_types)


# Compiled once: XPath on the lxml tree costs a fraction of parsel's per-node Selectors.
_OG_TYPE = etree.XPath('//meta[@property="og:type"]/@content')
_LD_JSON = etree.XPath('//script[@type="application/ld+json"]/text()')
_PUBLISHED = etree.XPath('//meta[@property="article:published_time" or @property="og:article:published_time"]/@content')
_CANONICAL = etree.XPath('//link[@rel="canonical"]/@href')
_REFRESH = etree.XPath('//meta[translate(@http-equiv,"REFSH","refsh")="refresh"]/@content')
_ARTICLES = etree.XPath("count(//article)")
_LANG = etree.XPath("/html/@lang")
_LINK_TEXTS = etree.XPath("//a")
_TITLE = etree.XPath("string(//title)")
_SITE_NAME = etree.XPath('//meta[@property="og:site_name"]/@content')
_H1 = etree.XPath("//h1")
_KEYWORDS = etree.XPath('//meta[@name="keywords"]/@content')
_ARTICLE_TIMES = etree.XPath("//article//time[@datetime] | //main//time[@datetime]")
_TIMES = etree.XPath("//body//time[@datetime]")
_SKIPPED = "script", "style", "pre", "code", "nav", "aside", "blockquote", "textarea", "select"
_DATE_NODES = etree.XPath(
    "//body//text()[re:test(., '(19|20)[0-9][0-9]')]"
    f"[not(ancestor::*[{' or '.join(f'self::{t}' for t in _SKIPPED)}])]",
    namespaces={"re": "http://exslt.org/regular-expressions"},
)
# A class or id (one token of it) of what holds other posts or the site's parts: sidebars,
# menus, comments, prev/next cards. Layout modifiers ("sidebar-position-right") are not.
FURNITURE_TOKEN = re.compile(  # a page's state ("no-sidebar", "has-menu") is not furniture
    r"^(?!(?:no|has|with|without|show|hide|is|use)[-_])(?:[a-z0-9]+[-_]+)?(?:sidebar|widgets?|menu|comments?|related|recent|archives?|recommend\w*|prenext|pager|"
    r"reward\w*|donate\w*|sponsor\w*|"
    r"pagination|nav\w*|(?:prev(?:ious)?|next)[-_]?(?:posts?|articles?|links?|next)|(?:post|article)[-_]?(?:prev|next))"
    r"(?:[-_]+(?:wrap\w*|inner|container|box|list|area|section|panel|posts?|items?|links?|content|main|widget|"
    r"body|mask|modal|relative|btn|button))?$",
    re.I,
)


TAG_FOLDERS = {"tag", "tags", "t"}  # /tags/NAME/, /t/NAME, /tags/#name, ?tag=NAME
CATEGORY_FOLDERS = {"category", "categories", "cat"}  # and nested: /categories/A/B/


def term_kind(url: str) -> str | None:
    """``tags`` or ``categories`` when ``url`` is a tag's or a category's page (its nearest
    folder says so), else None."""
    try:
        parts = urlsplit(url)
    except ValueError:  # no URL: no term's page
        return None
    segments = [unquote(s).lower().removesuffix(".html").removesuffix(".htm") for s in parts.path.split("/") if s]
    folders = segments if parts.fragment else segments[:-1]  # tags.html#name lists what /tags/name/ would
    params = [k.lower() for k, _ in parse_qsl(parts.query)]
    for folder in [*reversed(folders), *params]:
        if folder in TAG_FOLDERS:
            return "tags"
        if folder in CATEGORY_FOLDERS:
            return "categories"
    return None


def marks(el: etree._Element) -> str:
    """An element's class and id, as one string of tokens."""
    return f"{el.get('class', '')} {el.get('id', '')}"


def furniture_marked(el: etree._Element) -> bool:
    """Its class or id names a sidebar, a menu, comments, other posts' cards (an
    ``article-sidebar`` holds the post's own date and tags: not furniture). Inline
    elements never are: a highlighter's ``hljs-comment`` is a comment in code."""
    return el.tag not in INLINE and any(FURNITURE_TOKEN.match(t) and not POSTS_OWN_TOKEN.match(t)
               for t in marks(el).split())


def edge(el: etree._Element) -> bool:
    """A header or footer: the element, or a class or id such as ``header``, ``site-footer``;
    never a table's row of ``<th>`` cells, which Pandoc and others class ``header``."""
    if el.tag == "tr" and any(cell.tag == "th" for cell in el):
        return False
    return el.tag in ("header", "footer") or any(EDGE_TOKEN.match(t) for t in marks(el).split())


def site_furniture(el: etree._Element) -> bool:
    """A menu, a sidebar, a header or a footer, by element or by class or id."""
    return menu_or_sidebar(el) or edge(el)


def menu_or_sidebar(el: etree._Element) -> bool:
    """A menu, a sidebar, a widget or comments, by element or by class or id."""
    return el.tag in ("nav", "aside") or furniture_marked(el)


_LINKS = etree.XPath("//body//a[@href]")
INLINE = {"span", "code", "pre", "i", "b", "em", "strong", "small", "sup", "sub", "mark", "kbd", "samp", "var"}
POSTS_OWN_TOKEN = re.compile(r"^(?:post|article|entry)[-_]+(?:sidebar|widgets?|info|meta)", re.I)
EDGE_TOKEN = re.compile(r"^(?:[a-z0-9]+-)?(?:header|footer)$", re.I)


def read_evidence(sel: Selector, max_links: int = 10_000, furniture: frozenset[str] = frozenset()) -> PageEvidence:
    """Read the machine-readable signals of a page (of its links, the first ``max_links``), but
    the marks its blog's theme puts on every page (``furniture``, from ``article_marks`` of its home
    page): those say nothing of this one."""
    root = sel.root
    ev = PageEvidence()
    ev.og_type = _first(_OG_TYPE(root)).strip().lower() or None
    if ev.og_type and f"og:type {ev.og_type}" in furniture:
        ev.og_type = None
    ld = [node for script in _LD_JSON(root) for node in ld_nodes(script)]
    if LD_ARTICLE in furniture:
        ld = [node for node in ld if not (set(_ld_types(node)) & ARTICLE_TYPES)]
    for node in ld:
        ev.ld_types.extend(_ld_types(node))
    ev.published = _first(_PUBLISHED(root)) or _ld_date(ld) or time_datetime(root) or None
    ev.canonical = _first(_CANONICAL(root)) or None
    refresh = _first(_REFRESH(root))
    if refresh and "url=" in refresh.lower():
        ev.refresh = refresh[refresh.lower().index("url=") + 4 :].strip(" '\"")
    ev.articles = int(_ARTICLES(root))
    ev.lang = page_lang(sel)
    titled: set[str] = set()
    for a in islice(_LINK_TEXTS(root), max_links):
        if READ_MORE.match(" ".join(a.xpath("string()").split())):
            ev.read_more_hrefs.append(a.get("href") or "")
        else:
            titled.add(a.get("href") or "")
    ev.read_more = len(ev.read_more_hrefs)
    ev.teaser_hrefs = [href for href in ev.read_more_hrefs if href in titled]
    ev.visible_date = visible_date(sel)
    ev.title = " ".join(str(_TITLE(root)).split()) or None
    ev.site_name = _first(_SITE_NAME(root)).strip() or None
    ev.keywords = _first(_KEYWORDS(root)).strip() or None
    ev.headings = [t for t in (" ".join(h.xpath("string()").split()) for h in _H1(root)) if t]
    return ev


LD_ARTICLE = "JSON-LD article"


def article_marks(ev: PageEvidence) -> frozenset[str]:
    """The marks that call a page an article (``og:type article``, an article's JSON-LD). Read on
    a blog's home page, a list of posts, they are the theme's furniture: on every page, they say
    nothing of any (issue 48)."""
    return frozenset(({f"og:type {ev.og_type}"} if ev.og_type == "article" else set())
                     | ({LD_ARTICLE} if ev.ld_article else set()))


def _ld_types(node: dict) -> list[str]:
    t = node.get("@type")
    return t if isinstance(t, list) else [t] if isinstance(t, str) else []


def page_lang(sel: Selector) -> str | None:
    """The language ``<html lang>`` declares, or None."""
    return _first(_LANG(sel.root)).strip() or None


def _first(values: list) -> str:
    return str(values[0]) if values else ""


def visible_date(sel: Selector) -> str | None:
    """The publish date a page writes out by its title or byline, such as 发布于：2024-07-30.

    A date counts when a label says it is the publish date ("Posted on",
    "发布于", "日期") or when it stands alone in a short element marked as
    metadata (a ``<time>``, a ``post-meta`` or ``date`` class). A date in the
    article's own sentences, or labelled as an update, never counts; nor do
    the dates of a list of posts (a page showing several is a listing).
    """
    found: list[str] = []
    for node in islice(_DATE_NODES(sel.root), MAX_DATE_NODES):
        date = _labelled_date(node)
        if date and date not in found:
            found.append(date)
            if len(found) >= LISTING_DATES:
                return None
    return found[0] if found else _date_by_title(sel.root)


def _date_by_title(root: etree._Element) -> str | None:
    """A date standing alone in a short element just after the page's first ``<h1>``: its byline."""
    headings = _H1(root)
    if not headings:
        return None
    for el in (headings[0], headings[0].getparent()):
        if el is None:
            return None
        for sibling in el.itersiblings():
            if not isinstance(sibling.tag, str):
                continue
            text = " ".join(sibling.xpath("string()").split())
            if len(text) > MAX_META_CHARS or sibling.tag in ("ul", "ol", "table") or len(sibling.xpath(".//a")) > 1:
                break
            match = DATE_TEXT.search(text)
            if match and not NOT_PUBLISHED.search(text[: match.start()]):
                return match.group(0)
            if text:
                break
    return None


def _labelled_date(node: Any) -> str | None:
    """The publish date a text node of the page shows, in the smallest element that holds its label."""
    element = node.getparent()
    if not isinstance(element.tag, str):  # the text after an HTML comment: the comment's parent holds it
        element = element.getparent()
    if _list_entry(element):
        return None
    for holder in (element, element.getparent()):
        if holder is None or in_furniture(holder):
            break
        text = short_text(holder, MAX_META_CHARS)
        if text is None:
            break
        end = 0
        for match in DATE_TEXT.finditer(text):
            before = text[max(end, match.start() - 24) : match.start()]
            end = match.end()
            if NOT_PUBLISHED.search(before):
                continue
            if PUBLISHED_LABEL.search(before) or _marked_meta(holder):
                return match.group(0)
    return None


def short_text(el: etree._Element, limit: int) -> str | None:
    """``el``'s text, white space collapsed, or None when it is longer than ``limit``: read no
    further than that (the holder of a date or a byline may be the whole page, for each of its
    text nodes that holds a year or the word "by")."""
    parts, raw, check = [], 0, limit
    for piece in el.itertext():
        parts.append(piece)
        raw += len(piece)
        if raw > check:  # white space may make the raw text longer: look again at twice the length
            if len(" ".join("".join(parts).split())) > limit:
                return None
            check = 2 * raw
    return " ".join("".join(parts).split())


def time_datetime(root: etree._Element) -> str | None:
    """The ``datetime`` of the page's publish ``<time>``: in its article first, never an update's
    nor one of a sidebar's or a listing's entries."""
    for scope in (_ARTICLE_TIMES, _TIMES):
        for time in scope(root):
            marks = f"{time.get('class', '')} {time.get('itemprop', '')} {time.getparent().get('class', '')}"
            if NOT_PUBLISHED.search(marks) or in_furniture(time) or _list_entry(time):
                continue
            return time.get("datetime")
    return None


def lone_time(root: etree._Element) -> str | None:
    """The ``datetime`` of the page's only ``<time>``, wherever the theme put it (a post's sidebar
    of metadata): with no other date on the page, no listing's or widget's date can be mistaken
    for it. Never an update's."""
    times = _TIMES(root)
    if len(times) != 1:
        return None
    time = times[0]
    marks = f"{time.get('class', '')} {time.get('itemprop', '')} {time.getparent().get('class', '')}"
    return None if NOT_PUBLISHED.search(marks) or _list_entry(time) else time.get("datetime")


def _list_entry(element: etree._Element) -> bool:
    """Inside an item of a list of links (``<li>`` with a link): a listing's entry, dated."""
    for el in (element, *element.iterancestors()):
        if el.tag == "li":
            return bool(el.xpath(".//a[@href]"))
        if el.tag in ("article", "main", "body"):
            return False
    return False


def _marked_meta(element: etree._Element) -> bool:
    """A ``<time>``, or an element (or its parent) whose class or id marks metadata, not an update."""
    for el in (element, element.getparent()):
        if el is None:
            return False
        named = f"{marks(el)} {el.get('itemprop', '')}"
        if NOT_PUBLISHED.search(named):
            return False
        if el.tag == "time" or META_MARK.search(named):
            return True
    return False


def in_furniture(element: etree._Element) -> bool:
    """Inside a sidebar, a widget, a menu or comments, where other posts' dates are."""
    for el in element.iterancestors():
        if furniture_marked(el):
            return True
    return False


def _around_entry(el: etree._Element) -> bool:
    """Site furniture around a listing's link: a menu, a sidebar, the page's header or footer, but
    not the header or footer of an ``<article>``, an entry's own (its title's link is there)."""
    return menu_or_sidebar(el) or (edge(el) and not el.xpath("ancestor::article"))


def listing_links(root: etree._Element, limit: int | None = None) -> list[tuple[str, str, bool, bool]]:
    """``(href, text, entry, dated)`` of a listing's own links (the first ``limit``), menus, headers
    and footers left out; ``entry`` is False for a link in a sentence of its paragraph ("more about
    me"), which shows a page without listing it as one of the blog's posts; ``dated``: the entry
    shows a date beside its link (a list of posts, each with its day)."""
    links = []
    furniture: dict[etree._Element, bool] = {}  # ancestors are shared: each is judged once
    prose: dict[etree._Element, bool] = {}
    for a in islice(_LINKS(root), limit):
        if any(furniture.setdefault(el, _around_entry(el)) for el in a.iterancestors()):
            continue
        text = " ".join(a.xpath("string()").split())
        read_more = bool(READ_MORE.match(text))
        if read_more or len(text) > 300:
            text = ""
        paragraph = next(a.iterancestors("p"), None)
        in_prose = paragraph is not None and not read_more and prose.setdefault(paragraph, _prose(paragraph))
        entry = not in_prose
        links.append((a.get("href"), text, entry, entry and _entry_dated(a)))
    return links


def _entry_dated(a: etree._Element) -> bool:
    """A date stands beside the link in its entry: the smallest element around it that holds
    more than the link, if that is short and links nowhere else (an item of a list of posts, not
    the list)."""
    link, href = " ".join(a.xpath("string()").split()), a.get("href")
    for holder in islice(a.iterancestors(), 3):
        text = short_text(holder, ENTRY_CHARS)
        if text is None or any(other.get("href") != href for other in holder.iter("a")):
            return False
        if text != link:
            return bool(DATE_TEXT.search(text))
    return False


def _prose(paragraph: etree._Element) -> bool:
    """The paragraph is a sentence with links in it, not a listing's entry (a title's link with
    its date, author or reading time): it says more besides its links than they do, and at length."""
    whole = len(" ".join("".join(paragraph.itertext()).split()))
    linked = sum(len(" ".join(a.xpath("string()").split())) for a in paragraph.iter("a"))
    return whole - linked >= PROSE_CHARS and whole - linked > linked


def dated(ev: PageEvidence, url: str) -> bool:
    """The page gives a publish date: its machine-readable one when it reads as a date (a theme's
    zero date on an undated page, Hugo's ``0001-01-01``, is none), the one it writes out, its URL's."""
    return bool(parse_date(ev.published) or ev.visible_date or url_date(url))


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
    out: list[dict] = []
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


def routed(url: str) -> str:
    """A client-rendered blog's page named by a hash route (``/#/notes/a``) read as its path (``/notes/a``)."""
    page, _, route = url.partition("#")
    if not HASH_ROUTE.match(f"#{route}"):
        return url
    return page.split("?", 1)[0].rstrip("/") + "/" + route.lstrip("!").lstrip("/")


def listing_reason(url: str, scope: str) -> str | None:
    """Why the URL alone shows a listing or a site page, or None."""
    parts = urlsplit(routed(url))
    rel = unquote(parts.path)[len(urlsplit(scope).path) :].strip("/")
    if not rel and not parts.query:
        return HOME
    if PAGE_PARAMS & set(parse_qs(parts.query)):
        return "a paginated listing (page parameter)"
    segments = [s.lower() for s in rel.split("/") if s]
    for i, seg in enumerate(segments):
        if seg in LISTING_SEGMENTS or (i == len(segments) - 1 and _stem(seg) in LISTING_SEGMENTS | ARCHIVE_SEGMENTS):
            return f"a listing URL (/{seg}/)"
        if seg in ARCHIVE_SEGMENTS and (_is_date_path(segments[i + 1 :]) or _is_page_path(segments[i + 1 :])):
            return f"a listing URL (/{seg}/)"
    if _is_date_path(segments) and segments:
        return DAY_ARCHIVE if len(segments) == 3 else "a date archive"
    if segments and PAGINATION.match(segments[-1]):
        return "a paginated listing"
    if segments and _stem(segments[-1]) in PAGE_SLUGS:
        return f"a site page (/{segments[-1]}/)"
    return None


def _stem(segment: str) -> str:
    """``tags.html`` -> ``tags``: a file named like a folder lists what the folder would."""
    return segment.rsplit(".", 1)[0] if "." in segment else segment


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
    rel = unquote(urlsplit(routed(url)).path)[len(urlsplit(scope).path) :].strip("/")
    segments = rel.split("/")
    head = [DIGITS.sub("9", s) if DIGITS.search(s) and s.isdigit() else s.lower() for s in segments[:-1]]
    ext = segments[-1].rsplit(".", 1)[1].lower() if "." in segments[-1] else ""
    ext = ext if FILE_EXTENSION.match(ext) else ""  # "level-1.2" is a name, not a file type
    return "/".join([*head, "*" + (f".{ext}" if ext else "")])


@dataclass
class SectionStats:
    """How many known posts (feed entries) each URL shape holds in one blog."""

    shapes: Counter = field(default_factory=Counter)
    min_share: float = 0.2  # a shape under this share of the largest is a site section
    dated_shapes: Counter = field(default_factory=Counter)  # of the entries with a date

    def add(self, shape: str, *, dated: bool = True) -> None:
        self.shapes[shape] += 1
        if dated:
            self.dated_shapes[shape] += 1

    def minor_section(self, shape: str, *, listed: bool = False) -> str | None:
        """A reason when ``shape`` is a small section beside the blog's posts.

        A shape none of the feeds' entries has is one too, unless a listing shows the page.
        """
        count = self.shapes.get(shape, 0)
        total = sum(self.shapes.values())
        if total < 5:
            return None
        # a shape under a language's prefix (/en/posts/...): a translation of the blog, judged as the
        # original, whether or not its own feed has been read yet, and whatever listing links to it
        prefix, _, original = shape.partition("/")
        if LANGUAGE_PREFIX.match(prefix) and self.shapes.get(original):
            return self.minor_section(original, listed=listed)
        if not count and listed:
            return None
        top_shape, top = self.shapes.most_common(1)[0]
        # a post one folder deeper (posts/2025-slug/slug/) lies inside the posts' section
        folder = top_shape.removesuffix("*")
        if folder and shape.startswith(folder):
            return None
        if not count:
            return f"its URL shape {shape} holds none of the {total} feed entries, and no listing shows it"
        if count < self.min_share * top:
            return f"its URL shape {shape} holds {count} feed entries against {top} in {top_shape}"
        return None


def teasers(ev: PageEvidence, other_page: Callable[[str], str | None]) -> int:
    """How many teasers of a listing the page's "read more" links are: the other pages of the blog
    they lead to (``other_page``: a link's page of the blog, not this one, else None), when two or
    more; else those the title of their entry links to as well."""
    targets = {key for href in ev.read_more_hrefs if (key := other_page(href))}
    if len(targets) >= 2:
        return len(targets)
    return len({key for href in ev.teaser_hrefs if (key := other_page(href))})


def site_page_entry(entry: dict[str, Any], shape: str, sections: SectionStats) -> bool:
    """A feed's entry that is a site page, not a post: no date, where the feed's other entries
    have theirs, in a URL shape that holds none of the dated ones (a generator that lists every
    page in its feed: Hugo's resume and projects beside its posts)."""
    return (not entry.get("published") and not entry.get("updated") and not sections.dated_shapes.get(shape)
            and sum(sections.dated_shapes.values()) >= SITE_PAGE_DATED)


def below(link: str, url: str) -> bool:
    """``link`` is a page under the folder of ``url`` (``/notes/`` or ``/notes/index.html``)."""
    folder = re.sub(r"/index\.html?$", "/", urlsplit(routed(url)).path)
    path = re.sub(r"/index\.html?$", "/", urlsplit(routed(link)).path)
    return folder.endswith("/") and folder != "/" and path.startswith(folder) and path != folder


def decide(
    url: str, scope: str, ev: PageEvidence, *, in_feed: bool, dated_text: bool, sections: SectionStats,
    listed: bool = False, listed_dated: bool = False, posts_linked: int = 0, children_linked: int = 0,
) -> tuple[str, str]:
    """Classify a page as ``post``, ``listing``, ``page`` or ``alias``, with the reason.

    ``listed``: a listing of the blog (its home, archives, tag or category
    pages) links to the page from its content, not from a menu; ``listed_dated``:
    with a date beside the link, as a list of posts shows each.
    ``ev.read_more``: a listing's teasers: its "read more" links to other pages of the blog, two at
    least, or one whose page the title of its entry links to as well (a lone "read more" is a
    post's pointer to another page, or to another site).
    ``posts_linked``: how many of the feeds' posts the page's content links to;
    ``children_linked``: how many pages below its own folder (``/notes/`` to ``/notes/a.html``).
    """
    if ev.refresh:
        return "alias", f"meta refresh to {ev.refresh}"
    reason = listing_reason(url, scope)
    named_page = reason if reason and reason.startswith("a site page") else None
    # a blog of one post a day may keep each at /YYYY/MM/DD/: its feed says so
    if reason and not named_page and not (reason == DAY_ARCHIVE and in_feed):
        return "listing", reason
    if ev.read_more and not in_feed:
        return "listing", f"{ev.read_more} \"read more\" links to other pages"
    if named_page and not (in_feed or (listed and dated_text)):
        return "page", named_page
    if posts_linked >= LISTING_LINKS and not in_feed:
        return "listing", f"its content links to {posts_linked} posts of the feeds"
    if children_linked >= SECTION_LINKS and not in_feed:
        return "listing", f"a section's index: its content links to {children_linked} pages below it"
    # a theme that calls every page a website: a feed entry or a listing's link, with a date, outweighs it
    if ev.og_type and ev.og_type != "article" and not ev.ld_article and not ((in_feed or listed) and dated_text):
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
    shape = url_shape(url, scope)
    if not evidence and sections.shapes.get(shape, 0) >= 2:
        evidence = [f"its URL shape {shape} holds {sections.shapes[shape]} feed entries"]
    # a hash route is kept only where a client-rendered blog names its pages by them: one article there is
    # one of its posts, which such a blog (docsify's notes) often leaves without a date or a feed
    routed_article = HASH_ROUTE.search(url) is not None and ev.articles == 1
    if not evidence:
        if dated_text and (ev.articles <= 1 or listed):
            evidence = ["an article body with a publish date" + (", listed" if listed else "")]
        elif listed_dated and ev.articles <= 1:
            evidence = ["an entry of a listing of the blog, with its date"]
        elif routed_article:
            evidence = ["the one article of a hash route's page"]
        else:
            return "page", "no post evidence (no feed entry, og:type, JSON-LD or dated article)"
    if not (in_feed or dated_text or listed or routed_article):
        return "page", "in no feed and no listing, and no date"
    minor = sections.minor_section(shape, listed=listed or in_feed)
    if minor:
        return "page", minor
    return "post", ", ".join(evidence)
