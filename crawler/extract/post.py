"""Extraction: (url, html) -> BlogPost, the only place trafilatura is used.

Pure and offline: no network, no archive. The text comes from trafilatura
(comments left out); title, author, dates and tags are chosen among every
candidate the feed entry and the page offer (``crawler.judge.metadata``), and all
candidates are kept as the post's provenance. ``extract_page`` makes the crawl's
finished post of what the spider hands over (``crawler.extract.post_page``).
"""

import copy
import html
import logging
import re
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from typing import Any, cast

from lxml import html as lxml_html
from parsel import Selector
from trafilatura import bare_extraction
from trafilatura.settings import Document, Extractor
from trafilatura.xml import xmltotxt

from archive.core.dates import parse_date
from archive.core.langs import iso639_1

from crawler.extract.article_media import article_media
from crawler.extract.langmodel import guesser
from crawler.extract.post_page import PostPage
from crawler.items import BlogPost
from crawler.judge.article import (
    CIPHERTEXT,
    PROTECTED_TEXT,
    TEXT_BLOCKS,
    article_body,
    article_document,
    drop_furniture,
    drop_line_numbers,
    drop_post_furniture,
    keep_link_blocks,
    protected,
    unseen,
)
from crawler.judge.encoding import page_text
from crawler.judge.metadata import Candidate, candidates
from crawler.judge.pages import page_lang, site_furniture
from crawler.judge.site import SiteParts, fold
from crawler.judge.titles import choose_title, site_name_parts

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
# A feed's full text wins over the page's extraction when this much longer.
FEED_TEXT_RATIO = 1.5
WHITE_SPACE = re.compile(r"\s+")
CONFLICT_SECONDS = 86_400
# A byline: a short line of the post's metadata, which may be joined by numbers and signs only.
MAX_BYLINE_CHARS = 120
BYLINE_REST = re.compile(r"[^\W\d_]")
# Below this many letters, a language guess is no better than the page's lang attribute.
MIN_LANGID_CHARS = 200
# An article with more text than this is extracted in parts of about this size: trafilatura
# holds about 20 times a document's size while it works (a 15 MB post would take 400 MB).
PART_CHARS = 1_000_000
# And in parts of this many blocks at most: trafilatura's time grows faster than the number of
# blocks it is given (45,000 paragraphs of Chinese, 1.4 MB, took 12.4 s whole, 4.5 in parts).
PART_BLOCKS = 2_000
# The guard: trafilatura's text of the whole page is kept instead of ours when ours is less than
# this share of it (our layer took the wrong block, or emptied the right one) and it holds at least
# GUARD_MIN_CHARS: less is what trafilatura takes of a page's menus around a post of a few lines,
# and what it adds of other posts' excerpts around a short post (600 characters around 50)...
GUARD_SHARE = 0.15
GUARD_MIN_CHARS = 800
# ... or 400 when the body our layer chose is one paragraph or list item: weak evidence of a post.
GUARD_MIN_CHARS_ONE_BLOCK = 400
# Against a long text (an article trafilatura finds where our layer kept a part of it), half.
GUARD_LONG_SHARE = 0.5
GUARD_LONG_CHARS = 2_000
# ... and only on pages of at most this many characters of text and elements: a huge post's
# tree is not held twice.
GUARD_MAX_CHARS = PART_CHARS
GUARD_MAX_ELEMENTS = 100_000
# trafilatura's text is a hidden element's when more than this share of its words are hidden ones.
UNSEEN_SHARE = 0.5
WORD = re.compile(r"\w+")
CODE_TAGS = ("script", "style")


