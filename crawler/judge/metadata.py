"""Metadata candidates: every title, author, date and tag a page or feed offers, with its origin.

For authors, dates and tags the order of each list is the order of trust:
the first candidate that parses wins. Titles are chosen by agreement.
``crawler.extract.post`` does the choosing and keeps every candidate as provenance.
"""

import ast
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from lxml import etree
from parsel import Selector

from archive.core.urls import parse_url

from crawler.judge.article import article_body, text_mass
from crawler.judge.pages import (
    ARTICLE_TYPES,
    DATE_TEXT,
    EDGE_TOKEN,
    furniture_marked,
    in_furniture,
    ld_nodes,
    lone_time,
    short_text,
    term_kind,
    time_datetime,
    url_date,
    visible_date,
)
from crawler.judge.site import SiteParts, fold
from crawler.judge.titles import title_candidates

# A byline: "By NAME", "作者：NAME", up to a separator, a date or "on ...".
BYLINE = re.compile(
    r"(?:^|[\s|·•])(?:(?:posted by|written by|by|author)\b|文章作者|作者|投稿者|著者|文\s*[/／])\s*[:：]?\s*"
    r"([^\s|·•,，:：/][^|·•,，/:：]{0,40}?)\s*(?=$|[|·•,，/]|\s(?:on|at|in|发布|发表|于)\b|\s\d)",
    re.I,
)
# Labels and bylines are short: the length test comes first, so a long text node (a huge post's
# paragraphs) is never case-folded.
SHORT_NODE = 200
_BYLINE_NODES = etree.XPath(
    f"//body//text()[string-length(.) < {SHORT_NODE}][contains(translate(., 'BYAUTHOR', 'byauthor'), 'by') or contains(translate(., 'AUTHOR', 'author'), 'author')"
    " or contains(., '作者') or contains(., '投稿者') or contains(., '著者') or contains(., '文')]"
    "[not(ancestor::script or ancestor::style or ancestor::pre or ancestor::code or ancestor::blockquote)]"
)
TAGS_LABEL = re.compile(r"^\W*(tags?|tagged(?: with)?|labels?|keywords|标签|關鍵字|关键词|关键字|タグ)\s*[:：]", re.I)
_TAGS_LABEL_NODES = etree.XPath(
    f"//body//text()[string-length(.) < {SHORT_NODE}][contains(translate(., 'TAGLBEKYWORD', 'taglbekyword'), 'tag') or contains(translate(., 'LABE', 'labe'), 'label')"
    " or contains(translate(., 'KEYWORDS', 'keywords'), 'keywords')"
    " or contains(., '标签') or contains(., '关键') or contains(., '關鍵') or contains(., 'タグ')]"
    "[not(ancestor::script or ancestor::style or ancestor::pre or ancestor::code)]"
)
MAX_BYLINE_CHARS = 120
POST_SHARE = 0.5  # of the page's text that the post, around its title, holds
POST_EDGE = re.compile(r"(?:post|entry|article)[-_]?(?:header|footer)", re.I)
BYLINE_LABEL = re.compile(r"^\W*(?:(?:posted |written )?by|author|[\u4e00-\u9fff]{0,2}作者|投稿者|著者)\b\s*[:：]?", re.I)
AUTHOR_BOX_LABEL = re.compile(r"^(?:about(?: the author)?|关于作者|written by)\s*[:：]?\s+", re.I)  # "About Matt"
_AUTHOR_CLASSED = etree.XPath(
    "//body//*[contains(translate(@class, 'AUTHOR', 'author'), 'author')]"
    "[not(ancestor-or-self::*[contains(translate(@class, 'COMENT', 'coment'), 'comment')])]"
)
# An icon that labels the value beside or inside it: Font Awesome's ``fa-user`` and
# ``fa-tags``, ``icon-tag``, ``octicon-person``, ``reco-account``...
ICON_TOKEN = re.compile(
    r"^(?:[a-z0-9]+[-_])+(?:(user|author|account|person|writer)|(tags?)|(folder|category|categories))"
    r"(?:[-_](?:o|alt|open|fill|line|outline|solid|circle|s))*$",
    re.I,
)
ICON_FIELDS = ("author", "tags", "categories")
_ICONS = etree.XPath("//body//*[self::i or self::span or self::svg or self::em][@class]")
VALUE_TAGS = {"a", "span", "time", "em", "strong", "b", "small"}  # what an icon's value is written in
TAG_SPLIT = re.compile(r"\s*[,，、|·•]\s*")


