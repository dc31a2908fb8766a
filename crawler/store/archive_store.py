"""The crawl's archive: reads in the reactor thread, writes in one writer thread, batched.

The spider, the conditional-request middleware and the pipelines all use
``ArchiveStore.of(crawler)``:

- ``store.db`` is a connection for reads, in the reactor thread. It sees what
  earlier runs and the committed batches of this one wrote.
- ``store.write(fn, ...)`` runs the archive function ``fn(db, ...)`` in the
  writer thread, in the order the calls were made, and returns at once.
  ``store.apply(step, ...)`` runs ``step(run, ...)`` there, where ``run(fn,
  ...)`` is such a write: for a save made of several writes.
- ``store.write_now(fn, ...)`` does the same, waits, commits, and returns what
  ``fn`` returned: for the few writes a crawl needs done before it goes on.

The writes go through the archive's one writer (``archive.tables.writer``): in this
process, or, when ``ARCHIVE_WRITER_FD`` names a socket, in ``blogarchive
crawl --processes N``, which serves the writes of all its crawl processes;
in a cluster job (``ARCHIVE_CLUSTER_KEY``), in the job's plan and in the
coordinator, through Redis (``crawler.store.cluster_writer``).
The writes go in one transaction that is committed every
``ARCHIVE_COMMIT_INTERVAL`` seconds (or every MAX_BATCH writes, if sooner)
and when the engine stops.

SQLite does its work (full-text indexing above all) without holding the GIL,
so the archive is written while the reactor thread goes on crawling, and one
commit covers a second of work instead of one commit per item. A crash loses
at most the batch not yet committed; the records of those fetches are in the
same batch, so the next run fetches those pages again.

A write that finds the archive unwritable (disk full, read-only, I/O error)
commits what can be committed, stops the crawl, and every later write is
skipped.
"""

import asyncio
import logging
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any, TypeVar
from weakref import WeakKeyDictionary

from scrapy import signals
from twisted.internet import task

from archive import open_archive
from archive.tables.writer import ArchiveUnwritable, ArchiveWriter

from crawler.memory import BIG_PAGE_BYTES

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from sqlite_utils import Database

    from crawler.store.cluster_writer import ClusterWriter

logger = logging.getLogger(__name__)

T = TypeVar("T")
# What a step of ``ArchiveStore.apply`` gets: ``run(fn, *args, **kwargs)`` makes one write.
Write = Callable[..., Any]
# Writes queued at most before the reactor thread waits for the writer (a slow disk), and
# bytes they hold at most (captures' bodies, posts' texts: a few huge pages fill it first).
MAX_BACKLOG = 1000
MAX_BACKLOG_BYTES = 48 * 1024 * 1024

_stores: "WeakKeyDictionary[Crawler, ArchiveStore]" = WeakKeyDictionary()

__all__ = ["ArchiveStore", "ArchiveUnwritable", "Write"]


class RemoteWriter:
    """The archive's writer in ``blogarchive crawl --processes N``, over the socket ``fd``."""

    def __init__(self, fd: int):
        self.conn = Connection(fd)
        self.fatal: str | None = None
        self._sending = threading.Lock()  # progress lines are sent from the reactor thread

    def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return self._ask(("run", fn, args, kwargs))

    def commit(self) -> None:
        self._ask(("commit",))

    def tell(self, *message: Any) -> None:
        """Send a message that has no answer (progress, the crawl's end); none if the writer is gone."""
        try:
            self._send(message)
        except OSError:
            pass  # every write says so

    def _send(self, message: tuple[Any, ...]) -> None:
        with self._sending:
            self.conn.send(message)

    def close(self) -> None:
        self.conn.close()

    def _ask(self, message: tuple[Any, ...]) -> Any:
        try:
            self._send(message)
            status, value = self.conn.recv()
        except (EOFError, OSError) as e:
            raise ArchiveUnwritable(f"the archive's writer is gone ({e or 'connection closed'})") from e
        if status == "error":
            raise value
        return value


