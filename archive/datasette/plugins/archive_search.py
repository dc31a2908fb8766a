"""Search posts in any language, from Datasette's search box and canned queries.

The archive has two FTS5 indexes (archive/search.py): ``posts_fts`` (trigram)
for words of three characters or more, ``posts_grams`` for shorter ones, common
in Chinese (内存), which the trigram tokenizer cannot find. Datasette searches a
table with ``{fts_pk} in (select rowid from {fts_table} where {fts_table} match
escape_fts(:search))``, so metadata.yml names as the posts' ``fts_table`` the
temporary view ``posts_search`` made here on every connection, the union of three
arms: ``posts_fts``, ``posts_grams``, and the ids of a search neither index can
answer alone (a short word beside a long one, a short word with punctuation),
computed by ``Matches`` and read through ``json_each()``.

SQLite hands the view's MATCH to each arm. ``escape_fts()``, replaced here, turns a
search into an FTS5 query that exactly one arm answers (``fts_query``): the
other index finds nothing for it. For the third arm MATCH is ``match(query,
'scan')``, the SQL function defined here: a constant, evaluated once per
statement before the arm is read, which computes the ids (or says there are
none to read). SQLite also checks MATCH again on each row the view returns,
which ``match()`` answers true.
"""

import json
import re
import sqlite3
import threading
import time
from pathlib import Path

from datasette import hookimpl
from markupsafe import escape

from archive.search import MIN_TRIGRAM_CHARS, is_gram, post_ids_sql, register_functions

# A quoted phrase ("" is a quote inside it) or a run of non-space characters:
# both what escape_fts() produces and what a person types.
TERM = re.compile(r'"((?:[^"]|"")*)"|(\S+)')
SNIPPET_CHARS = 160
# The ASCII characters that are not letters or digits: posts_grams' tokenizer (ascii) splits words at them.
ASCII_SEPARATOR = re.compile(r"[\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]")
SCANNED = "scan"  # the third arm's MATCH column
VIEW = """create temp view if not exists posts_search(rowid, posts_search) as
  select rowid, posts_fts from posts_fts
  union all select rowid, posts_grams from posts_grams
  union all select value, '{scanned}' from json_each(posts_search_scanned())""".format(scanned=SCANNED)
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


def _phrases(terms: list[str]) -> str:
    return " ".join('"{}"'.format(t.replace('"', '""')) for t in terms)


def fts_query(query: str | None) -> str:
    """The FTS5 query for a search, which one arm of ``posts_search`` answers: words of three
    characters or more and no ASCII punctuation, ``posts_fts``; words of one or two letters or
    digits, ``posts_grams``; else the third arm, for which it is a query neither index matches,
    ``"q<hex>" NOT "q<hex>"``, with the search in hexadecimal."""
    terms = search_terms(query)
    if terms and all(len(t) >= MIN_TRIGRAM_CHARS and not ASCII_SEPARATOR.search(t) for t in terms):
        return _phrases(terms)
    if terms and all(is_gram(t) for t in terms):
        return _phrases([t.lower() for t in terms])
    key = "q" + (query or "").encode("utf-8").hex()
    return f'"{key}" NOT "{key}"'


def scanned_search(fts: str | None) -> str | None:
    """The search ``fts_query`` sent to the third arm, None for one an index answers."""
    found = re.fullmatch(r'"q([0-9a-f]*)" NOT "q\1"', fts or "")
    return bytes.fromhex(found.group(1)).decode("utf-8") if found else None


class ScannedArm:
    """``match(fts, column)`` and ``posts_search_scanned()``, the SQL functions of one connection.

    ``match(fts, 'scan')`` keeps the ids of the third arm's search, from ``Matches``
    (again after RECHECK_SECONDS); ``posts_search_scanned()``, called right after in
    the same statement, returns them as a JSON array.
    """

    def __init__(self, matches: Matches):
        self.matches = matches
        self.search: str | None = None
        self.checked = 0.0
        self.ids = "[]"

    def match(self, fts: str | None, column: object) -> bool:
        if column != SCANNED:
            return True  # a row an index found, checked again above the view
        search = scanned_search(fts)
        if search is None:
            return False
        now = time.monotonic()
        if search != self.search or now - self.checked > RECHECK_SECONDS:
            self.ids = json.dumps(sorted(self.matches.of(search)))
            self.search, self.checked = search, now
        return True

    def scanned(self) -> str:
        return self.ids


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
    # Deterministic, so that SQLite calls each once per statement, not once per row:
    # escape_fts (Datasette's search is ``match escape_fts(:search)``) and match('...', 'scan').
    conn.create_function("escape_fts", 1, fts_query, deterministic=True)
    register_functions(conn)
    if conn.execute("select count(*) from sqlite_master where name = 'posts_grams'").fetchone()[0]:
        arm = ScannedArm(matches_of(conn))
        conn.create_function("match", 2, arm.match, deterministic=True)
        conn.create_function("posts_search_scanned", 0, arm.scanned)
        conn.execute(VIEW)
    conn.create_function("search_snippet", 2, search_snippet, deterministic=True)
    conn.create_function("search_snippet_html", 2, search_snippet_html, deterministic=True)
