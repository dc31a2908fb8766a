"""A page's title, chosen by agreement among the candidates it offers.

Pure: ``title_candidates`` and ``site_name_parts`` read an lxml HTML tree,
``choose_title`` reads only the ``(value, origin)`` pairs it is given.
"""

import copy
import html
import json
import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import urlsplit

from lxml import etree

from archive.core.urls import parse_url

# Separators between a page's title and its site's name (or tagline) in <title>:
# spaced ASCII and typographic ones, and the unspaced ones CJK sites use.
SEPARATOR = re.compile(r"\s+(?:[\-–—·»•~›]|::)\s+|\s*[|｜]\s*|\s*_+\s*")
SPLIT_ORIGINS = {"<title>", "og:title", "twitter:title", "trafilatura", "JSON-LD name", "JSON-LD headline"}
TYPOGRAPHIC = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "`": "'", "\u00b4": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
    "\u00a0": " ",
})
ENTITY = re.compile(r"&(#\d+|#x[0-9a-fA-F]+|[a-zA-Z]+);")
WORD = re.compile(r"\w+")
NON_WORD = re.compile(r"[\W_]+")
# The glyph of a heading's permalink anchor, part of its text but not of the title.
PERMALINK_MARK = re.compile("[¶§#🔗⚓]")
# Quotation marks: a template that writes a title into an attribute or a JSON string takes
# them out (they would end it), but no template puts them in.
QUOTE = re.compile("[\"'`\u00ab\u00bb\u2018-\u201f\u2039\u203a\u300c-\u300f\uff02\uff07]")
MAX_TITLE = 300
# How much one origin's word counts.
WEIGHTS = {
    "feed": 1.2,
    # a platform's listing (crawler.discover.platforms): the post's own title field
    "WordPress REST API": 1.2, "Ghost Content API": 1.2, "Blogger feed": 1.2,
    "listing link": 1.0,
    "og:title": 1.0,
    "JSON-LD headline": 1.0,
    "itemprop headline": 2.0,
    "twitter:title": 0.8,
    "<title>": 0.5,
    "JSON-LD name": 0.5,
    "trafilatura": 0.5,
    "<h1>": 0.9,
    "article <h1>": 1.0,
    "first <h1>": 0.9,
    "article <h2>": 0.5,
    "article <h3>-<h6>": 0.5,
}
OTHER_WEIGHT = 0.7
LOWER_HEADINGS = ("h3", "h4", "h5", "h6")
# The tags a site's templates fill from one field (its "SEO title") say the same thing
# once: within a group, the strongest vote counts whole and the others by DAMP.
GROUPS = {
    "feed": "feed", "WordPress REST API": "feed", "Ghost Content API": "feed", "Blogger feed": "feed",
    "listing link": "listing",
    "<h1>": "heading", "article <h1>": "heading", "first <h1>": "heading", "article <h2>": "heading",
    "article <h3>-<h6>": "heading", "itemprop headline": "heading",
}
PARAMS = {
    "damp": 0.3,  # the weight of a group's further votes
    "site_whole": 0.3,  # a whole <title> that still holds the site's name
    "head": 1.2,  # a <title>'s leading parts (site name last dropped)
    "tail": 0.5,  # its trailing parts (site name first dropped)
    "inner": 0.5,  # a part in the middle
    "fuzzy": 0.2,  # support lent by a candidate that shares most words
}


def fold(text: str) -> str:
    """Text as agreement sees it: NFKC, case, typographic quotes and dashes, whitespace."""
    text = unicodedata.normalize("NFKC", text).translate(TYPOGRAPHIC).casefold()
    return " ".join(text.split()).strip(" .:|-–—·»")


def clean(value: str | None) -> str:
    value = " ".join((value or "").split())
    if ENTITY.search(value):
        value = " ".join(html.unescape(value).split())  # themes that escape twice
    return value


def split_parts(title: str) -> list[tuple[str, str]]:
    """``title`` as [(part, separator before it)], on the separators of SEPARATOR."""
    out: list[tuple[str, str]] = []
    pos, sep = 0, ""
    for m in SEPARATOR.finditer(title):
        part = title[pos:m.start()].strip()
        if part:
            out.append((part, sep))
            sep = m.group(0)
        pos = m.end()
    last = title[pos:].strip()
    if last:
        out.append((last, sep))
    return out