class ArchiveStore:
    def __init__(self, crawler: "Crawler"):
        self.crawler = crawler
        self.path: str = crawler.settings.get("ARCHIVE_PATH")
        self.interval = crawler.settings.getfloat("ARCHIVE_COMMIT_INTERVAL")
        writer_fd = crawler.settings.get("ARCHIVE_WRITER_FD")
        self.remote: "RemoteWriter | ClusterWriter | None" = None
        if writer_fd:
            self.remote = RemoteWriter(int(writer_fd))
        elif crawler.settings.get("ARCHIVE_CLUSTER_KEY"):
            from crawler.store.cluster_writer import (
                ClusterWriter,  # a cluster job's only: Redis is not imported by every crawl
            )

            self.remote = ClusterWriter(crawler.settings)
            self.path = self.remote.path  # the job's plan
        self.fatal: str | None = None  # why the archive cannot be written any more
        self._reader: "Database | None" = None
        self._writer: "ArchiveWriter | RemoteWriter | ClusterWriter | None" = None  # used in the writer thread only
        self._executor: ThreadPoolExecutor | None = None
        self._timer: task.LoopingCall | None = None
        self._last: Future | None = None
        self._queued = 0  # writes submitted (reactor thread)
        self._done = 0  # writes finished (writer thread)
        self._queued_bytes = 0  # what they hold (reactor thread)
        self._done_bytes = 0  # (writer thread)

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
        """Run the archive function ``fn(db, *args, **kwargs)`` in the writer thread, after every earlier write
        (``held``: the bytes its arguments hold until it is done)."""
        return self.apply(lambda run: run(fn, *args, **kwargs), held=held)

    def apply(self, step: Callable[..., T], *args: Any, held: int = 0) -> "Future[T]":
        """Run ``step(run, *args)`` in the writer thread, after every earlier write; ``run(fn, ...)`` is a write.
        ``held``: the bytes its arguments hold until it is done."""
        backlog = self._queued - self._done > MAX_BACKLOG or self._queued_bytes - self._done_bytes > MAX_BACKLOG_BYTES
        if self._last is not None and backlog:
            self._last.exception()  # wait until the writer catches up
        self._queued += 1
        self._queued_bytes += held
        self._last = self._submit(self._run, step, args, held)
        return self._last

    def backlog_bytes(self) -> int:
        """Bytes held by the writes queued and not done yet."""
        return self._queued_bytes - self._done_bytes

    def write_now(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``write``, waited for and committed; what ``fn`` returned (or raised)."""
        return self.apply_now(lambda run: run(fn, *args, **kwargs))

    def apply_now(self, step: Callable[..., T], *args: Any) -> T:
        """``apply``, waited for and committed; what ``step`` returned (or raised)."""
        future = self.apply(step, *args)
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

    def _run(self, step: Callable[..., T], args: tuple, held: int = 0) -> T:
        try:
            if self.fatal:
                raise ArchiveUnwritable(self.fatal)
            if self._writer is None:
                self._writer = self.remote or ArchiveWriter(self.path)
            result = step(self._writer.run, *args)
            if held > BIG_PAGE_BYTES and self.remote is None:
                # SQLite keeps the values last bound to each statement it caches (a big post's text and
                # Markdown, its capture's body) until that statement runs again: closing the connection
                # lets them go; the next write opens another
                self._close_writer()
            return result
        except (sqlite3.OperationalError, ArchiveUnwritable) as e:
            self.fail(str(e))
            raise
        except Exception:
            logger.exception("writing to the archive failed: %s", getattr(step, "__qualname__", step))
            self.crawler.stats.inc_value("archive/write_errors")
            raise
        finally:
            self._done += 1
            self._done_bytes += held

    def fail(self, error: str) -> None:
        """The writer kept what could be kept: stop the crawl."""
        if self.fatal is None:
            self.fatal = error
            logger.error("the archive cannot be written (%s); stopping the crawl", error)
            self.crawler.stats.set_value("archive/fatal", error)
            from twisted.internet import reactor

            reactor.callFromThread(self._stop_crawl)

    def _stop_crawl(self) -> None:
        if self.crawler.engine is not None:
            asyncio.ensure_future(self.crawler.engine.close_spider_async(reason="archive_unwritable"))

    def _commit(self) -> None:
        if self._writer is None or self.fatal:
            return
        try:
            self._writer.commit()
        except (sqlite3.OperationalError, ArchiveUnwritable) as e:
            self.fail(str(e))
            return
        if self._writer.fatal:
            self.fail(self._writer.fatal)
        else:
            self.crawler.stats.inc_value("archive/commits")

    def _close_writer(self) -> None:
        if self._writer is not None:
            try:
                self._commit()
            finally:
                self._writer.close()
                self._writer = None
