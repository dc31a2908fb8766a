"""How the archive's cells read in HTML: tags as links, titles as links to their
post's page (and, in a list of changes, to its history), search snippets highlighted,
dates in queries' results as dates (``12 March 2024``),
a change's word diff as deletions and insertions and its share as a percentage, URLs as
links that read decoded (``/p/内存/``, not ``/p/%E5%86%85%E5%AD%98/``), in tables and
queries and, through the template function ``url_link()``, on a post's page.

Everything archived is escaped before any markup is added to it.
"""

import json
import re
from typing import Any
from urllib.parse import quote, unquote

from datasette import hookimpl
from datasette.app import Datasette
from markupsafe import Markup, escape

from archive.datasette.dates import long_date, long_time

LISTS = ("tags", "categories")  # posts' columns holding a JSON array of terms
DAYS = ("published", "updated")  # a query's columns of dates, read as dates (12 March 2024)
TIMES = ("at", "gone_at", "first_seen", "last_seen", "last_checked", "oldest_check", "latest_check", "last_crawl_at")
DIFF_MARK = re.compile(r"\[-(.*?)-\]|\{\+(.*?)\+\}", re.S)  # archive.tables.grades' word diff


def tag_link(tag: str, posts_url: str, column: str = "tags") -> Markup:
    """A link to the posts whose ``column`` holds ``tag``."""
    return Markup('<a class="tag" href="{}?{}__arraycontains={}">{}</a>').format(
        posts_url, column, quote(tag, safe=""), tag
    )


def tags_html(value: str, posts_url: str, column: str = "tags") -> Markup | None:
    """A JSON array of tags (or categories) as links; None when ``value`` is no such array."""
    try:
        tags = json.loads(value)
    except ValueError:
        return None
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        return None
    return Markup('<span class="tags">{}</span>').format(Markup(" ").join(tag_link(t, posts_url, column) for t in tags))


def snippet_html(value: str) -> Markup:
    """A search snippet with its ``<mark>`` highlights, everything else escaped."""
    return Markup(str(escape(value)).replace("&lt;mark&gt;", "<mark>").replace("&lt;/mark&gt;", "</mark>"))


def diff_html(value: str) -> Markup:
    """A word diff (``kept [-removed-] {+added+} kept``) as text with ``<del>`` and ``<ins>``."""
    parts, at = [], 0
    for match in DIFF_MARK.finditer(value):
        parts.append(escape(value[at:match.start()]))
        removed, added = match.groups()
        parts.append(Markup("<del>{}</del>").format(removed) if removed is not None else Markup("<ins>{}</ins>").format(added))
        at = match.end()
    parts.append(escape(value[at:]))
    return Markup('<span class="diff">{}</span>').format(Markup("").join(parts))


def share_html(value: float) -> Markup:
    """A share of 0 to 1 as a percentage: 0.0329 is 3.3 %."""
    percent = value * 100
    return Markup("{} %").format("< 0.1" if 0 < percent < 0.1 else f"{percent:.1f}".removesuffix(".0"))


def url_link(url: str) -> Markup:
    """A link to ``url`` whose text is ``url`` with its percent-escapes decoded."""
    return Markup('<a href="{}" rel="noopener noreferrer">{}</a>').format(url, unquote(url, errors="replace"))


@hookimpl
def render_cell(row: Any, value: Any, column: str, table: str | None, database: str, datasette: Datasette) -> Markup | None:
    if column == "changed_share" and isinstance(value, float) and table is None:
        return share_html(value)
    if not isinstance(value, str):
        return None
    posts_url = datasette.urls.table(database, "posts")
    if column in LISTS:
        return tags_html(value, posts_url, column)
    if column == "tag" and table is None:
        return tag_link(value, posts_url)
    if column == "snippet" and table is None:
        return snippet_html(value)
    if column == "word_diff" and table is None:
        return diff_html(value)
    if column in DAYS + TIMES and table is None and value[:4].isdigit():
        return Markup('<time datetime="{}">{}</time>').format(value, (long_date if column in DAYS else long_time)(value))
    if column == "url" and value.startswith(("http://", "https://")):
        return url_link(value)
    if column == "title":
        post_id = post_of(row, table)
        if post_id is not None:
            link = Markup('<a href="{}">{}</a>').format(datasette.urls.row(database, "posts", str(post_id)), value)
            if table is None and "grade" in row.keys():  # noqa: SIM118 (a change: its post's history beside it)
                history = datasette.urls.table(database, "post_versions") + f"?post_id={post_id}&_sort_desc=id"
                link += Markup(' <a class="history" href="{}">history</a>').format(history)
            return link
    return None


def post_of(row: Any, table: str | None) -> Any:
    """The id of the post a row of the posts table, or of a query with a post_id column, is about."""
    key = "id" if table == "posts" else "post_id" if table is None else None
    return row[key] if key and key in row.keys() else None  # noqa: SIM118 (sqlite3.Row has keys(), no __contains__ by name)


@hookimpl
def extra_template_vars() -> dict[str, object]:
    return {"url_link": url_link}