@dataclass
class Candidate:
    field: str  # title, author, published, updated, tags, categories
    value: Any  # a string, or a list of strings for tags and categories
    origin: str  # where it was read: "feed", "og:title", "JSON-LD", ...


def candidates(
    sel: Selector, url: str, entry: dict[str, Any], *, site: SiteParts | None = None, link_text: str | None = None
) -> list[Candidate]:
    """Every metadata candidate of a page and its feed entry.

    Dates, authors and tags come most trusted first per field: structured data
    (the feed, JSON-LD, meta tags, ``<time datetime>``), then what the page
    writes by its title or byline, then the URL. Titles are chosen by agreement
    (``crawler.judge.titles``), with the site's own parts (``site``) stripped.
    """
    site = site or SiteParts()
    root = sel.root
    ld = _ld_article(sel)
    page_titles = [(site.strip(v), o) for v, o in title_candidates(root) if not site.is_site(v)]
    article = post_article(root)
    icons = icon_labelled(root, article)
    said = entry.get("evidence") or "feed"  # a feed's entry, or a platform's listing in its shape
    found: list[tuple[str, Any, str]] = [
        ("title", entry.get("title"), said),
        ("title", site.strip(_meta(sel, "og:title")), "og:title"),
        ("title", site.strip(_meta(sel, "twitter:title", "name")), "twitter:title"),
        *(("title", v, o) for v, o in page_titles),
        ("title", link_text, "listing link"),
        ("author", entry.get("author"), said),
        ("author", _ld_author(ld), "JSON-LD author"),
        ("author", _meta(sel, "author", "name"), "meta author"),
        ("author", sel.xpath('string(//a[@rel="author"][1])').get(), "rel=author"),
        ("author", _itemprop_author(sel), "itemprop author"),
        ("author", classed_author(root), "author class"),
        ("author", icons.get("author"), "author icon"),
        ("author", byline_author(root), "byline"),
        ("author", _handle_free(_meta(sel, "twitter:creator", "name")), "twitter:creator"),
        ("published", entry.get("published"), said),
        ("published", ld.get("datePublished"), "JSON-LD datePublished"),
        ("published", _meta(sel, "article:published_time") or _meta(sel, "og:article:published_time"), "article:published_time"),
        ("published", _itemprop_date(root), "itemprop datePublished"),
        ("published", time_datetime(root), "<time datetime>"),
        ("published", visible_date(sel), "visible date"),
        ("published", url_date(url), "URL date"),
        ("published", lone_time(root), "the page's only <time datetime>"),
        ("updated", entry.get("updated"), said),
        ("updated", ld.get("dateModified"), "JSON-LD dateModified"),
        ("updated", _meta(sel, "article:modified_time"), "article:modified_time"),
        ("updated", _meta(sel, "og:updated_time"), "og:updated_time"),
    ]
    page_tags, page_categories = _term_links(sel, url, article)
    feed_categories = entry.get("categories") or []
    known_categories = {c.lower() for c in [*page_categories, *feed_categories]}
    feed_tags = entry.get("tags") or []
    keywords = _meta(sel, "keywords", "name")
    found += [
        ("tags", _article_tags(sel), "article:tag"),
        ("tags", page_tags, "tag links"),
        ("tags", _keywords(ld.get("keywords")), "JSON-LD keywords"),
        ("tags", [t for t in feed_tags if t.lower() not in known_categories], said),
        ("tags", labelled_tags(root), "tags label"),
        ("tags", icons.get("tags"), "tags icon"),
        ("tags", [] if site.is_keywords(keywords) else _own_keywords(keywords, found, site), "meta keywords"),
        ("categories", page_categories, "category links"),
        ("categories", icons.get("categories"), "category icon"),
        ("categories", [*feed_categories, *(t for t in feed_tags if t.lower() in known_categories)], said),
    ]
    # an author is a person's name: a map or list a template printed whole is read for its names
    found = [(f, person_name(v) if f == "author" else v, o) for f, v, o in found]
    # one name, title or date a candidate (a list is a list of tags or categories only)
    return [Candidate(f, _clean(v), o) for f, v, o in found
            if _clean(v) and (isinstance(v, str) or f in ("tags", "categories"))]


# The keys of a serialised person whose value is its name, most telling first.
NAME_KEYS = ("name", "displayname", "display_name", "fullname", "full_name", "nickname", "nick", "username")
# Go's fmt of a map (``map[email:a@b.c name:子舒]``: a Hugo theme printing its author map) and of a slice
# of maps; a key is a word before a colon at the start or after a space or ``[``.
GO_MAP = re.compile(r"map\[(.*)\]", re.S)
GO_KEY = re.compile(r"(?:^|(?<=[\s\[]))([A-Za-z_][\w-]*):")


