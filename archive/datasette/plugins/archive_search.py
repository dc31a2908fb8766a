"""Search posts in any language, from Datasette's search box and canned queries.

The archive has two FTS5 indexes (archive/search/index.py): ``posts_fts`` (trigram)
for words of three characters or more, ``posts_grams`` for shorter ones, common
in Chinese (内存), which the trigram tokenizer cannot find. Datasette searches a
table with ``{fts_pk} in (select rowid from {fts_table} where {fts_table} match
escape_fts(:search))``, so metadata.yml names as the posts' ``fts_table`` the
temporary view ``posts_search`` made here on every connection, the union of three
arms: ``posts_fts``, ``posts_grams``, and the ids of a search neither index can
answer alone (a short word beside a long one, a short word with punctuation),
computed by ``Matches`` (archive.search.matches) and read through ``json_each()``.

SQLite hands the view's MATCH to each arm. ``escape_fts()``, replaced here, turns a
search into an FTS5 query that exactly one arm answers (``fts_query``): the
other index finds nothing for it. For the third arm MATCH is ``match(query,
'scan')``, the SQL function defined here: a constant, evaluated once per
statement before the arm is read, which computes the ids (or says there are
none to read). SQLite also checks MATCH again on each row the view returns,
which ``match()`` answers true.

A common word matches half the posts of an archive. Datasette's clause ``id in
(select rowid from posts_search ...)`` makes SQLite read the row of every post
that matches (it takes the list of ids as the way in, never an index in the
page's order), then sort them all for a page of 101, then read them all again
for the count and each facet: seconds at 100,000 posts. So on the posts table
``filters_from_request`` replaces that clause (``search_clause``) by one over
the ids ``Matches`` keeps: for a search that matches many posts,
``posts_search_has(:search, id)``, a test of each post (``SearchedIds``), which
SQLite cannot use as the way in, so it walks ``idx_posts_published`` newest
first and stops after the page, and it counts and facets from the narrow
``idx_posts_listing`` (its migration) instead of the posts' rows; for a search
that matches few (``FEW_MATCHES``), by their ids (``posts_search_ids(:search)``,
a JSON array), as before. (``+id in`` that array walked the posts the same way,
but SQLite first made the 50,000 ids of a common word an index, for each
statement: 12 ms, against 0.3 ms for the page's 200 tests.)

Even from that index, the count and each of the five facets is a pass over every
match, each request. For a search alone (no other filter) on the posts table they
come instead from the search's ``Summary`` (archive.search.matches), computed once per
search and archive version: the count here (``counting_from_summaries``), the
facets in ``archive_facets``.
"""

import asyncio
import json
import re
import sqlite3
import time
from collections.abc import Callable

from datasette import hookimpl
from datasette.database import Database, Results
from datasette.utils import await_me_maybe, escape_sqlite
from markupsafe import escape

from archive.search.index import MIN_TRIGRAM_CHARS, is_gram, register_functions
from archive.search.matches import (
    RECHECK_SECONDS,
    SUMMARISED,
    Matches,
    matches_at,
    matches_of,
    search_alone,
    search_clause,
    search_terms,
)
from archive.search.snippets import snippet

# The ASCII characters that are not letters or digits: posts_grams' tokenizer (ascii) splits words at them.
ASCII_SEPARATOR = re.compile(r"[\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]")
SCANNED = "scan"  # the third arm's MATCH column
VIEW = """create temp view if not exists posts_search(rowid, posts_search) as
  select rowid, posts_fts from posts_fts
  union all select rowid, posts_grams from posts_grams
  union all select value, '{scanned}' from json_each(posts_search_scanned())""".format(scanned=SCANNED)
VIEW_NAME = "posts_search"


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


class SearchedIds:
    """``posts_search_has(search, id)``, an SQL function of one connection: whether the post ``id``
    matches ``search``, from ``Matches.membership`` (asked again after RECHECK_SECONDS): for the
    newest posts of a search whose whole set of matches is still being computed, from their range's."""

    def __init__(self, matches: Matches):
        self.matches = matches
        self.search: str | None = None
        self.checked = 0.0
        self.member: Callable[[int], bool] = frozenset().__contains__

    def has(self, search: str | None, post_id: int) -> bool:
        now = time.monotonic()
        if search != self.search or now - self.checked > RECHECK_SECONDS:
            self.member = self.matches.membership(search or "")
            self.search, self.checked = search, now
        return self.member(post_id)