def extract_page(page: PostPage, html_text: str | lxml_html.HtmlElement) -> BlogPost | None:
    """The crawl's post of a page judged one: ``extract_post`` with what the crawl knows of it,
    the feed's text when only the feed's content changed (``page.feed_edit``), and its source
    and the other URLs that led to it.

    Args:
        page: the page and its evidence; its ``body`` is not read (the caller decoded it).
        html_text: the page as text, or the tree ``parse_html`` made of it.
    """
    post = extract_post(page.url, html_text, feed_entry=page.feed_entry, site=page.site,
                        default_tz=page.default_tz, link_text=page.link_text)
    if post is None:
        return None
    if page.feed_edit and page.feed_entry:
        _feed_text(post, page.url, page.feed_entry)
    post.source_id = page.source_id
    post.aliases = page.aliases
    return post


def _feed_text(post: BlogPost, url: str, entry: dict[str, Any]) -> None:
    """The text of the feed entry's content instead of the page's, which did not change while
    the entry did; the page's text candidates stay in the provenance, not chosen."""
    # read as a page's bytes are read: a lone surrogate of a JSON feed becomes U+FFFD
    html_text = page_text(feed_page(entry["content"]).encode("utf-8", "surrogatepass"), "utf-8")
    from_feed = extract_post(url, html_text, feed_entry=entry)
    if from_feed is None or not from_feed.text:
        return
    post.text, post.markdown, post.word_count, post.lang = (
        from_feed.text, from_feed.markdown, from_feed.word_count, from_feed.lang)
    for candidate in post.provenance:
        if candidate["field"] == "text":
            candidate["chosen"] = 0
    post.provenance.append({"field": "text", "value": "the feed's content changed, the page did not",
                            "origin": "feed", "chosen": 1})


def feed_page(content: str) -> str:
    """A feed entry's content as a page that holds only it."""
    return f"<html><body><article>{content}</article></body></html>"


def extract_post(
    url: str,
    html_text: str | lxml_html.HtmlElement,
    *,
    feed_entry: dict[str, Any] | None = None,
    site: SiteParts | None = None,
    default_tz: tzinfo | None = None,
    link_text: str | None = None,
) -> BlogPost | None:
    """Extract one post from its page, reconciled with its feed entry.

    Args:
        url: the page's URL (used for relative links and metadata).
        html_text: the page as text, or the tree ``parse_html`` made of it (the caller can then
            let the text go before the extraction: a worker's peak on a 15 MB page is 15 MB lower).
        feed_entry: the feed's entry for this page (see ``crawler.discover.feeds``), if any.
        site: what the blog repeats on its pages (``crawler.judge.site``), never a post's title.
        default_tz: the blog's zone, for dates that name none.
        link_text: the text of a listing's link to the page, a title candidate.

    Returns:
        The post, or None when neither the page nor the feed holds article text.
        A post whose body is encrypted or behind a password is returned with its
        metadata, no text, and the reason in ``protected``.
    """
    entry = feed_entry or {}
    root = parse_html(html_text) if isinstance(html_text, str) else html_text
    sel = Selector(root=root, type="html")
    found = candidates(sel, url, entry, site=site, link_text=link_text)
    # what the page says its site is called (og:site_name, its host's name...): never its title,
    # whether or not the crawl has learned the blog's names yet (``extract`` of one page has not)
    site_names = [*(site or SiteParts()).names, *site_name_parts(root, url)]
    body = article_body(root)  # found before anything is taken out of the page
    post = BlogPost(url=url, guid=entry.get("guid"), protected=protected(root, body))
    # what trafilatura alone keeps of the page (it reads a copy: our layer changes the tree next)
    # a body the theme marks that holds nothing as sent may be an empty post: trafilatura's text of
    # the page around it is then refused when it is mostly the site's menus and sidebar
    empty_body = body is not None and not any(t.strip() for t in body.itertext())
    whole = whole_page(root, url, site_words=empty_body) if not post.protected or body is None else None
    if post.protected and body is None and readable(whole):
        post.protected = None  # a login form somewhere on a page whose article trafilatura reads
    keep_link_blocks(body)
    drop_line_numbers(root)
    drop_post_furniture(root)
    options = copy.copy(EXTRACTOR)
    options.url = options.source = url
    article = article_document(root, body)
    og_image = sel.xpath('//meta[@property="og:image"]/@content').get()
    if article is not None:
        post.media = article_media(article[-1], url, og_image)  # read before trafilatura changes the tree
        options.focus = "recall"  # the post's body alone, its furniture taken out: keep all of it
        doc, plain = _extract_article(article, options)
    else:
        plain = None
        drop_furniture(root)
        page_body = root.find("body")
        post.media = article_media(root if page_body is None else page_body, url, og_image)
        doc = extraction(root, options)
    if post.protected:
        post.text = post.markdown = ""
        post.provenance.append({"field": "text", "value": post.protected, "origin": "page", "chosen": 1})
    else:
        _choose_text(post, doc, entry, plain)
        if not post.text and article is not None:
            # the body the theme marks is the post, however little it holds (trafilatura keeps
            # nothing of a line or two): never the page's menus around it
            post.text = post.markdown = "\n".join(t.strip() for t in article[-1].itertext() if t.strip())
        one_block = body is not None and body.tag in TEXT_BLOCKS
        kept = guard(post, whole, floor=GUARD_MIN_CHARS_ONE_BLOCK if one_block else GUARD_MIN_CHARS)
        doc = doc if doc is not None or kept is None else kept
        whole = None  # its copy of the page let go before the metadata is read
        if not post.text and article is None:
            logger.debug("no article: %s", url)
            return None
    assert post.text is not None  # the page's, the feed's or the marked body's text, or "" (protected)
    if doc is not None:
        # read from the article alone, trafilatura's title would be the body's first heading
        guessed = (("author", doc.author), ("published", doc.date)) + ((("title", doc.title),) if article is None else ())
        found += [Candidate(f, v, "trafilatura") for f, v in guessed if v]
    _choose_metadata(post, found, default_tz, site_names)
    _drop_title_line(post)
    _drop_byline(post)
    post.summary = _summary(entry, sel)
    post.lang = detect_lang(post.text, page_lang(sel))
    post.word_count = word_count(post.text)
    return post


