"""One crawl at a time per archive: an exclusive lock on ``ARCHIVE.lock``.

The lock is ``flock(2)`` on a file beside the archive, which the kernel
releases when the holding process dies, however it dies: the lock of a dead
crawl is simply taken over. The file names the holder's pid, for messages.
"""

import fcntl
import os

from sqlite_utils import Database

from archive.core.db import utcnow


class CrawlLocked(RuntimeError):
    """Another crawl holds the archive's lock."""


def lock_path(db_path: str | os.PathLike[str]) -> str:
    return os.fspath(db_path) + ".lock"


def acquire_lock(db_path: str | os.PathLike[str]) -> tuple[int, int | None]:
    """Take the archive's crawl lock.

    Returns:
        The locked file descriptor (keep it open to hold the lock; children
        that inherit it hold it too) and the pid of a dead holder whose lock
        was taken over, if any.

    Raises:
        CrawlLocked: a live process holds it.
    """
    path = lock_path(db_path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        who = f"pid {holder[0]}, since {holder[1]}" if holder else "another process"
        raise CrawlLocked(f"another crawl is running on {os.fspath(db_path)} ({who})") from None
    previous = _holder(fd)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()} {utcnow()}\n".encode(), 0)
    stale = previous[0] if previous and previous[0] != os.getpid() else None
    return fd, stale


def adopt_lock(fd: int) -> None:
    """Check that the inherited descriptor ``fd`` holds the lock (a parent took it).

    Raises:
        CrawlLocked: it does not.
    """
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        raise CrawlLocked(f"descriptor {fd} does not hold the crawl lock: {e}") from e


def release_lock(fd: int) -> None:
    """Give the lock up; the emptied file tells the next crawl it ended cleanly."""
    os.ftruncate(fd, 0)
    os.close(fd)


def _holder(fd: int) -> tuple[int, str] | None:
    text = os.pread(fd, 200, 0).decode("ascii", "replace").split()
    return (int(text[0]), text[1] if len(text) > 1 else "?") if text and text[0].isdigit() else None


def close_stale_runs(db: Database) -> int:
    """Mark runs left ``running`` by a dead crawl as interrupted; call with the lock held."""
    with db.atomic():
        count = db.execute(
            "update crawl_runs set status = 'interrupted', finished_at = coalesce(finished_at, ?) where status = 'running'",
            [utcnow()],
        ).rowcount
        db.execute("update sources set run_state = 'interrupted' where run_state = 'running'")
    return count