def datasette_clause(metadata: dict) -> str:
    """The clause Datasette's ``?_search=`` adds on a table searched through ``posts_search``."""
    fts_table = escape_sqlite(metadata.get("fts_table", ""))
    fts_pk = escape_sqlite(metadata.get("fts_pk", "rowid"))
    return f"{fts_pk} in (select rowid from {fts_table} where {fts_table} match escape_fts(:search))"


def _replacing(result: object, metadata: dict, matches: Matches, search: str):
    """``result`` of a ``filters_from_request`` hook with ``datasette_clause`` replaced by ``search_clause``."""

    async def inner():
        arguments = await await_me_maybe(result)
        clause = datasette_clause(metadata)
        if arguments is None or clause not in arguments.where_clauses:
            return arguments
        # off the event loop, and off Datasette's connections and their time limit
        many = await asyncio.get_running_loop().run_in_executor(None, matches.many, search)
        replacement = search_clause(metadata, many)
        arguments.where_clauses = [replacement if c == clause else c for c in arguments.where_clauses]
        return arguments

    return inner


@hookimpl(hookwrapper=True)
def filters_from_request(request, database, table, datasette):
    """On a table whose ``fts_table`` is ``posts_search``, Datasette's ``?_search=`` clause is
    replaced by ``search_clause`` (the module's docstring says why)."""
    outcome = yield
    metadata = datasette.table_metadata(database, table)
    search = request.args.get("_search")
    path = datasette.get_database(database).path
    if (metadata.get("fts_table") != VIEW_NAME or not search or request.args.get("_searchmode") == "raw"
            or "_fts_table" in request.args or "_fts_pk" in request.args or not path):
        return
    matches = matches_at(path)
    outcome.force_result([_replacing(result, metadata, matches, search) for result in outcome.get_result()])


COUNT = "count(*)"


def counting_from_summaries(db: Database) -> None:
    """Datasette 0.65 counts the rows of a table's page with a statement of its own, ``select
    count(*) from TABLE where ...`` (its views/table.py), which no plugin hook can change; for a
    search alone on the posts table it is one more pass over every match (47 ms at 100,000 posts,
    50,000 matches). So ``db.execute`` answers that one statement, and only it, from the search's
    ``Summary`` (archive.search.matches, computed once per search, off the event loop and off Datasette's
    connections): ``search_alone`` recognises it. Any other statement runs as before, the count
    of a search with another filter beside it included."""
    execute = db.execute

    async def answering(sql, params=None, *args, **kwargs):
        search = search_alone(sql, params, COUNT, SUMMARISED, db.ds.table_metadata(db.name, SUMMARISED))
        if search is None:
            return await execute(sql, params, *args, **kwargs)
        summary = await asyncio.get_running_loop().run_in_executor(None, matches_at(db.path).summary, search)
        return Results([(summary.count,)], False, [(COUNT,)])

    db.execute = answering


@hookimpl
def startup(datasette):
    """On each archive whose posts are searched through ``posts_search``, the count of a search
    alone from its summary (``counting_from_summaries``), and what every search needs read before
    the server answers (``Matches.warm``: the listing of the posts, their number), not by the
    first search. ``datasette serve`` awaits this before it listens."""
    archives = [db for db in datasette.databases.values()
                if db.path and not db.is_memory and datasette.table_metadata(db.name, SUMMARISED).get("fts_table") == VIEW_NAME]
    for db in archives:
        counting_from_summaries(db)

    async def warm():
        loop = asyncio.get_running_loop()
        for db in archives:
            try:
                await loop.run_in_executor(None, matches_at(db.path).warm)
            except sqlite3.Error:
                pass  # read by the first search instead, which says what is wrong

    return warm


def search_snippet(text: str | None, query: str | None) -> str:
    """About two lines of ``text``, whole words, around the first word of ``query`` in it (its
    start when only the title matched), each word between ``<mark>`` and ``</mark>``
    (archive.search.snippets). Plain text: whoever shows it as HTML escapes it first."""
    return snippet(text, search_terms(query))


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
        conn.create_function("posts_search_ids", 1, lambda query: arm.matches.array(query or ""))
        conn.create_function("posts_search_has", 2, SearchedIds(arm.matches).has)
        conn.execute(VIEW)
    conn.create_function("search_snippet", 2, search_snippet, deterministic=True)
    conn.create_function("search_snippet_html", 2, search_snippet_html, deterministic=True)