@dataclass
class WholePage:
    """The page as it came, copied before our layer changes the page's tree, for the guard;
    trafilatura reads it only when the guard needs its text."""

    tree: Any
    url: str
    chars: int  # of its text outside scripts and styles: about the most trafilatura can keep of it
    hidden: Counter[str] | None = None  # the words of what a reader never sees, once read
    hidden_chars: int = 0
    site_words: bool = False  # whether to read the words of the site's furniture (``site``)
    site: Counter[str] | None = None  # ... its menus, sidebars, header and footer, once read
    _doc: Document | None = None
    _read: bool = False

    def doc(self) -> Document | None:
        """trafilatura's document for it, or None when it finds no text (read once), and the
        words of its elements a reader never sees (``unseen``)."""
        if not self._read:
            options = copy.copy(EXTRACTOR)
            options.url = options.source = self.url
            options.with_metadata = False  # the page's metadata is read once, from our own document
            found = extraction(self.tree, options)  # it reads a copy of the tree
            self._doc, self._read = (found if found is not None and found.body is not None else None), True
            self.hidden = Counter()
            for el in self.tree.iter():
                if isinstance(el.tag, str) and el.tag not in CODE_TAGS and unseen(el) \
                        and not any(unseen(a) for a in el.iterancestors()):
                    text = " ".join(_texts(el))
                    self.hidden_chars += len(text)
                    self.hidden.update(WORD.findall(text.casefold()))
            if self.site_words:
                self.site = Counter()
                page = self.tree.find("body")  # whose classes name the whole page's template, not a part
                for el in page.iterdescendants() if page is not None else ():
                    if isinstance(el.tag, str) and site_furniture(el) \
                            and not any(site_furniture(a) for a in el.iterancestors() if a is not page and a.tag != "html"):
                        self.site.update(WORD.findall(" ".join(_texts(el)).casefold()))
            self.tree = None
        return self._doc

    def unseen_text(self, text: str) -> bool:
        """True when ``text`` is mostly words of elements a reader never sees, on a page that shows
        more than it hides (a theme's hidden notice); a page that hides its whole text until a
        script shows it is read as it will be shown."""
        if not self.hidden or self.hidden_chars * 2 > self.chars:
            return False
        return _mostly(text, self.hidden)

    def site_text(self, text: str) -> bool:
        """True when ``text`` is mostly words of the site's menus, sidebars, header and footer
        (read only for a page whose marked body is empty: an empty post, not a lost one)."""
        return bool(self.site and _mostly(text, self.site))


