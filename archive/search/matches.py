"""The posts matching each search of an archive, and what Datasette shows of them beside a page.

Kept per process and archive file, until the archive changes, for the Datasette plugins: the
``archive_search`` plugin finds the matches (``Matches``) and counts them for the posts table,
``archive_facets`` counts their facets (``Summary``). Both are plugins loaded from files, which
cannot import one another: what they share lives here.

A common word matches half the posts of an archive. Datasette counts a search's matches and
each of its five facets with a statement of its own, each a pass over every match (50 to 350 ms
at 100,000 posts, the tags one over its 200 ms limit). Here a ``Listing`` of every post's
listed columns is read from ``idx_posts_listing`` once per archive version, each search's
``Summary`` looks its matches up in it once, and the count and every facet come from that.
"""

import contextlib
import gc
import json
import re
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from datasette.utils import escape_sqlite

from archive.search.index import post_ids_sql

# A quoted phrase ("" is a quote inside it) or a run of non-space characters:
# both what escape_fts() produces and what a person types.
TERM = re.compile(r'"((?:[^"]|"")*)"|(\S+)')
# How stale the matches of a query may be while a crawl commits new posts.
RECHECK_SECONDS = 0.1
KEPT_SEARCHES = 64  # searches whose matches are kept, per archive
# A search that matches up to this share of the posts reads them by id (cheap for so few); one that
# matches more, by walking the posts newest first and keeping those that match (the page stops early).
FEW_MATCHES = 0.05
IDS = "(select value from json_each(posts_search_ids(:search)))"
# The table whose searches are summarised, and what a Listing keeps of each post: the columns of
# idx_posts_listing, which SQLite reads instead of the posts' rows; ``published`` as its first seven
# characters (PERIODS), all that its year and month facets count.
SUMMARISED = "posts"
LISTED = ("published", "source_id", "lang", "tags")
LISTED_SQL = "select id, substr(published, 1, 7), source_id, lang, tags from posts"
PERIODS = "published"


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


def _sql_order(value: int | str) -> tuple[bool, int | str]:
    """SQLite's order of the integers and texts of a column: integers first; texts by their
    UTF-8 bytes (BINARY), which is the order of their code points."""
    return isinstance(value, str), value


def _plain(value: Any) -> bool:
    """Whether SQLite compares, groups and measures ``value`` as Python does: an integer, or a
    text without NUL (SQLite's ``length()`` stops at the first)."""
    return isinstance(value, int) or (isinstance(value, str) and "\x00" not in value)


def column_counts(values: Counter) -> list[tuple[Any, int]] | None:
    """Datasette's column facet: ``select c as value, count(*) as count ... where c is not null
    group by c order by count desc, value``."""
    if not all(_plain(v) for v in values if v is not None):
        return None
    return sorted(((v, n) for v, n in values.items() if v is not None), key=lambda c: (-c[1], _sql_order(c[0])))


def period_counts(values: Counter, chars: int) -> list[tuple[Any, int]] | None:
    """archive_facets' year and month facets: ``select substr(c, 1, chars) as value, count(*) ...
    where length(c) >= chars group by value order by value desc``."""
    if not all(isinstance(v, str) and _plain(v) for v in values if v is not None):
        return None
    periods: Counter = Counter()
    for value, n in values.items():
        if value is not None and len(value) >= chars:
            periods[value[:chars]] += n
    return sorted(periods.items(), reverse=True)


def array_counts(values: Counter) -> list[tuple[Any, int]] | None:
    """archive_facets' array facet: each distinct text of each row's JSON array counted once per row
    (``json_each``), ``order by count desc, value``. Anything but arrays of texts: None."""
    counts: Counter = Counter()
    for value, n in values.items():
        if value is None:
            continue  # json_each(null) has no rows
        try:
            items = json.loads(value) if isinstance(value, str) else None
        except ValueError:
            return None
        if not isinstance(items, list) or not all(isinstance(i, str) and _plain(i) for i in items):
            return None
        try:
            "".join(items).encode("utf-8")  # a lone surrogate (an escape, \ud800) is no text SQLite returns
        except UnicodeEncodeError:
            return None
        for item in set(items):
            counts[item] += n
    return sorted(counts.items(), key=lambda c: (-c[1], c[0]))


