"""A post's page as a reader sees it: its Markdown as safe HTML, its images where the author put
them, its reading time.

The Markdown is read as CommonMark (markdown-it-py, with GitHub's tables and strikethrough): a
list right after a paragraph is a list, ``\\~`` is a ``~``, a fenced block keeps its language
(``<code class="language-python">``; a block without one takes the language of the same block on the
post's captured page, and shows it). HTML written in the Markdown is text, never markup
(``html: False``), and bleach then keeps only the tags and attributes of ``TAGS``, links only to
http, https and mailto; a bare URL is a link.

Images: one written in the Markdown (``![alt](url)``) and each image of the post's media that
the Markdown lacks (trafilatura's Markdown has none) are shown where the post showed them: each
image of the post's captured page is placed after the rendered block that holds the text just
before it on that page (``place_images``). Each points at its archived copy; one that was not
kept is its alt text and a link to the original, never an ``<img>`` of another site (the page's
Content-Security-Policy allows the archive's own images only).
"""

import math
import re
from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any
from urllib.parse import urljoin

import bleach
import lxml.html
from bleach.linkifier import LinkifyFilter
from lxml import etree
from markdown_it import MarkdownIt
from markupsafe import Markup

TAGS = {"p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "a", "strong", "em", "b", "i",
        "code", "pre", "blockquote", "table", "thead", "tbody", "tr", "th", "td", "del", "s", "sup", "sub",
        "img", "figure", "figcaption", "span"}
LANGUAGE = re.compile(r"language-[\w+#.-]{1,40}")
WORDS_A_MINUTE = 230  # English prose
CHARACTERS_A_MINUTE = 400  # Chinese and Japanese: word_count counts each character
CJK_LANGS = {"zh", "ja", "ko"}
ANCHOR_CHARS = 40
CODE_KEY_CHARS = 80
CODE_CLASS = re.compile(r"(?:^|\s)(?:language|lang)-([\w+#.-]+)")  # how much of the text before an image says where it goes
LAZY_ATTRIBUTES = ("data-src", "data-original", "data-lazy-src", "src")
SRCSET_ATTRIBUTES = ("data-srcset", "srcset")
BLOCKS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "pre", "blockquote", "table", "ul", "ol", "figure", "hr"}
SKIPPED = {"script", "style", "noscript", "template"}
SPACE = re.compile(r"\s+")


def _attribute_allowed(tag: str, name: str, value: str) -> bool:
    if tag == "a":
        return name in ("href", "title")
    if tag == "img":
        return name in ("src", "alt", "title", "width", "height", "loading")
    if tag == "code":
        return name == "class" and LANGUAGE.fullmatch(value) is not None
    if tag in ("figure", "span", "a"):
        return name == "class"
    if tag in ("th", "td"):
        return name == "style" and value in ("text-align:left", "text-align:right", "text-align:center")
    return False


# bare URLs become links, as the blog showed them (the extraction writes a link whose text is its URL as the URL)
CLEANER = bleach.Cleaner(tags=TAGS, attributes=_attribute_allowed, protocols={"http", "https", "mailto"}, strip=True,
                         filters=[partial(LinkifyFilter, callbacks=[], skip_tags={"pre", "code"})])


def _figure(medium: Mapping[str, Any] | None, url: str, alt: str) -> str:
    """An image as HTML: its archived copy, or its alt text and a link to where it was."""
    if medium is not None and medium.get("src"):
        size = f' width="{medium["width"]}" height="{medium["height"]}"' if medium.get("width") and medium.get("height") else ""
        return str(Markup('<img src="{}" alt="{}" loading="lazy"{}>').format(medium["src"], alt, Markup(size)))
    status = f"not archived: {medium['status']}" if medium is not None else "not archived"
    return str(Markup('<span class="media-missing"><a href="{}">{}</a> ({})</span>').format(
        url, alt or "an image without alt text", status))