def _mostly(text: str, among: Counter[str]) -> bool:
    """True when more than ``UNSEEN_SHARE`` of the words of ``text`` are words ``among`` holds."""
    words = Counter(WORD.findall(text.casefold()))
    return sum((words & among).values()) > UNSEEN_SHARE * sum(words.values())


def _texts(root: Any) -> list[str]:
    """The texts inside ``root``, but its scripts' and styles' (the text a reader may be shown)."""
    out = [root.text or ""] if root.tag not in CODE_TAGS else []
    for el in root.iterdescendants():
        if isinstance(el.tag, str) and el.tag not in CODE_TAGS and el.text:
            out.append(el.text)
        if el.tail:
            out.append(el.tail)
    return out


def whole_page(root: Any, url: str, *, site_words: bool = False) -> WholePage | None:
    """A copy of the page as it came (trafilatura reads a script's JSON-LD ``articleBody`` too);
    None for a page over ``GUARD_MAX_CHARS`` characters of text outside scripts and styles, or
    over ``GUARD_MAX_ELEMENTS`` elements: not held twice."""
    elements = chars = 0
    for el in root.iter():
        elements += 1
        chars += len(el.tail or "") + (len(el.text or "") if isinstance(el.tag, str) and el.tag not in CODE_TAGS else 0)
        if elements > GUARD_MAX_ELEMENTS or chars > GUARD_MAX_CHARS:
            return None
    return WholePage(copy.deepcopy(root), url, chars, site_words=site_words)


def readable(whole: WholePage | None) -> bool:
    """True when trafilatura's text of the whole page is an article (``GUARD_MIN_CHARS`` or more)
    that neither asks for a password nor holds ciphertext: the page's password form is not the post's."""
    doc = whole.doc() if whole is not None else None
    if doc is None:
        return False
    text = xmltotxt(doc.body, False)
    return collapsed_length(text) >= GUARD_MIN_CHARS and not PROTECTED_TEXT.search(text) and not CIPHERTEXT.search(text)


def guard(post: BlogPost, whole: WholePage | None, *, floor: int = GUARD_MIN_CHARS) -> Document | None:
    """Keep trafilatura's text of the whole page (``whole``) instead of the post's when the post's
    is empty, under ``GUARD_SHARE`` of it (of ``floor`` characters or more) or under
    ``GUARD_LONG_SHARE`` of it (of ``GUARD_LONG_CHARS`` or more); the choice and its reason go to
    the provenance. Returns trafilatura's document when its text was kept, else None.

    Neither is what a reader never sees: ``article_body`` never chooses it while the page shows
    more than it hides, nor the guard trafilatura's text when that is mostly its words.

    A feed's text, chosen for being longer, is kept. trafilatura reads the page only when the
    post's text could be under that share of it (the page's own text bounds trafilatura's)."""
    if whole is None or any(p["field"] == "text" and p["origin"] == "feed" for p in post.provenance):
        return None
    ours = collapsed_length(post.text or "")
    if ours and ours >= GUARD_SHARE * whole.chars and (
            whole.chars < GUARD_LONG_CHARS or ours >= GUARD_LONG_SHARE * whole.chars):
        return None
    doc = whole.doc()
    if doc is None:
        return None
    theirs = xmltotxt(doc.body, False)
    kept = collapsed_length(theirs)
    if not kept or whole.unseen_text(theirs) or whole.site_text(theirs):
        return None
    if not ours:
        reason = "our layer kept no text"
    elif (ours < GUARD_SHARE * kept and kept >= floor) or (
            ours < GUARD_LONG_SHARE * kept and kept >= GUARD_LONG_CHARS):
        reason = f"our layer kept {ours} characters"
    else:
        return None
    post.provenance = [p for p in post.provenance if p["field"] != "text"]
    post.text, post.markdown = theirs, doc.text
    value = f"{kept} characters, trafilatura on the whole page: {reason}"
    post.provenance.append({"field": "text", "value": value, "origin": "trafilatura", "chosen": 1})
    return doc