def person_name(value: Any) -> Any:
    """An author candidate as a person's name: a serialised map (Go's ``map[k:v ...]``, JSON or a
    Python dict) gives its ``name`` (or display name, full name, nickname), a serialised list (JSON,
    Python, Go's slice of maps) the names of its items joined by ", "; one with no name, and a bracketed
    run of bare words (``[email protected]``, Go's ``[Ann Bob]``: one name or two?), is None, so that the feed's or the byline's author
    is chosen. Any other value is returned as it is."""
    if not isinstance(value, str):
        return value
    text = " ".join(value.split())
    if not text or text[0] not in "[{" and not text.startswith("map["):
        return value
    names = _names(_parsed(text))
    return ", ".join(dict.fromkeys(names)) or None


def _parsed(text: str) -> Any:
    for parse in (json.loads, ast.literal_eval):
        try:
            return parse(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return _go_value(text)


def _go_value(text: str) -> Any:
    """Go's ``fmt`` of a map or a slice of strings or maps, as dicts and lists of strings."""
    text = text.strip()
    match = GO_MAP.fullmatch(text)
    if match:
        inner = match.group(1)
        keys = list(GO_KEY.finditer(inner))
        return {k.group(1): inner[k.end(): keys[i + 1].start() if i + 1 < len(keys) else len(inner)].strip()
                for i, k in enumerate(keys)}
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        maps = re.findall(r"map\[[^\[\]]*\]", inner)
        if maps:
            return [_go_value(m) for m in maps]
    return {}  # a slice of words (unquoted, one name or several?) or a structure it cannot read: no name


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        n = " ".join(value.split())
        if n[:1] in ("[", "{") or n.startswith("map["):
            return _names(_parsed(n))  # a serialised map inside a list or map
        return [n] if n else []
    if isinstance(value, dict):
        keys = {str(k).lower(): v for k, v in value.items()}
        for key in NAME_KEYS:
            if isinstance(keys.get(key), str) and keys[key].strip():
                return _names(keys[key])
        return []
    if isinstance(value, list):
        return [n for item in value for n in _names(item)]
    return []


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


def _term_links(sel: Selector, url: str, article: etree._Element | None) -> tuple[list[str], list[str]]:
    """Tags and categories the post links to: ``/tags/NAME``, ``/tags/#name``, ``?tag=NAME``.

    Only links within the blog count, and only in the post's article when there
    is one. When a page marks some of them ``rel=tag``, the unmarked ones are
    navigation (a sidebar's tag cloud) and are left out.
    """
    # Inside the post's <article>, its own header and footer hold the post's terms;
    # without one, or when it holds none, what is not the site's furniture does.
    links = [Selector(root=a) for a in article.iter("a")
             if a.get("href") and not _furniture(a, article=article)] if article is not None else []
    if not any(term_kind(link.attrib["href"]) for link in links):
        links = [link for link in sel.xpath("//a[@href]") if not _furniture(link.root)]
    host = urlsplit(url).netloc
    found: dict[str, list[tuple[str, bool]]] = {"tags": [], "categories": []}
    for link in links:
        absolute = parse_url(link.attrib["href"], url)
        href = urlsplit(absolute or "")
        text = _term_label(link.root)
        if absolute is None or href.netloc != host or not text:
            continue
        rel = (link.attrib.get("rel") or "").lower().split()
        kind = term_kind(href.geturl())
        if kind == "categories" or ("category" in rel and kind != "tags"):
            found["categories"].append((text, bool(rel)))
        elif kind == "tags" or "tag" in rel:
            found["tags"].append((text, "tag" in rel))
    tags, categories = (
        [text for text, marked in links if marked or not any(m for _, m in links)]
        for links in (found["tags"], found["categories"])
    )
    return tags, categories


def post_article(root: etree._Element) -> etree._Element | None:
    """The element that holds the post: the ``<article>`` around its body (not a prev/next or
    related card); without one, the smallest element around its title that holds most of the text."""
    body = article_body(root)
    if body is not None:
        found = body.xpath("ancestor-or-self::article")
        if found:
            return found[-1]
    articles = [a for a in root.xpath("//article") if not _furniture(a, itself=True)]
    if len(articles) == 1:
        return articles[0]
    mass = text_mass(root)
    total = mass.get(root, 0)
    title = next((h for h in root.xpath("//body//h1") if not _furniture(h)), None)
    for el in title.iterancestors() if title is not None and total else ():
        if el.tag in ("body", "html"):
            break
        if mass.get(el, 0) >= POST_SHARE * total:
            return el
    return None


def _term_label(link: etree._Element) -> str:
    """A tag link's text, without the count of posts some themes add (``TCP<sup>1</sup>``, ``(3)``)."""
    text = "".join(link.itertext())
    for el in link.iterdescendants():
        count = (el.text or "").strip()
        if count.strip("()[]").isdigit():
            text = text.replace(el.text or "", "", 1)
    text = re.sub(r"\s*[(（\[]\d+[)）\]]\s*$", "", " ".join(text.split()))
    return text.lstrip("#").strip()


def _furniture(element: etree._Element, *, itself: bool = False, article: etree._Element | None = None) -> bool:
    """In a menu, a sidebar or a widget; or in a header or footer that is not the post's own
    (the post's holds its ``<h1>``, or lies in its ``<article>``). A ``<nav>`` inside the post's
    ``article`` is the post's own (its tags), not the site's menu."""
    inside = article is not None
    for el in (element, *element.iterancestors()) if itself else element.iterancestors():
        if el is article:
            inside = False
        if (el.tag == "nav" and not inside) or el.tag == "aside" or furniture_marked(el):
            return True
        if _edge(el) and not _posts_own(el):
            return True
    return False


def _edge(el: etree._Element) -> bool:
    """A header or footer: the element, or a class or id such as ``header``, ``site-footer``."""
    marks = f"{el.get('class', '')} {el.get('id', '')}".split()
    return el.tag in ("header", "footer") or any(EDGE_TOKEN.match(m) for m in marks)


def _posts_own(el: etree._Element) -> bool:
    """A header or footer of the post: in its ``<article>``, or one block with its ``<h1>``."""
    if el.xpath("ancestor::article") or POST_EDGE.search(f"{el.get('class', '')} {el.get('id', '')}"):
        return True
    while el is not None and _edge(el):
        if el.xpath(".//h1"):
            return True
        el = el.getparent()
    return False


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
        author = author.get("name")
        if isinstance(author, list):  # {"name": ["A", "B"]}
            author = ", ".join(str(a) for a in author if a) or None
    return author if isinstance(author, str) else None


def _keywords(value: Any) -> list[str]:
    if isinstance(value, str):
        return [k for k in re.split(r"\s*[,，、]\s*", value) if k]
    return [str(k) for k in value] if isinstance(value, list) else []




_ITEMPROP_DATES = etree.XPath(
    '//*[contains(concat(" ", normalize-space(@itemprop), " "), " datePublished ")'
    ' or contains(concat(" ", normalize-space(@itemprop), " "), " dateCreated ")]'
)


def _itemprop_date(root: etree._Element) -> str | None:
    """``itemprop=datePublished`` (or ``dateCreated``): its ``content`` or ``datetime``; a ``<time>``'s
    ``datetime`` first, which carries the time and zone a ``content`` beside it may leave out."""
    for el in _ITEMPROP_DATES(root):
        value = el.get("datetime") or el.get("content") if el.tag == "time" else el.get("content") or el.get("datetime")
        if value:
            return value
    return None


def _article_tags(sel: Selector) -> list[str]:
    """``article:tag`` values; a single one that joins them with commas is split."""
    tags = sel.xpath('//meta[@property="article:tag"]/@content').getall()
    return _keywords(tags[0]) if len(tags) == 1 and "," in tags[0] else tags


def _handle_free(name: str | None) -> str | None:
    """A name, not an ``@handle``."""
    return name if name and not name.strip().startswith("@") else None


def _own_keywords(keywords: str | None, found: list[tuple[str, Any, str]], site: SiteParts) -> list[str]:
    """A page's keywords less the post's title, its author and the site's name, which themes add."""
    known = {fold(v) for f, v, _ in found if f in ("title", "author") and isinstance(v, str)} | site.names
    return [k for k in _keywords(keywords) if fold(k) not in known]


def _itemprop_author(sel: Selector) -> str | None:
    node = sel.xpath('(//*[@itemprop="author"])[1]')
    if not node:
        return None
    name = node.xpath('string(.//*[@itemprop="name"]/@content)').get() or node.xpath('string(.//*[@itemprop="name"])').get()
    return name or node.xpath("string(@content)").get() or node.xpath("string()").get()


def classed_author(root: etree._Element) -> str | None:
    """The name in a short element whose class names an author (``post-author``, ``author-name``)."""
    found = _AUTHOR_CLASSED(root)
    outer = {p for el in found for p in el.iterancestors()}  # the innermost say it best
    inner = [el for el in found if el not in outer]
    # the post's own first; then a sidebar's, which on a blog of one author is hers
    for el in [*(e for e in inner if not _furniture(e, itself=True)), *inner]:
        text = " ".join(el.xpath("string()").split())
        text = AUTHOR_BOX_LABEL.sub("", BYLINE_LABEL.sub("", text)).strip(" :：·|-")
        if text and plausible_name(text, marked=True):
            return text
    return None


def byline_author(root: etree._Element) -> str | None:
    """The name a byline gives: "By NAME", "作者：NAME", in a short element outside comments and sidebars."""
    for node in _BYLINE_NODES(root):
        holder = node.getparent()
        if not isinstance(holder.tag, str):  # the text after an HTML comment: the comment's parent holds it
            holder = holder.getparent()
        for el in (holder, holder.getparent(), holder.getparent().getparent() if holder.getparent() is not None else None):
            if el is None or _furniture(el, itself=True):
                break
            text = short_text(el, MAX_BYLINE_CHARS)
            if text is None:
                break
            match = BYLINE.search(text)
            if match and plausible_name(match.group(1)):
                return match.group(1).strip()
    return None


def plausible_name(text: str, *, marked: bool = False) -> bool:
    """A person's or a pen name, not a sentence, a date or a licence ("BY-NC-SA").

    In running text a name starts with a capital ("By kicking off..." is a sentence);
    in an element ``marked`` as the author's, a lower-case pen name is a name.
    """
    text = text.strip()
    first = text[:1]
    return (
        0 < len(text) <= 40
        and len(text.split()) <= 5
        and first not in "-–—(（[<"
        and (marked or not (first.isascii() and first.isalpha() and first.islower()))
        and not re.search(r"[。！？!?.;；]$", text)
        and not DATE_TEXT.search(text)
        and bool(re.search(r"[^\W\d_]", text))
    )


def labelled_tags(root: etree._Element) -> list[str]:
    """The links after a "Tags:" or "标签：" label, in the element that holds both."""
    for node in _TAGS_LABEL_NODES(root):
        if not TAGS_LABEL.match(str(node)):
            continue
        holder = node.getparent()
        for el in (holder, holder.getparent()):
            if el is None or in_furniture(el):
                break
            links = [" ".join(a.xpath("string()").split()) for a in el.iter("a")]
            if links:
                return [t for t in links if t]
    return []


def icon_labelled(root: etree._Element, article: etree._Element | None) -> dict[str, Any]:
    """The author, tags and categories an icon labels, in the post's article (or, without one,
    outside the site's furniture): ``<i class="fa fa-tags"></i> rust, python``, or the icon
    around the value, ``<i class="icon-user"><span>NAME</span></i>``. ``article``: see ``post_article``."""
    found: dict[str, Any] = {}
    for icon in _ICONS(root):
        field = _icon_field(icon)
        if field is None or field in found or in_furniture(icon):
            continue
        if article is not None and article not in icon.iterancestors():
            continue
        if article is None and _furniture(icon):
            continue
        text, items = _icon_values(icon)
        if field == "author":
            name = BYLINE_LABEL.sub("", text).strip(" :：·|-")
            if name and plausible_name(name, marked=True):
                found[field] = name
        else:
            values = items or [v for v in TAG_SPLIT.split(text) if v]
            if values and not TAGS_LABEL.match(values[0] + ":"):
                found[field] = values
    return found


def _icon_field(el: etree._Element) -> str | None:
    for token in el.get("class", "").split():
        match = ICON_TOKEN.match(token)
        if match:
            return ICON_FIELDS[next(i for i, g in enumerate(match.groups()) if g)]
    return None


def _icon_values(icon: etree._Element) -> tuple[str, list[str]]:
    """The text an icon labels, and its items (links, or elements of one value each): inside
    the icon when it holds text, else after it up to the next icon, a line break or a block."""
    if _squash(icon.xpath("string()")):
        items = [t for child in icon if (t := _squash(child.xpath("string()")))]
        return _squash(icon.xpath("string()")), items if len(items) > 1 else []
    texts, links = [icon.tail or ""], []
    for sib in icon.itersiblings():
        if sib.tag not in VALUE_TAGS or any(_icon_field(el) for el in sib.iter()):
            break
        texts += [sib.xpath("string()"), sib.tail or ""]
        links += [t for a in sib.iter("a") if (t := _squash(a.xpath("string()")))]
    return _squash(" ".join(texts)), links


def _squash(text: str) -> str:
    return " ".join(text.split())
