"""The article's own tree, made ready for trafilatura, and what it says of itself.

Pure functions on an lxml HTML tree:

- ``protected``: the post's body is encrypted or behind a password (a password
  form in the article, with or without ciphertext beside it);
- ``keep_link_blocks``: paragraphs and list items of the article body that are
  only a link are the author's text (a reading list, an index of posts), and
  trafilatura would drop them as link-dense;
- ``drop_line_numbers``: code blocks lose the theme's line-number gutter;
- ``drop_post_furniture``: the blocks about the post (byline, dates, word count,
  reading time, tags, table of contents, sharing) are not its text.
"""

import copy
import re
from collections import Counter
from collections.abc import Iterator

from lxml import etree, html

from archive.core.urls import host_of

from crawler.judge.pages import DATE_TEXT, LABEL, furniture_marked, marks, site_furniture

# A run of base64 or hex with no space: what encryption plugins put in the page.
CIPHERTEXT = re.compile(r"[A-Za-z0-9+/=]{400,}|[0-9a-fA-F]{400,}")
PROTECTED_TEXT = re.compile(
    r"password[- ]protected|enter (?:the |your )?password|password is required|"
    r"输入密码|请输入.{0,6}密码|密码保护|加密文章|需要密码|パスワードを入力|パスワード保護",
    re.I,
)
_PASSWORD_INPUT = etree.XPath('//input[translate(@type, "PASWORD", "pasword")="password"]')
_BODY = (
    etree.XPath('//*[@itemprop="articleBody"]'),
    etree.XPath("//article"),
    etree.XPath('//main | //*[@role="main"]'),
)
TEXT_BLOCKS = ("p", "pre", "li", "blockquote", "td")  # what holds a post's text
BLOCKS = {"p", "div", "pre", "ul", "ol", "li", "dl", "blockquote", "table", "h1", "h2", "h3", "h4", "h5", "h6",
          "section", "article", "figure", "header", "footer", "nav", "aside", "form", "details", "hr", "main"}
# links with no text to an anchor of the page, or none: code lines' names and numbers
_EMPTY_ANCHORS = etree.XPath(".//a[not(@href) or starts-with(@href, '#')][not(normalize-space())][not(*)]")
_NOT_CONTENT = etree.XPath(".//script | .//style | .//noscript | .//template | .//button | .//svg")
# a footnote's link back to where it is cited (↩): with it, trafilatura takes a short note for links
_FOOTNOTE_BACKLINKS = etree.XPath(
    ".//a[@role='doc-backlink' or re:test(@class, '(^|\\s)(footnote-back(ref)?|reversefootnote|footnote-return)(\\s|$)')]",
    namespaces={"re": "http://exslt.org/regular-expressions"})
BODY_SHARE = 0.5  # of the page's text that the post's body holds at least
DENSE_SHARE = 0.9  # ... and the deepest element found without markup
# Inside the body, blocks of links that are navigation of the post, not its text.
_NOT_TEXT = re.compile(r"toc|table-of-contents|tag|categor|share|social|related|pager|pagination|"
                       r"post-nav|breadcrumb|comment|meta|copyright|license|reward|donate", re.I)
_LINK_BLOCKS = etree.XPath(".//*[self::li or self::p][.//a]")
# What a reader never sees: elements hidden by an attribute or an inline style, templates, what
# shows only without scripts, and scripts and styles (a table cell's script is not its text).
_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!important\s*)?(?:;|$)", re.I)
UNSEEN_TAGS = frozenset({"template", "noscript", "script", "style"})
LINE_NUMBER_CLASS = re.compile(r"(?:^|\s)(?:ln|lnt|lntd|lineno|linenos|line-?numbers?|gutter|rouge-gutter|"
                               r"hljs-ln-n(?:umbers?)?|hljs-ln-numbers|code-line-number)(?:\s|$)", re.I)