FACETS = {  # a facet's type -> its counts from a Listing's values, and whether they are PERIODS'
    "column": (column_counts, False),
    "array": (array_counts, False),
    "year": (lambda values: period_counts(values, 4), True),
    "month": (lambda values: period_counts(values, 7), True),
}


class Listing:
    """The LISTED columns of every post, read in one pass of ``idx_posts_listing``, so that each
    search's ``Summary`` only looks its matches up in it."""

    def __init__(self, conn: sqlite3.Connection):
        with _collector_paused():
            rows = conn.execute(LISTED_SQL).fetchall()
            columns = list(zip(*rows)) or [()] * (1 + len(LISTED))
            self.position = dict(zip(columns[0], range(len(rows))))  # a post's id -> its place in each column
            self.columns = dict(zip(LISTED, columns[1:]))


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off meanwhile (for the whole process, as it can only be).
    Reading a listing makes half a million objects, none of them in a cycle; each of their
    allocations that the collector counts brings its next pass nearer, and the oldest
    generation's passes walk Datasette's whole heap: reading the listing of 100,000 posts in
    the server took 0.43 to 0.56 s with it, 0.22 to 0.25 s without."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Listings:
    """The ``Listing`` of one archive, read on a connection of its own, by the first summary that
    needs it, again after another connection committed (``current``). Reading it takes 0.2 to
    0.25 s at 100,000 posts, less than Datasette's own count and facets of one search took: once
    per archive version, after which each search's summary costs tens of milliseconds. (Read in
    the background when the server starts, it slowed the first searches of the JSON API, which
    need no summary, 0.26 s to 0.69 s: the machine's two cores and Python's lock.)"""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self.lock = threading.Lock()
        self.version: int | None = None
        self.listing: Listing | None = None

    def current(self) -> Listing:
        with self.lock:
            version = self.conn.execute("pragma data_version").fetchone()[0]
            if self.listing is None or version != self.version:
                self.listing, self.version = Listing(self.conn), version
            return self.listing


