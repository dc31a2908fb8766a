"""Does a page need a browser? Evidence read from its HTTP answer (issue 37, docs/rendering.md).

Some blogs send no article in their HTML: the page is a shell that its scripts fill (docsify
renders Markdown in the browser, single-page-app themes fetch posts as JSON). ``render_reason``
says why a page is such a shell, from the page and what the blog's other pages and its feed said
of it, or None when its HTML holds its text. Pure: it reads an lxml tree, never the network.

The shape of a shell (an empty element with an id, a script bundle, a ``<noscript>`` that asks for
JavaScript) is also the shape of every comment, share, search and analytics widget on a static
page (Disqus's ``<div id="disqus_thread">`` comes with such a ``<noscript>``). So a shape counts
only on a page that shows no text of its own: the title its feed entry gives it, where there is
one, or else a heading or a paragraph. A page whose text is in its HTML is never rendered, whatever
widgets it carries; what a browser would add is then measured against the feed (``feed_text``).
"""

import re
import unicodedata

from lxml import etree

# A script that boots a client-side renderer, by the global it sets up.
BOOTSTRAPS = re.compile(r"window\.\$docsify\b|window\.__NUXT__\b|window\.__INITIAL_STATE__\b|\bcreateApp\s*\(|"
                        r"ReactDOM\.(?:render|createRoot)\s*\(")
ASKS_FOR_SCRIPTS = re.compile(r"enable javascript|javascript (?:is )?(?:required|disabled|needed)|turn on javascript|"
                              r"requires javascript|needs javascript|启用\s*javascript|开启\s*javascript", re.I)
WORD = re.compile(r"\w+")
SHELL_CHARS = 200  # a page with less text than this holds no article
SHORT_SHARE = 0.3  # a page with less than this share of its feed entry's text lost the rest to its scripts
FEED_CHARS = 500  # a feed entry shorter than this (a summary) says nothing of the page's length
UNSEEN = {"script", "style", "noscript", "template", "head"}
CONTENT = ("h1", "h2", "h3", "h4", "h5", "h6", "p", "pre", "blockquote", "table")  # a page's own text, not its menus
FIELDS = {"input", "select", "textarea"}  # a form's fields, whose widget may fill an empty element beside them


def render_reason(root: etree._Element, *, feed_text: str | None = None, title: str | None = None,
                  blog_has_text: bool = False) -> str | None:
    """Why the page's text is written by its scripts (a short phrase), or None when its HTML holds it.

    ``feed_text``: the text of the page's feed entry, if any; ``title``: the title its feed entry
    gives it, if any; ``blog_has_text``: the blog's other pages, as fetched, held an article's text.
    """
    scripts = list(root.iter("script"))
    text = visible_text(root)
    shell = len(text) < SHELL_CHARS and not shows_own_text(root, text, title)
    for script in scripts:
        if script.text and (found := BOOTSTRAPS.search(script.text)):
            if shell or found.group(0).startswith("window.$docsify"):
                return f"a client-side renderer boots it ({found.group(0).rstrip('( ')})"
    if shell:
        if any(ASKS_FOR_SCRIPTS.search(noscript.text_content()) for noscript in root.iter("noscript")):
            return "its <noscript> asks for JavaScript"
        if any(s.get("src") for s in scripts) and (mount := empty_mount(root)) is not None:
            return f"an empty mount element (#{mount}) and a script bundle"
    if feed_text and len(feed_text) >= FEED_CHARS and len(text) < SHORT_SHARE * len(feed_text):
        return f"its text ({len(text)} characters) is far shorter than its feed entry's ({len(feed_text)})"
    if blog_has_text and shell and scripts:
        return "no article text, where the blog's other pages have one"
    return None


def shows_own_text(root: etree._Element, text: str, title: str | None) -> bool:
    """Whether the page's HTML shows a text of its own: the title its feed gives it (when it has
    one), else a heading or a paragraph with words."""
    if title and (wanted := _words(title)):
        return wanted in _words(text)
    body = root.find("body")
    return body is not None and any(
        " ".join(element.itertext()).strip() for element in body.iter(*CONTENT) if not _unseen(element))


def _words(text: str) -> str:
    """The text's words alone, folded: a title printed with other quotes, dashes or entities still matches."""
    return " ".join(WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


def _unseen(element: etree._Element) -> bool:
    return any(isinstance(a.tag, str) and a.tag in UNSEEN for a in element.iterancestors())


def visible_text(root: etree._Element) -> str:
    """The page's text as a reader without scripts sees it, its runs of white space made one.

    Walked with a stack of its own, not recursed: a page may nest its elements deeper than
    Python's stack allows."""
    body = root.find("body")
    parts: list[str] = []
    stack: list[etree._Element | tuple[etree._Element]] = [] if body is None else [body]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):  # an element whose subtree is read: its tail follows
            parts.append(item[0].tail or "")
        elif isinstance(item.tag, str):  # not a comment
            if item.tag not in UNSEEN:
                parts.append(item.text or "")
            for child in reversed(item):
                stack += [(child,), child]
    return " ".join(" ".join(parts).split())


def empty_mount(root: etree._Element) -> str | None:
    """The id of an empty element with an id in the page's body, where a script mounts its app.

    One beside a form's field (a search box's results) is the output of that widget, not a mount.
    """
    body = root.find("body")
    for element in [] if body is None else body.iter("div", "main", "section", "article"):
        if element.get("id") and len(element) == 0 and not (element.text or "").strip() and not _beside_field(element):
            return element.get("id")
    return None


def _beside_field(element: etree._Element) -> bool:
    """Whether the element shares its parent (not the body, where an app's mount sits beside the
    site's header and its search form) with a form's field, or with an element holding one."""
    parent = element.getparent()
    return parent is not None and parent.tag != "body" and any(
        sibling is not element and isinstance(sibling.tag, str) and next(sibling.iter(*FIELDS), None) is not None
        for sibling in parent)
