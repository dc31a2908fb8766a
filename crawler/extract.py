"""Extraction: (url, html) -> BlogPost, the only place trafilatura is used.

Pure and offline: no network, no archive. Page metadata (OpenGraph, JSON-LD,
``<meta>``, ``<time>``, ``rel=tag``) and the feed entry, when there is one,
are reconciled into one title, author, dates and tags.
"""

import copy
import html
import logging
import re
from typing import Any

from lxml import html as lxml_html
from parsel import Selector
from trafilatura import bare_extraction
from trafilatura.settings import Extractor
from trafilatura.xml import xmltotxt

from archive.dates import parse_date

from .items import BlogPost
from .pages import read_evidence

logger = logging.getLogger(__name__)
# trafilatura warns for every page it finds no article in; that is a normal outcome here.
logging.getLogger("trafilatura").setLevel(logging.ERROR)

EXTRACTOR = Extractor(
    output_format="python",
    with_metadata=True,
    comments=False,
    formatting=True,
    tables=True,
)
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
KANA = re.compile(r"[\u3040-\u30ff]")
HANGUL = re.compile(r"[\uac00-\ud7af]")
LATIN_WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")
ENTITY = re.compile(r"&(#\d+|#x[0-9a-fA-F]+|[a-zA-Z]+);")
TITLE_SEPARATORS = re.compile(r"\s*[|\-–—·:»]\s*")


def extract_post(url: str, html: str, *, feed_entry: dict[str, Any] | None = None) -> BlogPost | None:
    """Extract one post from its page, filling gaps from its feed entry.

    Args:
        url: the page's URL (used for relative links and metadata).
        html: the page as text.
        feed_entry: the feed's entry for this page (see ``crawler.feeds``), if any.

    Returns:
        The post, or None when the page holds no article text and the feed
        gives none either.
    """
    entry = feed_entry or {}
    sel = Selector(text=html)
    options = copy.copy(EXTRACTOR)
    options.url = options.source = url
    doc = bare_extraction(html, options=options)
    markdown = doc.text if doc is not None else None
    text = xmltotxt(doc.body, False) if doc is not None else None
    if not text and entry.get("content"):
        markdown = text = _html_to_text(entry["content"])
    if not text:
        logger.debug("no article: %s", url)
        return None
    ev = read_evidence(sel)
    site_name = sel.xpath('//meta[@property="og:site_name"]/@content').get()
    post = BlogPost(
        url=url,
        guid=entry.get("guid"),
        title=_clean(
            entry.get("title")
            or sel.xpath('//meta[@property="og:title"]/@content').get()
            or _single_h1(sel)
            or _strip_site_name(doc.title if doc else None, site_name)
        ),
        author=_clean(
            entry.get("author")
            or sel.xpath('//meta[@name="author"]/@content').get()
            or (doc.author if doc else None)
        ),
        published=entry.get("published")
        or parse_date(ev.published)
        or parse_date(doc.date if doc else None),
        updated=entry.get("updated")
        or parse_date(sel.xpath('//meta[@property="article:modified_time"]/@content').get()),
        summary=_clean(
            _html_to_text(entry["summary"]) if entry.get("summary") else None
        )
        or _clean(sel.xpath('//meta[@name="description"]/@content').get()),
        text=text,
        markdown=markdown,
        lang=detect_lang(text, ev.lang),
        tags=_tags(sel, entry),
    )
    post.word_count = word_count(text)
    return post


def _clean(value: str | None) -> str | None:
    value = " ".join((value or "").split())
    if ENTITY.search(value):
        value = html.unescape(value)  # themes that escape twice leave "&amp;" in titles
    return value or None


def _single_h1(sel: Selector) -> str | None:
    h1s = [" ".join(h.split()) for h in sel.xpath("//h1").xpath("string()").getall()]
    h1s = [h for h in h1s if h]
    return h1s[0] if len(h1s) == 1 else None


def _strip_site_name(title: str | None, site_name: str | None) -> str | None:
    if not title or not site_name:
        return title
    for part in TITLE_SEPARATORS.split(title):
        if part and part.strip() != site_name.strip():
            return title.replace(site_name, "").strip(" |-–—·:»")
    return title


def _tags(sel: Selector, entry: dict[str, Any]) -> list[str]:
    candidates = (
        entry.get("tags")
        or sel.xpath('//meta[@property="article:tag"]/@content').getall()
        or [t.strip() for t in sel.xpath('//a[contains(concat(" ", @rel, " "), " tag ")]').xpath("string()").getall()]
    )
    seen: dict[str, None] = {}
    for tag in candidates:
        tag = " ".join(tag.split()).lstrip("#")
        if tag and tag.lower() not in {t.lower() for t in seen}:
            seen[tag] = None
    return list(seen)


def _html_to_text(fragment: str) -> str:
    try:
        return lxml_html.fromstring(f"<div>{fragment}</div>").text_content().strip()
    except (ValueError, lxml_html.etree.ParserError):
        return fragment


def detect_lang(text: str, declared: str | None) -> str | None:
    """The text's language: its script when that is CJK, else the page's ``lang``."""
    sample = text[:5000]
    cjk = len(CJK.findall(sample))
    latin = sum(len(w) for w in LATIN_WORD.findall(sample))
    if cjk and cjk >= latin / 4:
        if KANA.search(sample):
            return "ja"
        return "ko" if len(HANGUL.findall(sample)) > cjk / 2 else "zh"
    code = (declared or "").split("-")[0].split("_")[0].lower()
    if code in {"zh", "ja", "ko"}:
        return None if latin else code
    return code or None


def word_count(text: str) -> int:
    """Latin words plus CJK characters, the usual measure for mixed text."""
    return len(LATIN_WORD.findall(text)) + len(CJK.findall(text))
