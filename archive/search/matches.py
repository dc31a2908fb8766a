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
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
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
# The newest posts, whose matches a search's first page needs (Matches._window), and how far apart their ids may
# lie for their range to be read instead of waiting for every match.
NEWEST = 256
SPREAD = 8
NEWEST_SQL = "select id from posts order by published desc limit ?"
# A search's whole set of matches is read in 1 + RANGES ranges of ids side by side (matching_post_ids).
RANGES = 3
SEGMENT_INDEXES = ("posts_fts_idx", "posts_grams_idx")  # read as the server starts (Matches.warm)
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


def matching_post_ids(conn: sqlite3.Connection, terms: list[str], beside: Sequence[sqlite3.Connection] = (),
                      pool: ThreadPoolExecutor | None = None) -> frozenset[int]:
    """Ids of the posts whose title or text contains every term, case-insensitively.

    With connections ``beside`` (and a ``pool`` of as many threads), the posts' ids are read in as
    many ranges more, side by side: the lowest on ``conn`` in this thread, each other on one of
    ``beside`` in the pool. SQLite lets go of Python's lock while it reads, so the second core
    works on other ranges, and from a cold disk several reads are asked at once. A common word's
    ids cost about 2 ms of CPU per 1,000 posts in FTS5 (its trigrams' lists of positions): 220 ms
    at 100,000 posts in one thread; cold, 0.87 s in one range, 0.45 s in two, 0.26 s in four."""
    if not terms:
        return frozenset()
    grams = conn.execute("select 1 from sqlite_master where name = 'posts_grams'").fetchone() is not None
    if not beside or pool is None:
        sql, params = post_ids_sql(terms, grams=grams)
        return frozenset(r[0] for r in conn.execute(sql, params))
    sql, params = post_ids_sql(terms, grams=grams, within=True)
    [(lo, hi)] = conn.execute("select min(id), max(id) from posts").fetchall()
    if lo is None:
        return frozenset()
    parts = 1 + len(beside)
    starts = [lo + (hi - lo + 1) * i // parts for i in range(parts)] + [hi + 1]

    def read(other: sqlite3.Connection, i: int) -> list[tuple[int]]:
        return other.execute(sql, {**params, "lo": starts[i], "hi": starts[i + 1] - 1}).fetchall()

    others = [pool.submit(read, other, i) for i, other in enumerate(beside, 1)]
    try:
        ids = [r[0] for r in conn.execute(sql, {**params, "lo": starts[0], "hi": starts[1] - 1})]
    finally:
        rows = [future.result() for future in others]
    for part in rows:
        ids.extend(r[0] for r in part)
    return frozenset(ids)


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
    search's ``Summary`` only looks its matches up in it.

    Each column is kept as a code per post (numpy), in the order of the posts' ids, and its distinct
    values (``uniques``: a value's code is its place there, distinct as a dict's keys are, so as
    ``Counter`` counts them): a summary counts the codes of its matches (``numpy.bincount``), 3 ms
    where counting their values took 30 at 100,000 posts, 50,000 matches."""

    def __init__(self, conn: sqlite3.Connection):
        with _collector_paused():
            rows = conn.execute(LISTED_SQL).fetchall()
            columns = list(zip(*rows)) or [()] * (1 + len(LISTED))
            ids = np.fromiter(columns[0], dtype=np.int64, count=len(rows))
            order = np.argsort(ids, kind="stable")
            self.ids = ids[order]  # ascending: a post's place in each column is its id's here
            self.columns: dict[str, tuple[np.ndarray, list[Any]]] = {}
            for name, values in zip(LISTED, columns[1:]):
                codes: dict[Any, int] = {}
                coded = np.fromiter(map(lambda v: codes.setdefault(v, len(codes)), values), dtype=np.int64,
                                    count=len(rows))
                self.columns[name] = (coded[order], list(codes))

    def places(self, found: frozenset[int]) -> np.ndarray:
        """The places of the posts ``found`` (their ids) that are in the listing: a post deleted since
        its search was computed is not."""
        wanted = np.fromiter(found, dtype=np.int64, count=len(found))
        places = np.searchsorted(self.ids, wanted)
        inside = places < len(self.ids)
        places = places[inside]
        return places[self.ids[places] == wanted[inside]]


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
        places = listing.places(found)
        self.count = len(places)
        self.values: dict[str, Counter] = {}
        for name, (codes, uniques) in listing.columns.items():
            counts = np.bincount(codes[places], minlength=len(uniques))
            present = np.flatnonzero(counts)
            self.values[name] = Counter(dict(zip(map(uniques.__getitem__, present.tolist()), counts[present].tolist())))
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

    Computed on read-only connections of its own, one set per archive and process,
    shared by Datasette's connections: on Datasette's, whose time limit watches
    the query that called ``match()``, a search for a short word over every
    post's text could be stopped halfway and the query failed with it; and each
    search is computed once, not once per connection. Whether another
    connection committed (a crawl saving posts) is checked at most every
    RECHECK_SECONDS.

    A search's whole set of matches is computed in a thread of its own (``computing``, on
    ``whole`` and the connections ``beside``, a range of ids each: ``matching_post_ids``), started by the first request that asks
    for it. A page of the posts table needs only the newest posts' matches: ``many`` reads those
    of the range of ids the ``NEWEST`` newest posts lie in (``Window``), when they lie close
    together (ids given as posts are saved: a crawl saves a blog's newest posts last), tells from
    them whether the search matches many posts, and ``membership`` answers for a post of that
    range from them, for any other from the whole set, waited for.
    """

    def __init__(self, conn: sqlite3.Connection, listings: Listings | None = None,
                 whole: sqlite3.Connection | None = None, beside: Sequence[sqlite3.Connection] = ()):
        self.conn = conn
        self.listings = listings or Listings(conn)
        # each search's whole set, computed on ``whole`` (its lowest range of ids) and ``beside`` (one
        # range each, in threads of their own: matching_post_ids), one search at a time
        self.whole = whole or conn
        self.beside = list(beside)
        self.pool = ThreadPoolExecutor(len(self.beside), thread_name_prefix="matches-part") if self.beside else None
        self.computing = ThreadPoolExecutor(1, thread_name_prefix="matches") if whole is not None else None
        self.lock = threading.Lock()  # Datasette's connections live in several threads
        self.found: dict[str, frozenset[int]] = {}
        self.pending: dict[str, Future] = {}  # searches whose whole set is being computed
        self.windows: dict[str, Window] = {}
        # the NEWEST newest posts' lowest and highest id, and their ids, once read (None: too far apart)
        self.newest: tuple[int, int, frozenset[int]] | None = None
        self.newest_read = False
        self.arrays: dict[str, str] = {}  # the same, as JSON arrays: what posts_search_ids() returns
        self.summaries: dict[str, Summary] = {}
        self.posts: int | None = None  # how many posts the archive has
        self.version = -1
        self.generation = 0  # counts the times what was kept was forgotten
        self.checked = 0.0

    def _recheck(self) -> None:
        now = time.monotonic()
        if now - self.checked > RECHECK_SECONDS:
            version = self.conn.execute("pragma data_version").fetchone()[0]
            if version != self.version:
                self._forget()
                self.posts = None
                self.newest, self.newest_read = None, False
                self.version = version
            self.checked = now

    def _forget(self) -> None:
        self.found.clear()
        self.pending.clear()
        self.windows.clear()
        self.arrays.clear()
        self.summaries.clear()
        self.generation += 1

    def _count(self) -> int:
        if self.posts is None:
            self.posts = self.conn.execute("select count(*) from posts").fetchone()[0]
        return self.posts

    def _started(self, query: str) -> Future:
        """The whole set of ``query``'s matches: known, or being computed (started now if not). Under the lock."""
        future: Future = Future()
        if query in self.found:
            future.set_result(self.found[query])
            return future
        if query in self.pending:
            return self.pending[query]
        if len(self.found) + len(self.pending) >= KEPT_SEARCHES:
            self._forget()
        generation = self.generation

        def compute() -> frozenset[int]:
            found = matching_post_ids(self.whole, search_terms(query), self.beside, self.pool)
            with self.lock:
                if self.generation == generation:
                    self.found[query] = found
                    self.pending.pop(query, None)
            return found

        if self.computing is None:  # one connection: computed here, under the lock
            found = matching_post_ids(self.conn, search_terms(query))
            self.found[query] = found
            future.set_result(found)
            return future
        future = self.pending[query] = self.computing.submit(compute)
        return future

    def of(self, query: str) -> frozenset[int]:
        with self.lock:
            self._recheck()
            future = self._started(query)
        return future.result()

    def _window(self, query: str) -> "Window | None":
        """The matches of ``query`` among the ids of the NEWEST newest posts' range, when they lie
        close together (at most SPREAD times as many ids as posts). Under the lock."""
        if query in self.windows:
            return self.windows[query]
        if not self.newest_read:
            newest = [r[0] for r in self.conn.execute(NEWEST_SQL, [NEWEST])]
            close = newest and max(newest) - min(newest) < SPREAD * len(newest)
            self.newest = (min(newest), max(newest), frozenset(newest)) if close else None
            self.newest_read = True
        if self.newest is None:
            return None
        lo, hi, newest_ids = self.newest
        terms = search_terms(query)
        if not terms:
            return None
        grams = self.conn.execute("select 1 from sqlite_master where name = 'posts_grams'").fetchone() is not None
        sql, params = post_ids_sql(terms, grams=grams, within=True)
        matched = frozenset(r[0] for r in self.conn.execute(sql, {**params, "lo": lo, "hi": hi}))
        window = self.windows[query] = Window(lo, hi, matched, len(matched & newest_ids) / len(newest_ids))
        return window

    def many(self, query: str) -> bool:
        """Whether ``query`` matches more than FEW_MATCHES of the posts: from its whole set when
        known, else from the share of the newest posts it matches (its ``Window``), while the whole
        set is computed; without a window, from the whole set, waited for."""
        with self.lock:
            self._recheck()
            posts = self._count()
            future = self._started(query)
            window = None if future.done() else self._window(query)
        if window is None:
            return len(future.result()) > FEW_MATCHES * posts
        return window.share > FEW_MATCHES

    def membership(self, query: str) -> Callable[[int], bool]:
        """Whether a post matches ``query``: from its window for the posts of that range while the
        whole set is being computed, else (and for the other posts) from the whole set."""
        with self.lock:
            self._recheck()
            future = self._started(query)
            window = None if future.done() else self.windows.get(query)
        if window is None:
            return future.result().__contains__
        return Membership(window, future)

    def warm(self) -> None:
        """What every search needs, read now (as the server starts, ``archive_search``'s ``startup``)
        rather than by the first search: the number of posts and the ``Listing`` (0.2 to 0.3 s of
        CPU at 100,000 posts, and a read of ``idx_posts_listing`` from the disk when cold); meanwhile,
        in the thread that computes matches, the indexes of both full-text indexes' segments
        (``posts_fts_idx``, ``posts_grams_idx``: 6 MB at 100,000 posts), which each word's search
        looks up in every segment, so that the first search finds their pages in the page cache."""
        indexes = self.computing.submit(self._read_segment_indexes) if self.computing is not None else None
        try:
            with self.lock:
                self._recheck()
                self._count()
            self.listings.current()
        finally:
            if indexes is not None:
                indexes.result()

    def _read_segment_indexes(self) -> None:
        for name in SEGMENT_INDEXES:
            if self.whole.execute("select 1 from sqlite_master where name = ?", [name]).fetchone():
                self.whole.execute(f"select count(*) from {name}").fetchall()

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


class Window(NamedTuple):
    """A search's matches among the ids from ``lo`` to ``hi``, and the share of the newest posts it matches."""
    lo: int
    hi: int
    matched: frozenset[int]
    share: float


class Membership:
    """Whether a post matches a search: from its ``Window`` for a post in its range, else from the
    whole set (waited for once, then kept)."""

    def __init__(self, window: Window, whole: Future):
        self.window = window
        self.whole = whole
        self.found: frozenset[int] | None = None

    def __call__(self, post_id: int) -> bool:
        if self.found is None:
            if self.window.lo <= post_id <= self.window.hi:
                return post_id in self.window.matched
            self.found = self.whole.result()
        return post_id in self.found


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
                       for _ in range(3 + RANGES)]
            _matches[path] = Matches(readers[0], Listings(readers[1]), whole=readers[2], beside=readers[3:])
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
