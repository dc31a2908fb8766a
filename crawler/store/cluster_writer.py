"""A cluster job's writer: the crawl of one host on a Scrapyd node, with Redis as the hub.

``blogarchive crawl --cluster`` (``crawler.run.coordinator``) schedules the job with
``ARCHIVE_CLUSTER_KEY`` (the run's keys in Redis) and ``ARCHIVE_CLUSTER_JOB``.
The job reads its plan (``archive.formats.plan``) from Redis into a temporary file (in a folder named
after its process: a killed job's folder is removed by the next job on the node),
which its crawl reads and writes as it would the archive; every write it
makes there is also appended, pickled, to the run's result stream, which
the coordinator makes in the archive, in order. The stream is sent at each
commit. A thread of its own renews the job's lease on its host every second:
a lease another job holds (or nobody) stops the crawl at its next commit.
``crawler.fetch.lease.LeasedDownloadHandler`` fences the host: no request leaves
once the last renewal is older than the lease, so a job that was stalled (stopped, swapped out)
while another took its host never fetches from it again.

The Redis connection is scrapy-redis's (``REDIS_URL``, ``REDIS_PARAMS``).
"""

import json
import os
import pickle
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from redis.exceptions import RedisError
from scrapy_redis.connection import get_redis_from_settings

from archive.formats.plan import save_plan
from archive.tables.writer import ArchiveUnwritable, ArchiveWriter

if TYPE_CHECKING:
    from scrapy.settings import Settings

T = TypeVar("T")
# Renews the lease if this job holds it; 0 if another does, or nobody.
RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0"
# Seconds between renewals of the lease.
RENEW_EVERY = 1.0
# A job's folder for its plan: this prefix, the job's process id, a random part.
FOLDER_PREFIX = "blogarchive-job-"


def sweep_stale_folders(parent: str | None = None) -> list[str]:
    """Remove the plan folders of jobs whose process is gone (killed: their ``close`` never ran).

    Returns:
        The folders removed.
    """
    removed = []
    for folder in Path(parent or tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}*-*"):
        pid = folder.name.removeprefix(FOLDER_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(str(folder))
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    return True


class ClusterWriter:
    """Writes made in the job's plan, and sent to the coordinator."""

    def __init__(self, settings: "Settings"):
        self.redis = get_redis_from_settings(settings)
        self.key = settings.get("ARCHIVE_CLUSTER_KEY")
        self.job = settings.get("ARCHIVE_CLUSTER_JOB")
        self.lease = f"{self.key}:lease:{settings.get('ARCHIVE_CLUSTER_HOST')}"
        self.lease_ms = int(settings.getfloat("ARCHIVE_CLUSTER_LEASE") * 1000)
        try:
            plan = self.redis.get(f"{self.key}:plan:{self.job}")
        except RedisError as e:
            raise ArchiveUnwritable(f"Redis cannot be reached: {e}") from e
        if plan is None:
            raise ArchiveUnwritable(f"no plan in Redis for job {self.job}")
        self.lost: str | None = None  # why the lease is no longer this job's
        self.renewed = self._renew_once()  # when the lease was last renewed (monotonic; 0 if it never was)
        if self.lost:
            raise ArchiveUnwritable(self.lost)
        sweep_stale_folders()
        self.folder = tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-")
        try:
            self.path = save_plan(plan, self.folder)
            self.local = ArchiveWriter(self.path)
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        self.pending: list[dict[str, Any]] = []
        self.stopping = threading.Event()
        self.heartbeat = threading.Thread(target=self._renew, name="lease-heartbeat", daemon=True)
        self.heartbeat.start()

    @property
    def fatal(self) -> str | None:
        return self.local.fatal

    def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        result = self.local.run(fn, *args, **kwargs)
        self.pending.append({"job": self.job, "call": pickle.dumps((fn, args, kwargs))})
        return result

    def commit(self) -> None:
        self.local.commit()
        self._send()

    def tell(self, kind: str, value: Any) -> None:
        """Progress counts (kept in a hash), or the crawl's end (after its last writes, in the stream)."""
        try:
            if kind == "progress":
                self.redis.hset(f"{self.key}:progress", self.job, json.dumps(value))
            else:
                self.pending.append({"job": self.job, "closed": value})
                self._send()
        except (RedisError, ArchiveUnwritable):
            pass  # the lease runs out; the coordinator schedules the host again

    def close(self) -> None:
        try:
            self._send()
        finally:
            self.stopping.set()
            self.heartbeat.join()
            self.local.close()
            shutil.rmtree(self.folder, ignore_errors=True)

    def _send(self) -> None:
        if self.lost:
            raise ArchiveUnwritable(self.lost)
        if not self.pending:
            return
        try:
            pipe = self.redis.pipeline(transaction=True)
            for entry in self.pending:
                pipe.xadd(f"{self.key}:results", entry)
            pipe.execute()
        except RedisError as e:
            raise ArchiveUnwritable(f"Redis cannot be reached: {e}") from e
        self.pending = []

    def holds_lease(self) -> bool:
        """Whether the lease is surely still this job's: lost is lost, and a renewal older than the
        lease may have run out in Redis, whatever the heartbeat thread has seen so far."""
        if not self.lost and time.monotonic() - self.renewed >= self.lease_ms / 1000:
            self.lost = f"job {self.job} has not renewed its lease on {self.lease} in time"
        return not self.lost

    def _renew(self) -> None:
        """Every RENEW_EVERY seconds, in a thread of its own (however busy the crawl is), until closed or lost."""
        while not self.stopping.wait(RENEW_EVERY):
            renewed = self._renew_once()
            if self.lost:
                return
            self.renewed = renewed or self.renewed

    def _renew_once(self) -> float:
        """Renew the lease: when the renewal was sent (its lease runs from later than that), or 0 when
        Redis could not be reached (tried again in a second; past the lease, another job takes the host)."""
        sent = time.monotonic()
        try:
            if not self.redis.eval(RENEW, 1, self.lease, self.job, self.lease_ms):
                self.lost = f"job {self.job} lost its lease on {self.lease}"
            return sent
        except RedisError:
            return 0.0