class Summary:
    """The count of a search's matches and of their values of each LISTED column, from which each
    facet of the posts table on those columns is counted as its SQL counts it (``facet``)."""

    def __init__(self, listing: Listing, found: frozenset[int]):
        present = found & listing.position.keys()  # a post deleted since its search was computed is not counted
        self.count = len(present)
        places = list(map(listing.position.__getitem__, present))
        self.values = {name: Counter(map(column.__getitem__, places)) for name, column in listing.columns.items()}
        self.facets: dict[tuple[str, str], list[tuple[Any, int]] | None] = {}
        self.lock = threading.Lock()

    def facet(self, kind: str, column: str) -> list[tuple[Any, int]] | None:
        """Every value of the facet ``kind`` (``FACETS``) on ``column`` with its count, in the
        order of the facet's SQL; None for another facet or column, or a value whose SQL semantics
        are not Python's (the facet then runs its SQL)."""
        counts, of_periods = FACETS.get(kind, (None, False))
        if counts is None or column not in self.values or of_periods != (column == PERIODS):
            return None
        with self.lock:
            if (kind, column) not in self.facets:
                self.facets[kind, column] = counts(self.values[column])
            return self.facets[kind, column]


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

    def __init__(self, conn: sqlite3.Connection, listings: Listings | None = None):
        self.conn = conn
        self.listings = listings or Listings(conn)
        self.lock = threading.Lock()  # Datasette's connections live in several threads
        self.found: dict[str, frozenset[int]] = {}
        self.arrays: dict[str, str] = {}  # the same, as JSON arrays: what posts_search_ids() returns
        self.summaries: dict[str, Summary] = {}
        self.posts: int | None = None  # how many posts the archive has
        self.version = -1
        self.checked = 0.0

    def _recheck(self) -> None:
        now = time.monotonic()
        if now - self.checked > RECHECK_SECONDS:
            version = self.conn.execute("pragma data_version").fetchone()[0]
            if version != self.version:
                self._forget()
                self.posts = None
                self.version = version
            self.checked = now

    def _forget(self) -> None:
        self.found.clear()
        self.arrays.clear()
        self.summaries.clear()

    def many(self, query: str) -> bool:
        """Whether ``query`` matches more than FEW_MATCHES of the posts."""
        found = self.of(query)
        with self.lock:
            if self.posts is None:
                self.posts = self.conn.execute("select count(*) from posts").fetchone()[0]
            return len(found) > FEW_MATCHES * self.posts

    def of(self, query: str) -> frozenset[int]:
        with self.lock:
            self._recheck()
            if query not in self.found:
                if len(self.found) >= KEPT_SEARCHES:
                    self._forget()
                self.found[query] = matching_post_ids(self.conn, search_terms(query))
            return self.found[query]

    def array(self, query: str) -> str:
        """``of(query)`` as a JSON array, ascending."""
        found = self.of(query)
        with self.lock:
            if self.found.get(query) is not found or query not in self.arrays:
                self.arrays[query] = json.dumps(sorted(found))
            return self.arrays[query]

    def summary(self, query: str) -> Summary:
        """The ``Summary`` of the posts ``of(query)``, kept with them."""
        found = self.of(query)
        with self.lock:
            summary = self.summaries.get(query)
        if summary is None:
            summary = Summary(self.listings.current(), found)  # not under the lock: ids meanwhile
            with self.lock:
                if self.found.get(query) is found:  # not forgotten meanwhile
                    self.summaries[query] = summary
        return summary


_matches: dict[str, Matches] = {}  # archive file -> its matches
_matches_lock = threading.Lock()


def matches_of(conn: sqlite3.Connection) -> Matches:
    """The ``Matches`` of the archive ``conn`` reads (its own, for an archive without a file)."""
    path = next((row[2] for row in conn.execute("pragma database_list") if row[1] == "main"), "")
    if not path:
        return Matches(conn)
    return matches_at(path)


def matches_at(path: str) -> Matches:
    """The ``Matches`` of the archive file at ``path``."""
    path = str(Path(path).resolve())
    with _matches_lock:
        if path not in _matches:
            readers = [sqlite3.connect(f"{Path(path).as_uri()}?mode=ro", uri=True, check_same_thread=False)
                       for _ in range(2)]
            _matches[path] = Matches(readers[0], Listings(readers[1]))
        return _matches[path]


def search_clause(metadata: dict, many: bool) -> str:
    """The clause the ``archive_search`` plugin puts in place of Datasette's ``?_search=`` clause,
    for a search that matches ``many`` posts (``posts_search_has()``, a test of each post walked)
    or few (their ids)."""
    fts_pk = escape_sqlite(metadata.get("fts_pk", "rowid"))
    return f"posts_search_has(:search, {fts_pk})" if many else f"{fts_pk} in {IDS}"


def search_alone(sql: str, params: Any, selected: str, table: str, metadata: dict) -> str | None:
    """The search ``sql`` reads the matches of and nothing else, or None: ``sql`` is ``select
    {selected} from {table} where`` one of the ``search_clause``\\s, as Datasette writes its
    statements, ``params`` its ``search`` alone, and the table the one summarised."""
    if table != SUMMARISED or not isinstance(params, dict) or set(params) != {"search"}:
        return None
    statements = {f"select {selected} from {escape_sqlite(table)} where {search_clause(metadata, many)} "
                  for many in (True, False)}
    return params["search"] if sql in statements else None
