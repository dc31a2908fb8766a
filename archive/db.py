"""Opening the archive: one SQLite file, WAL mode, schema up to date."""

import os
import sqlite3
from datetime import datetime, timezone

from sqlite_utils import Database

from .schema import ensure_schema

BUSY_TIMEOUT_MS = 10_000


class ArchiveError(ValueError):
    """The archive cannot be opened or written; the message says why."""


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
        if migrate:
            db.execute("PRAGMA journal_mode = wal")
            # no fsync at every commit (WAL's usual setting): a crash loses nothing, a power cut the last commits at most
            db.execute("PRAGMA synchronous = NORMAL")
            ensure_schema(db)
    except sqlite3.DatabaseError as e:
        raise ArchiveError(f"cannot use {path} as an archive: {e}") from e
    return db


def utcnow() -> str:
    """The current time as ISO 8601 UTC text, second precision."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