def _extract_article(page: Any, options: Extractor) -> tuple[Document | None, str | None]:
    """trafilatura's document for a page that holds the article alone; a huge article is
    extracted in parts (each of its blocks whole, in order) and their texts joined: its
    Markdown as the document's text, and its plain text (else None: read from the body)."""
    article = page[-1][0]
    while len(article) == 1 and isinstance(article[0].tag, str):  # down the wrappers, to the blocks
        article = article[0]
    parts: list[list[Any]] = [[]]
    sizes = [0]
    for child in article:
        if sizes[-1] >= PART_CHARS or len(parts[-1]) >= PART_BLOCKS:
            parts.append([])
            sizes.append(0)
        sizes[-1] += len(child.text_content()) if isinstance(child.tag, str) else 0
        parts[-1].append(child)
    if len(parts) > 1 and sizes[-1] < PART_CHARS / 2 and len(parts[-1]) < PART_BLOCKS / 2:
        short = parts.pop()  # no short last part, which trafilatura would read on its own terms
        parts[-1] += short
    if len(parts) < 2:
        return extraction(page, options), None
    doc: Document | None = None
    markdown: list[str | None] = []
    plain: list[str] = []
    rest = copy.copy(options)
    rest.with_metadata = False  # the metadata is the first part's (and the page's): read once
    for i in range(len(parts)):
        piece = lxml_html.Element("html")
        if i == 0 and page.find("head") is not None:
            piece.append(page.find("head"))  # the metadata trafilatura reads is in the first part
        holder = lxml_html.etree.SubElement(lxml_html.etree.SubElement(piece, "body"), "article")
        holder.extend(parts[i])  # moved, not copied: the parts together hold what the article held
        parts[i] = []  # once extracted, a part's markup is let go: the page shrinks as its text grows
        found = extraction(piece, options if i == 0 else rest)
        del piece, holder
        if found is None or found.body is None:
            continue
        markdown.append(found.text)
        # its plain text read from the part's body at once, the body then let go: read from the
        # whole body at the end (the same text), a 15 MB post took about 50 MB more
        plain.append(xmltotxt(found.body, False))
        found.body = lxml_html.etree.Element("body")  # trafilatura's empty body, as a document without one holds
        if doc is None:
            doc = found
    if doc is None:
        return None, None
    # each part's Markdown ends its last block with a line break: one blank line between parts, as
    # between the blocks of one part, and the last part's ending kept
    last = markdown[-1] or ""
    doc.text = doc.raw_text = "\n\n".join(t.rstrip("\n") for t in markdown if t) + last[len(last.rstrip("\n")):]
    del markdown
    return doc, "\n".join(t for t in plain if t)