_CODE_TABLES = etree.XPath("//table[.//pre or .//code]")
_CODE_SPANS = etree.XPath("//pre//*[@class][not(self::code)] | //code//*[@class]")  # not the language of a <code>
NUMBERS = re.compile(r"^[\d\s]+$")
# Class or id of a block about the post rather than of it, as themes name them.
ABOUT_POST = re.compile(
    r"(?:^|[\s_-])(?:post|entry|article|page|blog)[-_]?(?:meta|info|date|time|byline|tags?|categor\w*|"
    r"footer|copyright|licen[sc]\w*|share|sharing|reward|nav\w*|pager)(?:$|[\s_-])|"
    r"(?:^|\s)(?:byline|meta|post-meta|reading-time|readtime|word-?count|toc|table-of-contents|breadcrumbs?|"
    r"pagination|pager|share|social-share)(?:$|\s)|"
    r"[\w-][-_](?:meta|date|dates|byline|tags|categories|info)(?:$|\s)",
    re.I,
)
MAX_ABOUT_CHARS = 300
# A line that is only the post's date, with or without its label: its byline, not its text.
ONLY_A_DATE = re.compile(r"^\W*(?:" + LABEL + r")?\W*(?:" + DATE_TEXT.pattern + r")\W*$", re.I)
_DATE_LINES = etree.XPath("//body//*[self::p or self::div or self::span or self::time or self::small][string-length(normalize-space()) < 60]")
# classed elements outside code: a highlighter's classes (hljs "meta", "tag", "title") are the code's
_CLASSED = etree.XPath("//body//*[@class or @id][not(self::article or self::main or self::pre or self::code)]"
                       "[not(ancestor::pre or ancestor::code)]")


def article_body(root: etree._Element) -> etree._Element | None:
    """The element holding the post's body: ``itemprop=articleBody``, an ``<article>`` or ``<main>``,
    whichever first holds most of the page's text (a theme's prev/next cards are articles too).
    What a reader never sees (``unseen``) is never the body, unless the page hides more text than
    it shows (until a script shows it)."""
    mass = text_mass(root, seen=True)
    every = text_mass(root)
    if mass.get(root, 0) * 2 < every.get(root, 0):
        mass = every
    total = mass.get(root, 0)
    for path in _BODY:
        holding = [el for el in path(root) if mass.get(el, 0) >= BODY_SHARE * total]
        if len(holding) == 1:
            return holding[0]
    return _densest(root, mass, total)


def _densest(root: etree._Element, mass: dict, total: int) -> etree._Element | None:
    """The deepest element that holds nearly all the page's text, when the theme marks none."""
    node = root.find("body")
    if node is None or not total:
        return None
    while True:
        child = next((c for c in node if mass.get(c, 0) >= DENSE_SHARE * total), None)
        # not below the post's own paragraphs: an introduction before its first section is its text
        if child is None or (node.tag != "body" and any(
                c is not child and c.tag in TEXT_BLOCKS and mass.get(c, 0) for c in node)):
            return node if node.tag != "body" else None
        node = child


def block_texts(root: etree._Element) -> Iterator[tuple[str, etree._Element]]:
    """Every piece of text inside a paragraph, list item, code block, quote or table cell below
    ``root``, with the element whose text or tail it is: what ``.//p//text() | ...`` and
    ``getparent()`` give, in one walk (libxml2 takes time quadratic in the number of paragraphs
    for that XPath, in one call that no time limit can stop)."""
    for block in root.iter(*TEXT_BLOCKS):
        if block is root or any(a.tag in TEXT_BLOCKS for a in _up_to(block, root)):
            continue  # its text is its outer block's
        for el in block.iter():
            if el.text and isinstance(el.tag, str):
                yield el.text, el
            if el.tail and el is not block:
                yield el.tail, el


def _up_to(el: etree._Element, root: etree._Element) -> Iterator[etree._Element]:
    for a in el.iterancestors():
        if a is root:
            return
        yield a


