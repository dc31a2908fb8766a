"""The crawl's archive: reads in the reactor thread, writes in one writer thread, batched.

The spider, the conditional-request middleware and the pipelines all use
``ArchiveStore.of(crawler)``:

- ``store.db`` is a connection for reads, in the reactor thread. It sees what
  earlier runs and the committed batches of this one wrote.
- ``store.write(fn, ...)`` runs ``fn(db, ...)`` in the writer thread, on the
  writer's own connection, in the order the calls were made, and returns at
  once. The writes go in one transaction that is committed every
  ``ARCHIVE_COMMIT_INTERVAL`` seconds (or every MAX_BATCH writes, if sooner)
  and when the engine stops.
- ``store.write_now(fn, ...)`` does the same, waits, commits, and returns what
  ``fn`` returned: for the few writes a crawl needs done before it goes on.

SQLite does its work (full-text indexing above all) without holding the GIL,
so the archive is written while the reactor thread goes on crawling, and one
commit covers a second of work instead of one commit per item. Each save
still runs in its own savepoint (sqlite-utils' ``atomic()`` nests), so a save
that fails leaves nothing half-written. A crash loses at most the batch not
yet committed; the records of those fetches are in the same batch, so the
next run fetches those pages again.

A write that finds the archive unwritable (disk full, read-only, I/O error)
commits what can be committed, stops the crawl, and every later write is
skipped.
"""

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar
from weakref import WeakKeyDictionary

from scrapy import signals
from twisted.internet import task

from archive import open_archive

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from sqlite_utils import Database

logger = logging.getLogger(__name__)

T = TypeVar("T")
# Writes queued at most before the reactor thread waits for the writer (a slow disk), and
# bytes they hold at most (captures' bodies, posts' texts: a few huge pages fill it first).
MAX_BACKLOG = 1000
MAX_BACKLOG_BYTES = 48 * 1024 * 1024
# Writes in one transaction at most: a fast crawl commits sooner than every interval,
# so that what a crash or a full disk can take back stays small.
MAX_BATCH = 25

_stores: "WeakKeyDictionary[Crawler, ArchiveStore]" = WeakKeyDictionary()


class ArchiveUnwritable(Exception):
    """A write was skipped: the archive could not be written earlier in the crawl."""


class ArchiveStore:
    def __init__(self, crawler: "Crawler"):
        self.crawler = crawler
        self.path: str = crawler.settings.get("ARCHIVE_PATH")
        self.interval = crawler.settings.getfloat("ARCHIVE_COMMIT_INTERVAL")
        self.fatal: str | None = None  # why the archive cannot be written any more
        self._reader: "Database | None" = None
        self._writer: "Database | None" = None  # used in the writer thread only
        self._executor: ThreadPoolExecutor | None = None
        self._timer: task.LoopingCall | None = None
        self._last: Future | None = None
        self._queued = 0  # writes submitted (reactor thread)
        self._done = 0  # writes finished (writer thread)
        self._queued_bytes = 0  # what they hold (reactor thread)
        self._done_bytes = 0  # (writer thread)
        self._batched = 0  # writes in the open transaction (writer thread)

    @classmethod
    def of(cls, crawler: "Crawler") -> "ArchiveStore":
        """The crawl's store, created on first use."""
        store = _stores.get(crawler)
        if store is None:
            store = _stores[crawler] = cls(crawler)
            crawler.signals.connect(store.close, signal=signals.engine_stopped)
        return store

    @property
    def db(self) -> "Database":
        """The connection for reads, opened on first use.

        Raises:
            ArchiveError: the archive cannot be opened.
        """
        if self._reader is None:
            self._reader = open_archive(self.path)
        return self._reader

    # -- writes (called in the reactor thread) ----------------------------------------

    def write(self, fn: Callable[..., T], *args: Any, held: int = 0, **kwargs: Any) -> "Future[T]":
        """Run ``fn(db, *args, **kwargs)`` in the writer thread, after every earlier write
        (``held``: the bytes its arguments hold until it is done)."""
        backlog = self._queued - self._done > MAX_BACKLOG or self._queued_bytes - self._done_bytes > MAX_BACKLOG_BYTES
        if self._last is not None and backlog:
            self._last.exception()  # wait until the writer catches up
        self._queued += 1
        self._queued_bytes += held
        self._last = self._submit(self._run, fn, args, kwargs, held)
        return self._last

    def write_now(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``write``, waited for and committed; what ``fn`` returned (or raised)."""
        future = self.write(fn, *args, **kwargs)
        self.commit().result()
        return future.result()

    def commit(self) -> "Future[None]":
        """Commit the writes made so far (in the writer thread, after them)."""
        return self._submit(self._commit)

    def close(self) -> None:
        """Commit the last writes and close both connections (when the engine stops)."""
        if self._timer is not None and self._timer.running:
            self._timer.stop()
        if self._executor is not None:
            self._submit(self._close_writer).exception()
            self._executor.shutdown(wait=True)
            self._executor = None
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def _submit(self, fn: Callable[..., T], *args: Any) -> "Future[T]":
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="archive-writer")
            self._timer = task.LoopingCall(self.commit)
            self._timer.start(self.interval, now=False)
        return self._executor.submit(fn, *args)

    # -- the writer thread --------------------------------------------------------------

    def _run(self, fn: Callable[..., T], args: tuple, kwargs: dict[str, Any], held: int = 0) -> T:
        try:
            if self.fatal:
                raise ArchiveUnwritable(self.fatal)
            if self._writer is None:
                self._writer = open_archive(self.path)
            if not self._writer.conn.in_transaction:
                self._writer.conn.execute("BEGIN IMMEDIATE")
                self._batched = 0
            result = fn(self._writer, *args, **kwargs)
            self._batched += 1
            if self._batched >= MAX_BATCH:
                self._commit()
            return result
        except sqlite3.OperationalError as e:
            self._fail(e)
            raise
        except ArchiveUnwritable:
            raise
        except Exception:
            logger.exception("writing to the archive failed: %s", getattr(fn, "__qualname__", fn))
            self.crawler.stats.inc_value("archive/write_errors")
            raise
        finally:
            self._done += 1
            self._done_bytes += held

    def _fail(self, error: sqlite3.OperationalError) -> None:
        """Keep what the batch holds if it can be kept, then stop the crawl."""
        assert self._writer is not None
        conn = self._writer.conn
        if conn.in_transaction:
            try:
                conn.commit()  # the saves before the failing one are whole
            except sqlite3.OperationalError:
                conn.rollback()
        if self.fatal is None:
            self.fatal = str(error)
            logger.error("the archive cannot be written (%s); stopping the crawl", error)
            self.crawler.stats.set_value("archive/fatal", str(error))
            from twisted.internet import reactor

            reactor.callFromThread(self._stop_crawl)

    def _stop_crawl(self) -> None:
        if self.crawler.engine is not None:
            asyncio.ensure_future(self.crawler.engine.close_spider_async(reason="archive_unwritable"))

    def _commit(self) -> None:
        if self._writer is None or not self._writer.conn.in_transaction:
            return
        try:
            self._writer.conn.commit()
            self.crawler.stats.inc_value("archive/commits")
        except sqlite3.OperationalError as e:
            self._fail(e)

    def _close_writer(self) -> None:
        if self._writer is not None:
            try:
                self._commit()
            finally:
                if self._writer.conn.in_transaction:
                    self._writer.conn.rollback()
                self._writer.close()
                self._writer = None