def _choose_text(post: BlogPost, doc: Document | None, entry: dict[str, Any], plain: str | None = None) -> None:
    page_markdown = doc.text if doc is not None else None
    page_text = plain if plain is not None else xmltotxt(doc.body, False) if doc is not None else None
    feed_html = entry.get("content")
    feed = _feed_article(feed_html) if feed_html else None
    # the text a reader sees of each: white space collapsed, the feed's code gutters taken out
    feed_text = " ".join(feed.xpath("string(//article)").split()) if feed is not None else ""
    page_chars = collapsed_length(page_text or "") if feed_text else 0
    if feed_text and len(feed_text) > FEED_TEXT_RATIO * page_chars:
        feed_doc = extraction(feed, EXTRACTOR)
        post.markdown = feed_doc.text if feed_doc is not None else feed_text
        post.text = xmltotxt(feed_doc.body, False) if feed_doc is not None else feed_text
        reason = f"feed content ({len(feed_text)} characters; the page gave {page_chars})"
        post.provenance.append({"field": "text", "value": reason, "origin": "feed", "chosen": 1})
    else:
        post.text, post.markdown = page_text, page_markdown
        if page_text:
            post.provenance.append({"field": "text", "value": f"{len(page_text)} characters", "origin": "page", "chosen": 1})


def extraction(tree: Any, options: Extractor) -> Document | None:
    """trafilatura's document of ``tree``, or None when it finds no text."""
    # a Document: the dict trafilatura's hints also name is as_dict's, never asked for here
    return cast(Document | None, bare_extraction(tree, options=options))


def collapsed_length(text: str) -> int:
    """``len(" ".join(text.split()))``, without the list of words (a huge post's takes hundreds of MB)."""
    length = len(text)
    for run in WHITE_SPACE.finditer(text):
        # a run between words becomes one space; at either end, nothing
        length -= run.end() - run.start() - (0 < run.start() and run.end() < len(text))
    return length


def _feed_article(feed_html: str) -> Any:
    """A feed entry's content as a page's article, cleaned as the page's body is: its code without
    line-number gutters, its paragraphs and items that are only links kept as text."""
    root = parse_html(f"<html><body><article>{feed_html}</article></body></html>")
    drop_line_numbers(root)
    keep_link_blocks(root.find(".//article"))
    return root


def _drop_title_line(post: BlogPost) -> None:
    """The plain text without the title as its first line (the Markdown keeps its heading)."""
    first, _, rest = (post.text or "").partition("\n")
    if post.title and fold(first) == fold(post.title):
        post.text = rest.lstrip("\n")


def _drop_byline(post: BlogPost) -> None:
    """The text and the Markdown without a first line made only of the post's own metadata: two
    of its author, tags, categories and dates at least, and nothing else but numbers and signs
    (a theme's byline beside the title, ``一度 · Electron``, which no furniture class names)."""
    first, _, rest = (post.text or "").partition("\n")
    if len(first) > MAX_BYLINE_CHARS or not first.strip():
        return
    left, found = fold(first), 0
    names = [post.author, *post.tags, *post.categories, *(d[:10] for d in (post.published, post.updated) if d)]
    for name in sorted({fold(n) for n in names if n and n.strip()}, key=len, reverse=True):
        if name in left:
            left, found = left.replace(name, " "), found + 1
    if found < 2 or BYLINE_REST.search(left):
        return
    post.text = rest.lstrip("\n")
    lines = (post.markdown or "").split("\n")
    at = next((i for i, line in enumerate(lines) if line.strip() and not line.startswith("# ")), None)
    if at is not None and fold(lines[at].strip("*_ ")) == fold(first):
        post.markdown = "\n".join(lines[:at] + lines[at + 1:]).replace("\n\n\n", "\n\n", 1)


def parse_html(html_text: str) -> Any:
    """The page as one lxml tree, read once for metadata, the article and trafilatura; without
    its HTML comments, as trafilatura reads a page it parses itself: given a tree, it drops each
    comment with the text after it (``When <!-- -->President ...`` would keep "When")."""
    try:  # a parser per page: lxml's parsers are not to be shared between threads
        parser = lxml_html.HTMLParser(remove_comments=True)
        return lxml_html.document_fromstring(html_text or "<html></html>", parser=parser)
    except (ValueError, lxml_html.etree.ParserError):
        return lxml_html.document_fromstring("<html></html>")