def _is_site(part: str, site: set[str]) -> bool:
    key = fold(part)
    return key in site or _squeezed(key) in site  # "Example Site" for example-site.com


def _squeezed(key: str) -> str:
    """A folded name without its spaces and punctuation ("lofipython" for "lo-fi python"), as a host
    writes it; only for names long enough not to be a word of a title ("go" is not Go!)."""
    squeezed = NON_WORD.sub("", key)
    return squeezed if len(squeezed) >= 6 else key


def readings(title: str, site: set[str], split: bool, params: dict[str, float] = PARAMS) -> list[tuple[str, float]]:
    """What a candidate may mean, with how sure: itself, and when it may carry the site's
    name, every run of consecutive parts between separators that is not the site's."""
    parts = split_parts(title) if split else []
    if len(parts) < 2:
        return [(title, 1.0)]
    n = len(parts)
    keep = [not _is_site(p, site) for p, _ in parts]
    lo = next((i for i in range(n) if keep[i]), n)
    hi = next((i for i in range(n - 1, -1, -1) if keep[i]), -1) + 1
    out = [(title, 1.0 if (lo, hi) == (0, n) else params["site_whole"])]
    for i in range(n):
        for j in range(i + 1, n + 1):
            if (i, j) == (0, n) or not any(keep[i:j]):
                continue
            text = parts[i][0] + "".join(sep + p for p, sep in parts[i + 1:j])
            if (i, j) == (lo, hi):
                factor = 1.0  # the title without the site's name
            elif i == 0:
                factor = params["head"]
            elif j == n:
                factor = params["tail"]
            else:
                factor = params["inner"]
            out.append((text, factor))
    return out


def _words(key: str) -> set[str]:
    return set(WORD.findall(key))


def choose_title(
    candidates: list[tuple[str, str]],
    *,
    site_parts: Iterable[str] = (),
    weights: dict[str, float] = WEIGHTS,
    params: dict[str, float] = PARAMS,
) -> tuple[str, str] | None:
    """The title most candidates agree with, and the origin it was read from.

    Each candidate is a ``(value, origin)`` pair; the first of each origin counts.
    Titles that may carry the site's name (``<title>``, ``og:title``...) are also
    read as their parts between separators (``readings``). A reading's support is
    the weight of the candidates that offer it, after whitespace, case and
    typographic folding (``fold``); tags filled from one field count once and a
    bit (``GROUPS``). ``site_parts`` (the site's name, tagline...) are never chosen.
    """
    site = {fold(s) for s in site_parts if s and fold(s)}
    site |= {_squeezed(key) for key in site}
    seen: set[str] = set()
    cands: list[tuple[str, str]] = []
    for value, origin in candidates:
        value = clean(value)
        if not value or origin in seen or len(value) > MAX_TITLE or _is_site(value, site):
            continue
        seen.add(origin)
        cands.append((value, origin))
    if not cands:
        return None
    votes: dict[str, dict[str, list[float]]] = {}  # key -> group -> votes
    first: dict[str, tuple[str, str, int]] = {}
    wholes: list[tuple[str, float, str]] = []
    # A title the page's heading spells out whole has no site's name to drop: it names itself. One
    # that spells out two headings, one within the other (the page's, and one inside the post's text
    # that is often the first words of its title), names the longer.
    headings = {fold(v) for v, o in cands if GROUPS.get(o) == "heading"}
    for rank, (value, origin) in enumerate(cands):
        weight = weights.get(origin, OTHER_WEIGHT)
        group = GROUPS.get(origin, "meta")
        best: dict[str, float] = {}
        options = readings(value, site, origin in SPLIT_ORIGINS, params)
        named = [fold(r[0]) for r in options if fold(r[0]) in headings] if group != "heading" else []
        longest = max(named, key=len, default="")
        if longest and (longest == fold(value) or (len(named) > 1 and all(key in longest for key in named))):
            options = [r for r in options if fold(r[0]) == longest]
        for k, (text, factor) in enumerate(options):
            key = fold(text)
            if not key or _is_site(text, site):
                continue
            best[key] = max(best.get(key, 0.0), weight * factor)
            if key not in first:
                first[key] = (text, origin, rank * 1000 + k)
        for key, vote in best.items():
            votes.setdefault(key, {}).setdefault(group, []).append(vote)
        wholes.append((fold(value), weight, group))

    def support(key: str) -> float:
        total = 0.0
        for vs in votes[key].values():
            vs = sorted(vs, reverse=True)
            total += vs[0] + params["damp"] * sum(vs[1:])
        if params["fuzzy"]:
            words = _words(key)
            for other, weight, _ in wholes:
                if other != key and words:
                    o = _words(other)
                    total += params["fuzzy"] * weight * len(words & o) / max(1, len(words | o))
        return total

    if not votes:  # every reading folds to nothing: a title of punctuation or marks alone
        return None
    scored = {k: support(k) for k in votes}
    best_key = max(scored, key=lambda k: (round(scored[k], 6), -first[k][2]))
    text, origin, _ = first[best_key]
    return _quoted(*_spelling(text, origin, cands), cands, site, params)


