"""One connection to the archive for the whole crawl, its writes grouped in transactions.

The spider, the conditional-request middleware and the pipelines all read and
write the archive through ``ArchiveStore.of(crawler)``. A write asks for
``store.batch()``: the connection inside the open batch transaction, begun
when needed and committed every ``ARCHIVE_COMMIT_INTERVAL`` seconds and when
the engine stops. One commit covers a second of work instead of one commit
per item, and one connection means no page cache is thrown away because
another connection of the same crawl wrote.

Each save still runs in its own savepoint (sqlite-utils' ``atomic()`` nests),
so a save that fails leaves nothing half-written. A crash loses at most the
batch not yet committed; the records of those fetches are in the same batch,
so the next run fetches those pages again.
"""

import asyncio
import logging
import sqlite3
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from scrapy import signals
from twisted.internet import task

from archive import open_archive

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from sqlite_utils import Database

logger = logging.getLogger(__name__)

_stores: "WeakKeyDictionary[Crawler, ArchiveStore]" = WeakKeyDictionary()


class ArchiveStore:
    def __init__(self, crawler: "Crawler"):
        self.crawler = crawler
        self.path: str = crawler.settings.get("ARCHIVE_PATH")
        self.interval = crawler.settings.getfloat("ARCHIVE_COMMIT_INTERVAL")
        self.fatal: str | None = None  # why the archive cannot be written any more
        self._db: "Database | None" = None
        self._timer: task.LoopingCall | None = None

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
        """The connection, opened on first use; for reads.

        Raises:
            ArchiveError: the archive cannot be opened.
        """
        if self._db is None:
            self._db = open_archive(self.path)
        return self._db

    def batch(self) -> "Database":
        """The connection, inside the batch transaction (begun now if none is open); for writes."""
        db = self.db
        if not db.conn.in_transaction:
            db.conn.execute("BEGIN IMMEDIATE")
        if self._timer is None:
            self._timer = task.LoopingCall(self.commit)
            self._timer.start(self.interval, now=False)
        return db

    def commit(self) -> None:
        """Commit the batch, if one is open. A failure stops the crawl (see ``fail``)."""
        if self._db is None or not self._db.conn.in_transaction:
            return
        try:
            self._db.conn.commit()
            self.crawler.stats.inc_value("archive/commits")
        except sqlite3.OperationalError as e:
            self.fail(e)

    def fail(self, error: sqlite3.OperationalError) -> None:
        """The archive cannot be written (disk full, read-only, I/O error): keep what can be kept, stop the crawl."""
        if self.fatal is None:
            self.fatal = str(error)
            logger.error("the archive cannot be written (%s); stopping the crawl", error)
            self.crawler.stats.set_value("archive/fatal", str(error))
            if self.crawler.engine is not None:
                asyncio.ensure_future(self.crawler.engine.close_spider_async(reason="archive_unwritable"))
        if self._db is not None and self._db.conn.in_transaction:
            try:
                self._db.conn.commit()  # the saves before the failing one are whole
            except sqlite3.OperationalError:
                self._db.conn.rollback()

    def close(self) -> None:
        """Commit the last batch and close the connection (when the engine stops)."""
        if self._timer is not None and self._timer.running:
            self._timer.stop()
        if self._db is None:
            return
        try:
            self.commit()
        finally:
            if self._db.conn.in_transaction:
                self._db.conn.rollback()
            self._db.close()
            self._db = None
