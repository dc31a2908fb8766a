"""A consistent copy of the archive, safe to take while a crawl is writing.

In WAL mode the ``.db`` file alone is not the archive: committed pages may
still be in ``.db-wal``, so copying the file with ``cp`` can give a copy that
lacks them, or a torn one. SQLite's online backup API reads one snapshot
(a read transaction, which never blocks the writer in WAL mode) and copies
every page of it. The copy is then switched to the rollback journal, so that
it is one self-contained file, checked with ``PRAGMA integrity_check`` and
only then moved into place.

The archive's notification targets are kept beside it, never in it
(``ARCHIVE.notify.json``, ``archive.notify``): they are copied beside the copy
(``COPY.notify.json``, readable by its owner only, as they are), so that the copy
put back in place of the archive tells the same targets from the delivery state
it holds. An archive without targets leaves none beside its copy.
"""

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from archive.core.db import ArchiveError
from archive.notify import config_path, load_targets, save_targets


@dataclass
class Backup:
    path: str
    posts: int
    bytes: int
    seconds: float
    targets: str | None = None  # the notification targets' copy, when the archive has targets


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def backup_archive(db_path: str | os.PathLike[str], target: str | os.PathLike[str]) -> Backup:
    """Copy the archive at ``db_path`` to ``target`` and check the copy.

    ``target`` is replaced only by a copy that passed its integrity check.

    Raises:
        ArchiveError: no archive at ``db_path``; ``target`` is the archive
            itself or one of its WAL files; the copy cannot be written or
            fails its check.
    """
    source, target = Path(db_path), Path(target)
    if not source.is_file():
        raise ArchiveError(f"no archive at {source}")
    for own in (source, Path(f"{source}-wal"), Path(f"{source}-shm")):
        if _same_file(target, own):
            raise ArchiveError(f"refusing to back up {source} onto itself ({target})")
    if not target.parent.is_dir():
        raise ArchiveError(f"directory does not exist: {target.parent}")
    started = time.monotonic()
    partial = target.with_name(f".{target.name}.partial")
    partial.unlink(missing_ok=True)
    reader = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)
    try:
        copy = sqlite3.connect(partial)
        try:
            reader.backup(copy)  # one step: one snapshot, whatever the writer commits meanwhile
            copy.execute("PRAGMA journal_mode = DELETE")
            problems = [row[0] for row in copy.execute("PRAGMA integrity_check")]
            if problems != ["ok"]:
                raise ArchiveError(f"the copy failed its integrity check: {'; '.join(problems[:3])}")
            posts = copy.execute("select count(*) from posts").fetchone()[0] if _has_posts(copy) else 0
        finally:
            copy.close()
        os.replace(partial, target)
        targets = _copy_targets(source, target)
    except (sqlite3.Error, OSError) as e:
        raise ArchiveError(f"cannot back up {source} to {target}: {e}") from e
    finally:
        reader.close()
        partial.unlink(missing_ok=True)
    return Backup(str(target), posts, target.stat().st_size, time.monotonic() - started, targets)


def _copy_targets(source: Path, target: Path) -> str | None:
    """Copy the notification targets of the archive ``source`` beside its copy ``target`` (0600, replaced
    whole); remove an older copy's when the archive has none. Returns the copy's path, if any."""
    if not config_path(source).exists():
        config_path(target).unlink(missing_ok=True)
        return None
    save_targets(target, load_targets(source))
    return str(config_path(target))


def _has_posts(conn: sqlite3.Connection) -> bool:
    return conn.execute("select 1 from sqlite_master where type = 'table' and name = 'posts'").fetchone() is not None