def _spelling(text: str, origin: str, cands: list[tuple[str, str]]) -> tuple[str, str]:
    """The article heading's spelling of the chosen title when the two differ only in punctuation:
    a site's meta tags are filled from the title with characters taken out (a ``|``, brackets)
    that its heading shows as the author wrote them."""
    if GROUPS.get(origin) == "heading":
        return text, origin
    words = WORD.findall(fold(text))
    for value, other in cands:
        if (GROUPS.get(other) == "heading" and fold(value) != fold(text) and WORD.findall(fold(value)) == words
                and not PERMALINK_MARK.search(value)):
            return value, other
    return text, origin


def _quoted(text: str, origin: str, cands: list[tuple[str, str]], site: set[str],
            params: dict[str, float]) -> tuple[str, str]:
    """The chosen title as a candidate spells it with the quotation marks the chosen spelling
    lacks (``"Git" The Basics`` for ``Git The Basics``): the words the same, the marks the author's."""
    bare = fold(QUOTE.sub("", text))
    for value, other in cands:
        for reading, _ in readings(value, site, other in SPLIT_ORIGINS, params):
            if (len(QUOTE.findall(reading)) > len(QUOTE.findall(text)) and fold(QUOTE.sub("", reading)) == bare
                    and not PERMALINK_MARK.search(reading)):
                return reading, other
    return text, origin


_TITLE = etree.XPath("//title[not(ancestor::svg)][1]")
_LD = etree.XPath('//script[@type="application/ld+json"]/text()')
_HEADLINE = etree.XPath('//*[@itemprop="headline"]')
_MAIN = etree.XPath('(//article | //main | //*[@role="main"])')
_H1 = etree.XPath("//h1")
# A heading that is (or holds) a link to the home page is the site's logo: a link to "/", "./",
# "index.html" or to a host's root written out whole ("https://example.com/").
_ROOT = r"^(?=.)((https?:)?//[^/?#]+)?/?(index\.html?)?$|^\./$"
_HOME_LINK = etree.XPath(f'ancestor-or-self::a[re:test(@href, "{_ROOT}")] | .//a[re:test(@href, "{_ROOT}")]',
                         namespaces={"re": "http://exslt.org/regular-expressions"})
_META = etree.XPath("//meta[@property or @name]")
_CANONICAL = etree.XPath('//link[@rel="canonical"]/@href')
# co.uk, com.au...: where the site's own name is the third label from the right.
SECOND_LEVEL = {"co", "com", "org", "net", "ac", "gov", "edu", "ne", "or", "gv"}


def _text(node: etree._Element) -> str:
    return " ".join(node.text_content().split())


def _heading(node: etree._Element) -> str:
    """A heading's text without its subtitle (``<small>``, a ``subtitle`` class) when it has one."""
    whole = _text(node)
    if not node.xpath('.//small | .//*[contains(@class, "subtitle")]'):
        return whole
    node = copy.deepcopy(node)
    for sub in node.xpath('.//small | .//*[contains(@class, "subtitle")]'):
        tail, parent = sub.tail, sub.getparent()
        parent.remove(sub)
        if tail and tail.strip():
            parent.text = (parent.text or "") + tail
    return _text(node) or whole


