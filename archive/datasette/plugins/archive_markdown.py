"""Posts' Markdown as HTML: on post pages, ``post_body()`` (archive/datasette/reading.py:
CommonMark, bleach, the images in place) and ``reading_minutes()``, template functions; in
feeds, the SQL function ``feed_html()``, through datasette-render-markdown's sanitiser, limited
to the tags datasette-atom keeps.

HTML inside archived Markdown is never markup: ``<script>`` or ``<img onerror=...>`` in a post
reads as the text it is, on the page and in the feed.
"""

import sqlite3

import markdown
from datasette import hookimpl
from datasette_render_markdown import render_markdown

from archive.datasette.reading import post_body, reading_minutes, without_title

WRAPPER_START, WRAPPER_END = '<div style="white-space: normal">', "</div>"


class RawHtmlAsText(markdown.Extension):
    """Treat HTML in Markdown as text: no HTML blocks, no inline tags."""

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")


class NoRules(markdown.Extension):
    """Leave ``---`` lines as text (datasette-atom's sanitiser has no <hr>)."""

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        md.parser.blockprocessors.deregister("hr")


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
    return {"post_body": post_body, "reading_minutes": reading_minutes}
