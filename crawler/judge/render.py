"""Does a page need a browser? Evidence read from its HTTP answer (issue 37, docs/rendering.md).

Some blogs send no article in their HTML: the page is a shell that its scripts fill (docsify
renders Markdown in the browser, single-page-app themes fetch posts as JSON). ``render_reason``
says why a page is such a shell, from the page and what the blog's other pages and its feed said
of it, or None when its HTML holds its text. Pure: it reads an lxml tree, never the network.
"""

import re

from lxml import etree

# A script that boots a client-side renderer, by the global it sets up.
BOOTSTRAPS = re.compile(r"window\.\$docsify\b|window\.__NUXT__\b|window\.__INITIAL_STATE__\b|\bcreateApp\s*\(|"
                        r"ReactDOM\.(?:render|createRoot)\s*\(")
ASKS_FOR_SCRIPTS = re.compile(r"enable javascript|javascript (?:is )?(?:required|disabled|needed)|turn on javascript|"
                              r"requires javascript|needs javascript|启用\s*javascript|开启\s*javascript", re.I)
SHELL_CHARS = 200  # a page with less text than this holds no article
SHORT_SHARE = 0.3  # a page with less than this share of its feed entry's text lost the rest to its scripts
FEED_CHARS = 500  # a feed entry shorter than this (a summary) says nothing of the page's length
UNSEEN = {"script", "style", "noscript", "template", "head"}
FIELDS = {"input", "select", "textarea"}  # a form's fields, whose widget may fill an empty element beside them


def render_reason(root: etree._Element, *, feed_text: str | None = None, blog_has_text: bool = False) -> str | None:
    """Why the page's text is written by its scripts (a short phrase), or None when its HTML holds it.

    ``feed_text``: the text of the page's feed entry, if any; ``blog_has_text``: the blog's other
    pages, as fetched, held an article's text.
    """
    scripts = list(root.iter("script"))
    text = visible_text(root)
    for script in scripts:
        if script.text and (found := BOOTSTRAPS.search(script.text)):
            if len(text) < SHELL_CHARS or found.group(0).startswith("window.$docsify"):
                return f"a client-side renderer boots it ({found.group(0).rstrip('( ')})"
    for noscript in root.iter("noscript"):
        if ASKS_FOR_SCRIPTS.search(noscript.text_content()) and len(text) < SHELL_CHARS:
            return "its <noscript> asks for JavaScript"
    if len(text) < SHELL_CHARS and any(s.get("src") for s in scripts):
        mount = empty_mount(root)
        if mount is not None:
            return f"an empty mount element (#{mount}) and a script bundle"
    if feed_text and len(feed_text) >= FEED_CHARS and len(text) < SHORT_SHARE * len(feed_text):
        return f"its text ({len(text)} characters) is far shorter than its feed entry's ({len(feed_text)})"
    if blog_has_text and len(text) < SHELL_CHARS and scripts:
        return "no article text, where the blog's other pages have one"
    return None


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
