"""Opening the archive: one SQLite file, WAL mode, schema up to date."""

import os
import shutil
import sqlite3
import tempfile
from datetime import datetime, timezone

from sqlite_utils import Database

from archive.core.schema import ensure_schema
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


def open_archive(path: str | os.PathLike[str], *, migrate: bool = True) -> Database:
    """Open (creating if needed) the archive at ``path`` and bring its schema up to date.

    Args:
        path: the SQLite file; its directory must exist.
        migrate: apply pending migrations (readers may pass False).

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
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000)
        db = Database(conn)
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        db.execute("PRAGMA foreign_keys = ON")
        register_functions(conn)  # the triggers of posts call them
        if migrate:
            db.execute("PRAGMA journal_mode = wal")
            # no fsync at every commit (WAL's usual setting): a crash loses nothing, a power cut the last commits at most
            db.execute("PRAGMA synchronous = NORMAL")
            ensure_schema(db)
    except sqlite3.DatabaseError as e:
        raise ArchiveError(f"cannot use {path} as an archive: {e}") from e
    return db


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