def text_mass(root: etree._Element, *, seen: bool = False) -> dict[etree._Element, int]:
    """Per element, the characters of paragraphs, list items, code and quotes it holds:
    text, not menus: neither links' text (but paragraphs and items that are only links, a reading
    list's) nor what sidebars, comments or other posts' cards hold;
    with ``seen``, nor what a reader never sees (``unseen``)."""
    mass: dict[etree._Element, int] = {}
    furniture: dict[etree._Element, bool] = {}

    link_only: dict[etree._Element, bool] = {}

    def left_out(el: etree._Element) -> bool:
        if el not in furniture:
            furniture[el] = site_furniture(el) or (seen and unseen(el))
        return furniture[el]

    home = own_host(root)

    def link_text(chain: list[etree._Element]) -> bool:
        """A link's text, unless its paragraph or list item is only links out of the site: a
        reading list is text (a list of the site's own posts is its navigation)."""
        block = next((el for el in chain if el.tag in ("p", "li")), None)
        if block is None:
            return True
        if block not in link_only:
            links = list(block.iter("a"))
            text = "".join("".join(a.xpath("string()").split()) for a in links)
            link_only[block] = text == "".join(block.xpath("string()").split()) and all(
                _host(a.get("href", "")) not in ("", home) for a in links)
        return not link_only[block]

    for text, parent in block_texts(root):
        size = len("".join(text.split()))
        if not size:
            continue
        chain = [parent, *parent.iterancestors()]
        if any(left_out(el) for el in chain) or (any(el.tag == "a" for el in chain) and link_text(chain)):
            continue
        for el in chain:
            mass[el] = mass.get(el, 0) + size
    return mass


def own_host(root: etree._Element) -> str | None:
    """The page's own host, as its canonical link or ``og:url`` names it."""
    for url in root.xpath('//link[@rel="canonical"]/@href | //meta[@property="og:url"]/@content'):
        if _host(url):
            return _host(url)
    return None


def _host(href: str) -> str:
    """The host of an absolute link (``https://h/``, ``//h/``), lower-cased; "" for a relative one
    or one that is no URL (``http://[::1``)."""
    return host_of(href.strip()) if href.strip().startswith(("http:", "https:", "//")) else ""


def unseen(el: etree._Element) -> bool:
    """True when a reader never sees ``el``: a ``hidden`` or ``aria-hidden="true"`` element, one an
    inline style hides (``display: none``, ``visibility: hidden``), a template, a script, a style, or
    what shows only where scripts do not run (``<noscript>``)."""
    return (el.tag in UNSEEN_TAGS or el.get("hidden") is not None or el.get("aria-hidden") == "true"
            or bool(_HIDDEN_STYLE.search(el.get("style") or "")))


def article_document(root: etree._Element, body: etree._Element | None) -> etree._Element | None:
    """A page of the article ``body`` alone (with a copy of the page's ``<head>``); None when
    there is no body (see ``article_body``). The body is moved out of ``root``, not copied: a
    15 MB post's tree is not held twice while it is extracted.

    Given the whole page, trafilatura takes in menus, headers and footers when
    the post is short; given the body the theme marks, it keeps the post only.
    """
    if body is None:
        return None
    page = html.Element("html")
    head = root.find("head")
    if head is not None:
        page.append(copy.deepcopy(head))
    page.append(html.Element("body"))
    article = body
    article.tail = None
    page[-1].append(article)
    for el in [*_NOT_CONTENT(article), *_FOOTNOTE_BACKLINKS(article)]:
        el.drop_tree()
    # the same label on several folded blocks (Quarto's "Code") is the theme's, not the author's:
    # trafilatura makes each <summary> a heading, and then loses the post's own headings
    labels = Counter(" ".join(el.xpath("string()").split()) for el in article.iter("summary"))
    for el in [el for el in article.iter("summary") if labels[" ".join(el.xpath("string()").split())] > 1]:
        el.drop_tree()
    for anchor in _EMPTY_ANCHORS(article):  # trafilatura weighs them as links, and drops short code
        anchor.drop_tag()
    # what the body holds of the site (a sidebar inside <main>, a header, a footer) is not the post
    for el in [el for el in article.iterdescendants() if isinstance(el.tag, str) and site_furniture(el)]:
        if el.getparent() is not None:
            el.drop_tree()
    # trafilatura drops the text a <div> holds outside paragraphs (display math, a renderer's
    # blocks): inside the post's body, such a div is a paragraph
    for div in list(article.iter("div")):
        if div is not article and not any(isinstance(d.tag, str) and d.tag in BLOCKS for d in div.iterdescendants()) \
                and div.text_content().strip():
            div.tag = "p"
    return page