def _ld_nodes(root: etree._Element) -> list[dict]:
    out: list[dict] = []

    def walk(node: object) -> None:
        if isinstance(node, list):
            for n in node:
                walk(n)
        elif isinstance(node, dict):
            out.append(node)
            walk(node.get("@graph"))

    for script in _LD(root):
        try:
            walk(json.loads(script))
        except ValueError:
            continue
    return out


def _types(node: dict) -> set[str]:
    t = node.get("@type")
    return {str(x) for x in (t if isinstance(t, list) else [t]) if x}


def title_candidates(root: etree._Element) -> list[tuple[str, str]]:
    """Title candidates ``crawler.judge.metadata`` does not read, from an lxml HTML tree.

    The raw ``<title>``, ``itemprop=headline``, the first heading of the article
    (``<h1>``, else ``<h2>``, else the first of the highest of ``<h3>``-``<h6>``, inside ``<article>``,
    ``<main>`` or ``role=main``),
    the page's first ``<h1>``, and JSON-LD ``headline`` or ``name`` of the page's own node.
    """
    found: list[tuple[str, str]] = []
    title = _TITLE(root)
    if title:
        found.append((_text(title[0]), "<title>"))
    for node in _HEADLINE(root):
        value = node.get("content") or _text(node)
        if value:
            found.append((value, "itemprop headline"))
            break
    for scope in _MAIN(root):  # not a logo's <h1> (a link home), which a <main> holding the sidebar has
        heads = [h for h in scope.xpath(".//h1") if not _HOME_LINK(h)]
        if heads and _heading(heads[0]):
            found.append((_heading(heads[0]), "article <h1>"))
            break
    else:
        for scope in _MAIN(root):
            heads = scope.xpath(".//h2") or []
            if heads and _text(heads[0]):
                found.append((_text(heads[0]), "article <h2>"))
                break
        else:  # notes that start at a lower level (docsify's "### ArrayList"): the first of the highest one
            for scope in _MAIN(root):
                heads = next((h for level in LOWER_HEADINGS if (h := scope.xpath(f".//{level}"))), [])
                if heads and _text(heads[0]):
                    found.append((_text(heads[0]), "article <h3>-<h6>"))
                    break
    for h1 in _H1(root):  # the page's first <h1> that is not a logo (a link home)
        if _heading(h1) and not _HOME_LINK(h1):
            found.append((_heading(h1), "first <h1>"))
            break
    for node in _ld_nodes(root):
        types = _types(node)
        if types & {"WebSite", "Organization", "Person", "Corporation", "LocalBusiness", "BreadcrumbList", "ImageObject"}:
            continue
        for key in ("headline", "name"):
            value = node.get(key)
            if isinstance(value, str) and value.strip():
                found.append((value, "JSON-LD headline" if key == "headline" else "JSON-LD name"))
    return [(" ".join(v.split()), o) for v, o in found]


def site_name_parts(root: etree._Element, url: str | None = None) -> list[str]:
    """What one page says its site is called: ``og:site_name``, ``application-name``,
    JSON-LD ``WebSite`` and ``Organization`` names, and its host's name without
    ``www.`` and the public suffix (``url``, else the canonical or ``og:url``)."""
    out: list[str] = []
    for meta in _META(root):
        key = (meta.get("property") or meta.get("name") or "").lower()
        if key in ("og:site_name", "application-name", "apple-mobile-web-app-title") and meta.get("content"):
            out.append(meta.get("content"))
        if key == "og:url" and not url:
            url = meta.get("content")
    for node in _ld_nodes(root):
        if _types(node) & {"WebSite", "Organization"} and isinstance(node.get("name"), str):
            out.append(node["name"])
    url = url or next(iter(_CANONICAL(root)), None)
    name = host_name(url)
    if name:
        out.append(name)
    return [" ".join(s.split()) for s in out if s.strip()]


def host_name(url: str | None) -> str | None:
    """``example`` for https://www.example.co.uk/page: the name a site's host gives it."""
    host = (urlsplit(parse_url(url or "") or "").hostname or "").lower()
    labels = [x for x in host.split(".") if x and x != "www"]
    if len(labels) < 2 or all(x.isdigit() for x in labels):
        return None
    if len(labels) >= 3 and len(labels[-1]) == 2 and labels[-2] in SECOND_LEVEL:
        return labels[-3]
    return labels[-2]
