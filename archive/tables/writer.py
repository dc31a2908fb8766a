"""The archive's one writer: write functions run in order, in batched transactions.

A crawl writes through one ``ArchiveWriter``, whatever the number of its
processes. With one process, it lives in that process's writer thread
(``crawler.store.archive_store``); with several (``blogarchive crawl --processes N``), in
``blogarchive`` itself, which serves the crawl processes' writes over a
socket each (``serve_writes``), in the order they arrive.

A write is ``fn(db, *args, **kwargs)`` with ``fn`` a function of this package
(``archive.tables.writes``, ``archive.tables.captures``, ...). The writes go in one
transaction, committed every MAX_BATCH writes and when asked; each write
runs in its own savepoint (sqlite-utils' ``atomic()`` nests), so one that
fails leaves nothing half-written.
"""

import logging
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

from sqlite_utils import Database

from archive.core.db import open_archive

logger = logging.getLogger(__name__)

T = TypeVar("T")
# Writes in one transaction at most: what a crash or a full disk can take back stays small.
MAX_BATCH = 25


class ArchiveUnwritable(Exception):
    """A write was skipped: the archive could not be written earlier in the crawl."""


class ArchiveWriter:
    """Runs write functions on one connection, in batched transactions."""

    def __init__(self, path: str):
        self.path = path
        self.fatal: str | None = None  # why the archive cannot be written any more
        self.commits = 0
        self._db: Database | None = None
        self._batched = 0

    def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(db, *args, **kwargs)`` inside the open transaction.

        Raises:
            ArchiveUnwritable: an earlier write found the archive unwritable.
            sqlite3.OperationalError: this one did (what the batch holds is kept if it can be).
        """
        if self.fatal:
            raise ArchiveUnwritable(self.fatal)
        try:
            if self._db is None:
                self._db = open_archive(self.path)
            if not self._db.conn.in_transaction:
                self._db.conn.execute("BEGIN IMMEDIATE")
                self._batched = 0
            result = fn(self._db, *args, **kwargs)
            self._batched += 1
            if self._batched >= MAX_BATCH:
                self.commit()
            return result
        except sqlite3.OperationalError as e:
            self._fail(e)
            raise

    def commit(self) -> None:
        if self._db is None or not self._db.conn.in_transaction:
            return
        try:
            self._db.conn.commit()
            self.commits += 1
        except sqlite3.OperationalError as e:
            self._fail(e)

    def close(self) -> None:
        """Commit the last writes and close the connection."""
        if self._db is not None:
            try:
                self.commit()
            finally:
                if self._db.conn.in_transaction:
                    self._db.conn.rollback()
                self._db.close()
                self._db = None

    def _fail(self, error: sqlite3.OperationalError) -> None:
        """Keep what the batch holds if it can be kept; refuse every later write."""
        assert self._db is not None
        conn = self._db.conn
        if conn.in_transaction:
            try:
                conn.commit()  # the saves before the failing one are whole
            except sqlite3.OperationalError:
                conn.rollback()
        if self.fatal is None:
            self.fatal = str(error)
            logger.error("the archive cannot be written (%s)", error)


@dataclass
class Link:
    """A crawl process's socket to the writer, and what it said about itself."""

    conn: Connection
    progress: dict[str, int] = field(default_factory=dict)  # its latest counts
    closed: str | None = None  # the reason its crawl closed with, once it said


def serve_writes(writer: ArchiveWriter, links: list[Link], *, interval: float = 0.25) -> Iterator[None]:
    """Run the writes the crawl processes send, in arrival order, until every link is closed.

    Yields every ``interval`` seconds or so (for progress lines); the open
    transaction is committed then too.

    A message is ``("run", fn, args, kwargs)``, answered ``("ok", result)``
    or ``("error", exception)``; ``("commit",)``, answered ``("ok", None)``;
    ``("progress", counts)`` and ``("closed", reason)``, not answered.
    """
    open_links = {link.conn: link for link in links}
    last = time.monotonic()
    while open_links:
        for conn in wait(list(open_links), timeout=interval):
            assert isinstance(conn, Connection)
            try:
                message = conn.recv()
            except (EOFError, OSError):
                del open_links[conn]
                continue
            _handle(writer, open_links[conn], message)
        if time.monotonic() - last >= interval:
            writer.commit()
            last = time.monotonic()
            yield
    writer.commit()


def _handle(writer: ArchiveWriter, link: Link, message: tuple[Any, ...]) -> None:
    kind = message[0]
    if kind == "progress":
        link.progress = message[1]
        return
    if kind == "closed":
        link.closed = message[1]
        return
    try:
        if kind == "commit":
            writer.commit()
            if writer.fatal:
                raise ArchiveUnwritable(writer.fatal)
            result = None
        else:
            _, fn, args, kwargs = message
            if not getattr(fn, "__module__", "").startswith("archive."):
                raise ValueError(f"not an archive write: {fn!r}")
            result = writer.run(fn, *args, **kwargs)
        answer: tuple[str, Any] = ("ok", result)
    except Exception as e:  # the crawl process that asked raises it
        answer = ("error", e)
    try:
        link.conn.send(answer)
    except OSError:
        pass  # that process died; its link closes at the next read
    except Exception:  # an exception that cannot be pickled: its message
        link.conn.send(("error", RuntimeError(f"{type(answer[1]).__name__}: {answer[1]}")))
