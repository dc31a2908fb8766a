"""Opening the archive: one SQLite file, WAL mode, schema up to date."""

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from sqlite_utils import Database

from archive.core.schema import ensure_schema, migrations
from archive.search.index import register_functions

BUSY_TIMEOUT_MS = 10_000


class ArchiveError(ValueError):
    """The archive cannot be opened or written; the message says why."""


def is_damage(error: sqlite3.Error) -> bool:
    """An error of the file (damaged, or no SQLite database), not of the statement that met it."""
    return error.sqlite_errorname in ("SQLITE_CORRUPT", "SQLITE_NOTADB")


def is_busy(error: sqlite3.Error) -> bool:
    """Another connection holds the lock this statement waited for (or could not wait for)."""
    return error.sqlite_errorname in ("SQLITE_BUSY", "SQLITE_LOCKED")


@contextmanager
def writing(db: Database) -> Iterator[Database]:
    """A write transaction that takes the write lock first (``BEGIN IMMEDIATE``), waiting up to the busy
    timeout for a writer such as a crawl's, which commits every ``ARCHIVE_COMMIT_INTERVAL``. A transaction
    that reads first and writes after (``db.atomic()``) is refused at once when that writer commits in
    between; this one is not, and what it writes beside the archive (a file) is written in it, last."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.conn.rollback()
        raise
    db.execute("COMMIT")


def open_archive(path: str | os.PathLike[str], *, read_only: bool = False) -> Database:
    """Open (creating if needed) the archive at ``path`` and bring its schema up to date.

    Args:
        path: the SQLite file; its directory must exist.
        read_only: it is only read (``_read_archive``): an archive the user cannot write is opened
            read-only, and a damaged one raises the ``sqlite3.DatabaseError`` met.

    Raises:
        ArchiveError: the directory is missing, the file is not an SQLite
            database, or it cannot be written.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ArchiveError(f"directory does not exist: {directory}")
    if os.path.isdir(path):
        raise ArchiveError(f"is a directory, not a database file: {path}")
    if read_only:
        return _read_archive(path)
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000)
        db = Database(conn)
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        db.execute("PRAGMA foreign_keys = ON")
        register_functions(conn)  # the triggers of posts call them
        db.execute("PRAGMA journal_mode = wal")
        # no fsync at every commit (WAL's usual setting): a crash loses nothing, a power cut the last commits at most
        db.execute("PRAGMA synchronous = NORMAL")
        ensure_schema(db)
    except sqlite3.DatabaseError as e:
        raise ArchiveError(f"cannot use {path} as an archive: {e}") from e
    return db


def _read_archive(path: str) -> Database:
    """The archive at ``path`` opened for reading: read-only (``mode=ro``) when the user cannot write it or
    its folder; else as usual, which lets SQLite remove the ``-wal`` and ``-shm`` files on close. An archive
    with migrations pending is opened for writing, to bring it up to date.

    In WAL mode a reader needs the ``-wal`` and ``-shm`` files beside the archive, or the right to
    create them: in a folder the user cannot write, an archive without them (closed cleanly: its
    whole content in the file itself) is read as immutable.
    """
    writable = os.access(path, os.W_OK) and os.access(os.path.dirname(os.path.abspath(path)), os.W_OK)
    uri = Path(path).resolve().as_uri()
    try:
        db = _connect(uri if writable else f"{uri}?mode=ro")
        try:
            pending = migrations.pending(db)
        except sqlite3.OperationalError as e:
            if e.sqlite_errorname != "SQLITE_READONLY_DIRECTORY" or os.path.exists(path + "-wal"):
                raise
            db.close()
            db = _connect(f"{uri}?mode=ro&immutable=1")
            pending = migrations.pending(db)
    except sqlite3.DatabaseError as e:
        if is_damage(e):
            raise
        raise ArchiveError(f"cannot read {path} as an archive: {e}") from e
    if pending:
        db.close()
        return open_archive(path)
    return db


def _connect(uri: str) -> Database:
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    register_functions(conn)
    return Database(conn)


SQLITE_HEADER = b"SQLite format 3\x00"
# Room the archive needs to grow during a crawl (WAL, new posts, captures).
MIN_FREE_BYTES = 5 * 1024 * 1024


def check_writable(path: str | os.PathLike[str], *, min_free_bytes: int = MIN_FREE_BYTES) -> None:
    """Make sure a crawl can write the archive, before anything is fetched.

    Nothing is created or changed: the file, if there is one, must be an
    SQLite database that can be opened for writing, its directory must accept
    new files (SQLite's -wal and -shm), and the disk must have room.

    Raises:
        ArchiveError: saying which of these fails.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ArchiveError(f"directory does not exist: {directory}")
    if os.path.exists(path):
        try:
            with open(path, "r+b") as f:
                header = f.read(len(SQLITE_HEADER))
        except OSError as e:
            raise ArchiveError(f"cannot write the archive {path}: {e.strerror}") from e
        if header and header != SQLITE_HEADER:
            raise ArchiveError(f"{path} is not an SQLite database; it is left as it is")
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as e:
        raise ArchiveError(f"cannot create files in {directory}: {e.strerror}") from e
    free = shutil.disk_usage(directory).free
    if free < min_free_bytes:
        raise ArchiveError(f"disk full: {free // 1024} KiB free in {directory}, the archive needs {min_free_bytes // 1024} KiB to grow")


def utcnow() -> str:
    """The current time as ISO 8601 UTC text, second precision."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
