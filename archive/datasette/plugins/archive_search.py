"""Search posts in any language, from Datasette's search box and canned queries.

The archive has two FTS5 indexes (archive/search.py): the trigram one for words
of three characters or more, and ``posts_grams`` for shorter ones, common in
Chinese (内存), which the trigram tokenizer cannot find. Datasette
searches a table with ``{fts_pk} in (select rowid from {fts_table} where
{fts_table} match escape_fts(:search))``, so metadata.yml names as the posts'
``fts_table`` the temporary view ``posts_search`` made here on every
connection. MATCH against a column of an ordinary view calls the SQL function
``match()``, defined here: it answers each word from its index, every word required.
"""

import re
import sqlite3
import threading
import time
from pathlib import Path

from datasette import hookimpl
from datasette.utils import escape_fts
from markupsafe import escape

from archive.search import post_ids_sql, register_functions

# A quoted phrase ("" is a quote inside it) or a run of non-space characters:
# both what escape_fts() produces and what a person types.
TERM = re.compile(r'"((?:[^"]|"")*)"|(\S+)')
SNIPPET_CHARS = 160
# How stale the matches of a query may be while a crawl commits new posts.
RECHECK_SECONDS = 0.1
KEPT_SEARCHES = 64  # searches whose matches are kept, per archive


def search_terms(query: str | None) -> list[str]:
    """The words of a search, quotes removed."""
    terms = (quoted.replace('""', '"') or bare for quoted, bare in TERM.findall(query or ""))
    return [t for t in terms if t.strip()]


def matching_post_ids(conn: sqlite3.Connection, terms: list[str]) -> frozenset[int]:
    """Ids of the posts whose title or text contains every term, case-insensitively."""
    if not terms:
        return frozenset()
    grams = conn.execute("select 1 from sqlite_master where name = 'posts_grams'").fetchone() is not None
    sql, params = post_ids_sql(terms, grams=grams)
    return frozenset(r[0] for r in conn.execute(sql, params))


class Matches:
    """The posts matching each search of one archive, kept until the archive changes.

    Computed on a read-only connection of its own, one per archive and process,
    shared by Datasette's connections: on Datasette's, whose time limit watches
    the query that called ``match()``, a search for a short word over every
    post's text could be stopped halfway and the query failed with it; and each
    search is computed once, not once per connection. Whether another
    connection committed (a crawl saving posts) is checked at most every
    RECHECK_SECONDS.
    """

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self.lock = threading.Lock()  # Datasette's connections live in several threads
        self.found: dict[str, frozenset[int]] = {}
        self.version = -1
        self.checked = 0.0

    def of(self, query: str) -> frozenset[int]:
        with self.lock:
            now = time.monotonic()
            if now - self.checked > RECHECK_SECONDS:
                version = self.conn.execute("pragma data_version").fetchone()[0]
                if version != self.version:
                    self.found.clear()
                    self.version = version
                self.checked = now
            if query not in self.found:
                if len(self.found) >= KEPT_SEARCHES:
                    self.found.clear()
                self.found[query] = matching_post_ids(self.conn, search_terms(query))
            return self.found[query]


_matches: dict[str, Matches] = {}  # archive file -> its matches
_matches_lock = threading.Lock()


def matches_of(conn: sqlite3.Connection) -> Matches:
    """The ``Matches`` of the archive ``conn`` reads (its own, for an archive without a file)."""
    path = next((row[2] for row in conn.execute("pragma database_list") if row[1] == "main"), "")
    if not path:
        return Matches(conn)
    with _matches_lock:
        if path not in _matches:
            reader = sqlite3.connect(f"{Path(path).as_uri()}?mode=ro", uri=True, check_same_thread=False)
            _matches[path] = Matches(reader)
        return _matches[path]


class PostMatcher:
    """The ``match(query, post_id)`` SQL function behind ``posts_search``.

    Datasette calls it once per post, for the page, its count and each facet:
    the ids come from ``Matches`` once per query, and again only after
    RECHECK_SECONDS, so that most calls are a set lookup.
    """

    def __init__(self, matches: Matches):
        self.matches = matches
        self.query: str | None = None
        self.checked = 0.0
        self.ids: frozenset[int] = frozenset()

    def __call__(self, query: str | None, post_id: int) -> bool:
        now = time.monotonic()
        if query != self.query or now - self.checked > RECHECK_SECONDS:
            self.ids = self.matches.of(query or "")
            self.query, self.checked = query, now
        return post_id in self.ids


def search_snippet(text: str | None, query: str | None) -> str:
    """About SNIPPET_CHARS of ``text`` around the first word of ``query`` in it
    (its start when only the title matched), each word between ``<mark>`` and ``</mark>``.

    The result is plain text: whoever shows it as HTML escapes it first.
    """
    terms = search_terms(query)
    text = " ".join((text or "").split())
    if not terms:
        return text[:SNIPPET_CHARS]
    pattern = re.compile("|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)), re.IGNORECASE)
    first = pattern.search(text)
    start = max(0, first.start() - SNIPPET_CHARS // 3) if first else 0
    marked = pattern.sub(lambda m: f"<mark>{m.group(0)}</mark>", text[start : start + SNIPPET_CHARS])
    return ("…" if start else "") + marked + ("…" if start + SNIPPET_CHARS < len(text) else "")


def search_snippet_html(text: str | None, query: str | None) -> str:
    """``search_snippet`` as HTML, for the search's Atom feed: the text escaped, the words in
    ``<strong>`` (datasette-atom's sanitiser keeps that tag, not ``<mark>``)."""
    marked = str(escape(search_snippet(text, query)))
    return marked.replace("&lt;mark&gt;", "<strong>").replace("&lt;/mark&gt;", "</strong>")


@hookimpl(trylast=True)  # after Datasette's own functions, so that escape_fts below replaces its own
def prepare_connection(conn: sqlite3.Connection) -> None:
    # Datasette's escape_fts, declared deterministic: SQLite then calls it once per
    # search instead of once per post scanned (Datasette's search is ``match escape_fts(:search)``).
    conn.create_function("escape_fts", 1, escape_fts, deterministic=True)
    register_functions(conn)
    if not conn.execute("select 1 from sqlite_master where name = 'posts_fts'").fetchone():
        return
    conn.execute("create temp view if not exists posts_search(rowid, posts_search) as select id, id from posts")
    conn.create_function("match", 2, PostMatcher(matches_of(conn)))
    conn.create_function("search_snippet", 2, search_snippet, deterministic=True)
    conn.create_function("search_snippet_html", 2, search_snippet_html, deterministic=True)