def _choose_metadata(post: BlogPost, found: list[Candidate], default_tz: tzinfo | None, site_names: list[str]) -> None:
    titles = [c for c in found if c.field == "title"]
    best = choose_title([(c.value, c.origin) for c in titles], site_parts=site_names)
    # the author most sources name (a feed's site-wide name against the page's byline, JSON-LD, meta)
    authors = Counter(fold(c.value) for c in found if c.field == "author")
    author = max(authors, key=lambda a: (authors[a], -list(authors).index(a))) if authors else None
    # the chosen title first, the other candidates after it in their order
    chosen: dict[str, Candidate] = {}
    if best is not None:
        chosen["title"] = Candidate("title", best[0], best[1])
        post.title = html.unescape(best[0]) if ENTITY.search(best[0]) else best[0]
    for c in found:
        value = c.value
        if c.field in ("published", "updated"):
            value = parse_date(value, default_tz=default_tz)
            if value is None or (c.origin == "trafilatura" and value.startswith(date.today().isoformat())):
                continue  # unreadable, or a date guessed from the crawl day
        elif c.field == "title" and ENTITY.search(value):
            value = html.unescape(value)  # themes that escape twice leave "&amp;" in titles
        post.provenance.append({"field": c.field, "value": value, "origin": c.origin, "chosen": 0})
        if c.field == "title":
            if best is not None and c.origin == best[1]:
                post.provenance[-1]["chosen"] = 1
            continue
        if c.field == "author" and fold(c.value) != author:
            continue
        if c.field not in chosen:
            chosen[c.field] = c
            post.provenance[-1]["chosen"] = 1
            setattr(post, c.field, value)
    dates = [p for p in post.provenance if p["field"] == "published"]
    feed = next((p["value"] for p in dates if p["origin"] == "feed"), None)
    page = next((p for p in dates if p["origin"] not in ("feed", "trafilatura", "URL date")), None)
    if feed and page and abs(_seconds(feed) - _seconds(page["value"])) > CONFLICT_SECONDS:
        post.conflicts.append(f"published: feed says {feed}, {page['origin']} says {page['value']}")


def _seconds(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _summary(entry: dict[str, Any], sel: Selector) -> str | None:
    summary = _html_to_text(entry["summary"]) if entry.get("summary") else None
    summary = summary or sel.xpath('//meta[@name="description"]/@content').get()
    return " ".join(summary.split()) or None if summary else None


def _html_to_text(fragment: str) -> str:
    try:
        return lxml_html.fromstring(f"<div>{fragment}</div>").text_content().strip()
    except (ValueError, lxml_html.etree.ParserError):
        return fragment


def detect_lang(text: str, declared: str | None) -> str | None:
    """The text's language (ISO 639-1, ``archive.core.langs``): its script when that is CJK, else
    py3langid's guess, which the page's ``lang`` settles when the text is too short to tell."""
    sample = text[:5000]
    cjk = len(CJK.findall(sample))
    latin = sum(len(w) for w in LATIN_WORD.findall(sample))
    if cjk and cjk >= latin / 4:
        if KANA.search(sample):
            return "ja"
        return "ko" if len(HANGUL.findall(sample)) > cjk / 2 else "zh"
    code = iso639_1(declared)
    if latin < MIN_LANGID_CHARS:
        return None if code in {"zh", "ja", "ko"} else code
    guess, _ = guesser().classify(sample)
    return iso639_1(str(guess))


def word_count(text: str) -> int:
    """Latin words plus CJK characters, the usual measure for mixed text."""
    return sum(1 for _ in LATIN_WORD.finditer(text)) + sum(1 for _ in CJK.finditer(text))