def protected(root: etree._Element, body: etree._Element | None) -> str | None:
    """Why the post's ``body`` cannot be read (encrypted, or behind a password), or None."""
    scope = body if body is not None else root
    inputs = [i for i in _PASSWORD_INPUT(root) if body is None or _within(i, body)]
    if not inputs:
        return None  # without a password form, the text need not be read (on a 15 MB post: 200 MB)
    text = " ".join(scope.xpath("string()").split())
    cipher = max((len(m) for m in CIPHERTEXT.findall(etree.tostring(scope, encoding="unicode"))), default=0)
    if cipher:
        return f"encrypted: a password form and {cipher} characters of ciphertext"
    if PROTECTED_TEXT.search(text):
        return "behind a password: the page shows a password form instead of the post"
    return None


def _within(element: etree._Element, ancestor: etree._Element) -> bool:
    return any(a is ancestor for a in element.iterancestors())


def keep_link_blocks(body: etree._Element | None) -> None:
    """Unwrap the links of the body's paragraphs and list items that are only links.

    trafilatura drops link-dense blocks, which takes reading lists and indexes
    of posts out of the author's text; without the ``<a>`` (Markdown output
    keeps no links anyway) they are text like any other.
    """
    if body is None:
        return
    for block in _LINK_BLOCKS(body):
        if _navigation(block, body):
            continue
        links = "".join(a.xpath("string()") for a in block.iter("a"))
        if links.split() and "".join(links.split()) == "".join(block.xpath("string()").split()):
            for a in list(block.iter("a")):
                a.drop_tag()


def _navigation(block: etree._Element, body: etree._Element) -> bool:
    """True when ``block``, or what holds it inside the body, is the post's navigation or furniture."""
    el: etree._Element | None = block
    while el is not None and el is not body:
        if _NOT_TEXT.search(marks(el)) or site_furniture(el):
            return True
        el = el.getparent()
    return False


def drop_line_numbers(root: etree._Element) -> None:
    """Remove line-number gutters of code blocks (a table cell of numbers beside the code, or number
    spans) and the classes of their highlighter's spans, which style the code and nothing else:
    trafilatura takes some of them (hljs's ``meta`` of a ``#include`` line) for a page's furniture."""
    for table in _CODE_TABLES(root):
        for row in table.iter("tr"):
            cells = [c for c in row if c.tag in ("td", "th")]
            if len(cells) >= 2 and NUMBERS.match(cells[0].xpath("string()") or "x") \
                    and any(c.xpath(".//pre or .//code") for c in cells[1:]):
                cells[0].drop_tree()
    for span in _CODE_SPANS(root):
        if LINE_NUMBER_CLASS.search(span.get("class", "")) and NUMBERS.match(span.xpath("string()") or "x"):
            span.drop_tree()
        else:
            del span.attrib["class"]


def drop_furniture(root: etree._Element) -> None:
    """Remove what a class or id marks as the site's (sidebars, widgets, comments, other posts'
    cards, a reward box): for a page whose post body no markup tells apart."""
    for el in [el for el in root.iter() if isinstance(el.tag, str) and furniture_marked(el)]:
        if el.getparent() is not None:
            el.drop_tree()


def drop_post_furniture(root: etree._Element) -> None:
    """Remove the short blocks about the post (its byline, dates, tags, reading time, table
    of contents), which themes put in its article beside its text, and lines that are only
    its date."""
    for el in _DATE_LINES(root):
        if el.getparent() is not None and ONLY_A_DATE.match(" ".join(el.xpath("string()").split())):
            el.drop_tree()
    for el in _CLASSED(root):
        if el.getparent() is None or not ABOUT_POST.search(marks(el)):
            continue
        if el.xpath(".//h1 or .//pre or .//article"):
            continue
        if len(" ".join(el.xpath("string()").split())) <= MAX_ABOUT_CHARS:
            el.drop_tree()
