"""Posts' Markdown as HTML, through datasette-render-markdown's sanitiser.

HTML inside archived Markdown is never markup: Python-Markdown's raw HTML
handling is turned off, so ``<script>`` or ``<img onerror=...>`` in a post
reads as the text it is, and bleach then keeps only its allowed tags. Post
pages get ``post_html()`` (a template function); feeds get the SQL function
``feed_html()``, limited to the tags datasette-atom keeps.
"""

import sqlite3

import markdown
from datasette import hookimpl
from datasette_render_markdown import render_markdown
from markupsafe import Markup

WRAPPER_START, WRAPPER_END = '<div style="white-space: normal">', "</div>"
PAGE_TAGS = ["br", "hr", "table", "thead", "tbody", "tr", "th", "td", "del", "sup", "sub"]


class RawHtmlAsText(markdown.Extension):
    """Treat HTML in Markdown as text: no HTML blocks, no inline tags."""

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")


class NoRules(markdown.Extension):
    """Leave ``---`` lines as text (datasette-atom's sanitiser has no <hr>)."""

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        md.parser.blockprocessors.deregister("hr")


def without_title(text: str, title: str | None) -> str:
    """The Markdown without a first line that only repeats the title as a heading."""
    first, _, rest = text.lstrip().partition("\n")
    return rest if title and first.lstrip("# ").strip() == title.strip() else text


def post_html(text: str | None, title: str | None = None) -> Markup:
    """A post's Markdown as sanitised HTML, for its page."""
    return render_markdown(
        without_title(text or "", title),
        extensions=[RawHtmlAsText(), "fenced_code", "tables"],
        extra_tags=PAGE_TAGS,
    )


def feed_html(text: str | None, title: str | None) -> str:
    """A post's Markdown as sanitised HTML, for an Atom feed (without the <div> that
    render_markdown wraps it in, which datasette-atom's sanitiser would show as text)."""
    html = str(render_markdown(without_title(text or "", title), extensions=[RawHtmlAsText(), NoRules(), "fenced_code"]))
    return html.removeprefix(WRAPPER_START).removesuffix(WRAPPER_END)


@hookimpl
def prepare_connection(conn: sqlite3.Connection) -> None:
    conn.create_function("feed_html", 2, feed_html, deterministic=True)


@hookimpl
def extra_template_vars() -> dict[str, object]:
    return {"post_html": post_html}