def markdown_html(text: str, page_url: str, media: Mapping[str, Mapping[str, Any]]) -> tuple[str, set[str]]:
    """``text`` (Markdown) as sanitised HTML, its images as ``_figure`` (``media`` maps each image
    URL of the post, absolute, to its medium), and the URLs of the images it shows."""
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    shown: set[str] = set()

    def image(renderer: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        url = urljoin(page_url, token.attrGet("src") or "")
        alt = "".join(child.content for child in token.children or [])
        shown.add(url)
        return _figure(media.get(url), url, alt)

    md.add_render_rule("image", image)
    return CLEANER.clean(md.render(text)), shown


def without_title(text: str, title: str | None) -> str:
    """The Markdown without a first line that only repeats the title as a heading."""
    first, _, rest = text.lstrip().partition("\n")
    return rest if title and first.lstrip("# ").strip() == title.strip() else text


def _flat(text: str) -> str:
    return SPACE.sub("", text).lower()


def _candidates(img: Any, page_url: str) -> set[str]:
    """Every URL an ``<img>`` (and its ``<picture>``'s sources) may show, absolute."""
    urls = {img.get(a) for a in LAZY_ATTRIBUTES}
    sets = [img.get(a) for a in SRCSET_ATTRIBUTES]
    parent = img.getparent()
    if parent is not None and parent.tag == "picture":
        sets += [s.get("srcset") for s in parent.iterfind("source")]
    for srcset in filter(None, sets):
        urls.update(part.split()[0] for part in srcset.split(",") if part.split())
    return {urljoin(page_url, u.strip()) for u in urls if u and not u.startswith("data:")}


def captured_document(page: bytes | None) -> Any:
    """The captured page parsed, or None."""
    try:
        return lxml.html.document_fromstring(page) if page else None
    except (etree.ParserError, ValueError):
        return None


def code_languages(doc: Any) -> dict[str, str]:
    """The language of each code block of the captured page that says it (``class="language-kotlin"``,
    ``lang-``, ``data-lang``), by the start of its text (``CODE_KEY_CHARS``, whitespace removed)."""
    found: dict[str, str] = {}
    for pre in doc.iter("pre"):
        for el in (pre, *pre.iter("code")):
            match = CODE_CLASS.search(el.get("class") or "")
            lang = match.group(1) if match else el.get("data-lang")
            if lang and LANGUAGE.fullmatch("language-" + lang):
                found.setdefault(_flat(pre.text_content())[:CODE_KEY_CHARS], lang)
                break
    return found


def label_code(root: Any, languages: Mapping[str, str]) -> None:
    """Each code block of ``root`` labelled with its language (``data-language`` on its ``<pre>``):
    its fence's, else that of the same block on the captured page."""
    for pre in root.iter("pre"):
        code = pre.find("code")
        if code is None:
            continue
        lang = (code.get("class") or "").removeprefix("language-") or languages.get(_flat(pre.text_content())[:CODE_KEY_CHARS])
        if lang:
            code.set("class", "language-" + lang)
            pre.set("data-language", lang)


def image_anchors(doc: Any, page_url: str, wanted: Iterable[str]) -> list[tuple[str, str]]:
    """The images of ``wanted`` (URLs) in the captured page ``doc``, in its order, each once, with
    the last ``ANCHOR_CHARS`` characters of text before it (whitespace removed, lower-cased)."""
    wanted = set(wanted)
    seen: set[str] = set()
    anchors, before = [], ""
    for event, el in etree.iterwalk(doc, events=("start", "end")):
        if not isinstance(el.tag, str):
            if event == "end":
                before = (before + _flat(el.tail or ""))[-ANCHOR_CHARS:]
            continue
        if event == "start":
            if el.tag == "img":
                found = sorted((_candidates(el, page_url) & wanted) - seen)
                if found:
                    seen.add(found[0])
                    anchors.append((found[0], before))
            if el.tag not in SKIPPED:
                before = (before + _flat(el.text or ""))[-ANCHOR_CHARS:]
        else:
            before = (before + _flat(el.tail or ""))[-ANCHOR_CHARS:]
    return anchors


def place_images(root: Any, anchors: list[tuple[str, str]], media: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """Each image of ``anchors`` put in ``root`` (the post's HTML) after the block that holds its
    anchor text (after the images placed there before it; an image with no text before it
    first); the URLs placed. An image whose anchor is not found after the one before it is not placed."""
    ends: list[tuple[int, Any]] = []  # (where a top-level block's text ends in the flattened text, the block)
    flat = ""
    for child in root:
        flat += _flat(child.text_content())
        ends.append((len(flat), child))
        flat += _flat(child.tail or "")
    placed: set[str] = set()
    block, last, searched = None, None, 0  # the block images go after, the last image placed there
    for url, anchor in anchors:
        if anchor:
            piece = next((anchor[-n:] for n in (ANCHOR_CHARS, 20, 10) if flat.find(anchor[-n:], searched) >= 0), None)
            if piece is None:
                continue
            searched = flat.find(piece, searched)
            found = next((b for end, b in ends if end >= searched + len(piece)), None)
            if found is None:
                continue
            if found is not block:
                block, last = found, found
        medium = media[url]
        figure = lxml.html.fragment_fromstring('<figure class="media-image">' + _figure(medium, url, medium.get("alt") or "") + "</figure>")
        if medium.get("alt") and medium.get("src"):
            etree.SubElement(figure, "figcaption").text = medium["alt"]
        if last is None:
            root.insert(0, figure)
        else:
            last.addnext(figure)
        figure.tail, last = "\n", figure
        placed.add(url)
    return placed


def reading_minutes(word_count: int | None, lang: str | None) -> int | None:
    """Minutes a reader takes over ``word_count`` words (characters, in Chinese and Japanese)."""
    if not word_count:
        return None
    pace = CHARACTERS_A_MINUTE if (lang or "").split("-")[0] in CJK_LANGS else WORDS_A_MINUTE
    return max(1, math.ceil(word_count / pace))


def post_body(post: Mapping[str, Any], media: list[dict[str, Any]], page: bytes | None) -> dict[str, Any]:
    """A post's body as HTML, its images in place, and the media it shows nowhere else (``rest``)."""
    url = post["url"]
    images = {m["url"]: m for m in media if m["kind"] == "image"}
    html, shown = markdown_html(without_title(post["markdown"] or "", post["title"]), url, images)
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    doc = captured_document(page)
    label_code(root, code_languages(doc) if doc is not None else {})
    anchors = [(u, a) for u, a in image_anchors(doc, url, images) if u not in shown] if doc is not None else []
    placed = place_images(root, anchors, images)
    html = (root.text or "") + "".join(etree.tostring(el, encoding="unicode", method="html") for el in root)
    return {"html": Markup(html), "rest": [m for m in media if m["url"] not in shown | placed]}
