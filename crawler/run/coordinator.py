"""The coordinator of a cluster crawl: Scrapyd nodes run the jobs, Redis is the hub.

``blogarchive crawl --cluster CONFIG`` (or ``--scrapyd URL ... --redis URL``)
runs on the archive's machine and is its only writer:

1. The due sources are split by host (``crawler.run.processes.split_by_host``),
   one job per host. A job's plan (``archive.formats.plan``) goes into Redis, the
   host's lease is set to the job, and the job is scheduled on a node through
   Scrapyd's ``schedule.json`` (a node that cannot be reached is skipped).
2. Jobs (``crawler.store.cluster_writer``) append their writes to the run's result
   stream. The coordinator reads it through a consumer group, makes each
   write of the job that holds its host's lease (a late job's are skipped),
   records the entry's id in ``cluster_ingest`` in the same transaction, and
   acknowledges what it committed.
3. A job whose lease runs out (its node or process died) is scheduled again,
   elsewhere if it can be, from a new plan. A coordinator that restarts finds
   the run in Redis, reads the entries it had not acknowledged, skips those
   it had committed, and goes on.
4. When every job has said it closed, the run is closed in the archive.
"""

import hashlib
import io
import json
import os
import pickle
import time
import tomllib
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from archive.core.db import open_archive
from archive.core.lock import close_stale_runs
from archive.formats.plan import export_plan
from archive.tables.writer import ArchiveWriter
from archive.tables.writes import finish_run, run_status, start_run

from crawler.run.processes import host_key, split_by_host, sum_counts

if TYPE_CHECKING:
    import redis

GROUP = "coordinator"
PROGRESS_INTERVAL = 5.0


class ClusterUnavailable(Exception):
    """Redis, or every Scrapyd node, cannot be reached."""


@dataclass
class ClusterConfig:
    """Where the cluster is: ``--cluster CONFIG`` (TOML) or ``--scrapyd URL ... --redis URL``."""

    redis: str  # redis://host:port/db
    nodes: list[str]  # Scrapyd base URLs
    project: str = "blogarchive"  # the project deployed to the nodes
    lease: float = 30.0  # seconds a job's lease on its host lasts unrenewed
    start: float = 60.0  # seconds more for a job to start on its node, before its first renewal
    jobs_per_node: int = 2  # jobs run at once on a node, at most (each is a crawl process and its workers)

    @classmethod
    def load(cls, path: str) -> "ClusterConfig":
        """Read a TOML file with ``redis``, ``nodes``, and optionally ``project``, ``lease``, ``start``, ``jobs_per_node``.

        Raises:
            ValueError: the file cannot be read or lacks a key.
        """
        try:
            with open(path, "rb") as f:
                data = tomllib.load(f)
            return cls(redis=data["redis"], nodes=list(data["nodes"]), project=data.get("project", "blogarchive"),
                       lease=float(data.get("lease", 30.0)), start=float(data.get("start", 60.0)),
                       jobs_per_node=int(data.get("jobs_per_node", 2)))
        except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError) as e:
            raise ValueError(f"cannot read the cluster configuration {path}: {e}") from e


def connect(url: str) -> "redis.Redis":
    """A Redis client that answered a ping.

    Raises:
        ClusterUnavailable: Redis cannot be reached.
    """
    import redis  # a cluster's only: not imported by every command line
    from redis.exceptions import RedisError

    client = redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=30)
    try:
        client.ping()
    except (RedisError, ValueError) as e:
        raise ClusterUnavailable(f"Redis at {url} cannot be reached: {e}") from e
    return client


class Coordinator:
    """One cluster run: its jobs, their leases, and the ingest of their results."""

    def __init__(self, db_path: str, config: ClusterConfig, client: "redis.Redis", settings: dict[str, str],
                 spider_args: dict[str, str]):
        self.db_path = db_path
        self.config = config
        self.redis = client
        self.settings = settings
        self.spider_args = spider_args
        self.key = "blogarchive:" + hashlib.sha1(os.path.abspath(db_path).encode()).hexdigest()[:12]
        self.stream = f"{self.key}:results"
        self.writer = ArchiveWriter(db_path)
        self.state: dict[str, Any] = {}
        self.down: set[str] = set()  # nodes that could not be reached
        self.acks: list[bytes] = []

    # -- the run --------------------------------------------------------------------------

    def start(self, sources: list[dict[str, Any]], host_map: dict[str, str]) -> None:
        """Resume the run Redis holds for this archive, or open a new one."""
        saved = self.redis.get(f"{self.key}:run")
        db = open_archive(self.db_path)
        try:
            if saved:
                state = json.loads(saved)
                row = db.execute("select status from crawl_runs where id = ?", [state["run"]]).fetchone()
                if row and row[0] == "running":
                    self.state = state
                    return
            close_stale_runs(db)
            by_host: dict[str, list[int]] = {}
            for source in sources:
                by_host.setdefault(host_key(source, host_map), []).append(source["id"])
            groups = split_by_host(sources, len(by_host), host_map, {})
            hosts = {tuple(sorted(ids)): host for host, ids in by_host.items()}
            self.state = {"run": start_run(db, []), "started": time.time(), "jobs": {
                str(n): {"sources": ids, "host": hosts[tuple(ids)], "attempt": 0, "job": None, "closed": None}
                for n, ids in enumerate(groups)}}
        finally:
            db.close()
        self.redis.delete(self.stream)
        self.redis.xgroup_create(self.stream, GROUP, id="0", mkstream=True)
        self._save_state()

    def run(self, on_progress: Callable[[dict[str, int]], None] | None = None) -> list[str | None]:
        """Schedule, ingest and reschedule until every job has closed; their reasons."""
        shown = time.monotonic()
        pending = "0"  # first the entries delivered to a coordinator before, unacknowledged
        while not all(job["closed"] for job in self.state["jobs"].values()):
            pending = self._ingest(pending)[0]
            for name, job in self.state["jobs"].items():
                if not job["closed"] and (job["job"] is None or not self.redis.exists(self._lease(job))):
                    self._schedule(name, job)
            if on_progress and time.monotonic() - shown >= PROGRESS_INTERVAL:
                shown = time.monotonic()
                on_progress(self._progress())
        return [job["closed"] for job in self.state["jobs"].values()]

    def close(self, reasons: list[str | None]) -> None:
        """Close the run in the archive, then forget it in Redis."""
        if not self.writer.fatal:
            reason = next((r for r in reasons if r != "finished"), "finished")
            self.writer.run(finish_run, self.state["run"], status=run_status(reason or "shutdown"),
                            seconds=time.time() - self.state["started"])
        self.writer.close()
        names = [f"{self.key}:{suffix}" for suffix in ("run", "results", "progress")]
        names += [f"{self.key}:plan:{job['job']}" for job in self.state["jobs"].values()]
        self.redis.delete(*names)

    # -- jobs -----------------------------------------------------------------------------

    def _lease(self, job: dict[str, Any]) -> str:
        return f"{self.key}:lease:{job['host']}"

    def _schedule(self, name: str, job: dict[str, Any]) -> None:
        """A new attempt of the job, from a plan of what the archive holds now, on a node that answers."""
        while self._ingest(">", block=False)[1]:
            pass  # every entry already sent: a job that closed is not scheduled again
        if job["closed"]:
            return
        nodes = self._free_nodes(job)
        if not nodes:
            return  # every node runs its share: the job waits here, not in a node's queue, leaseless
        job["attempt"] += 1
        job["job"] = f"{self.state['run']}-{name}-{job['attempt']}"
        db = open_archive(self.db_path)
        try:
            plan = export_plan(db, job["sources"], self.state["run"])
        finally:
            db.close()
        self.redis.set(f"{self.key}:plan:{job['job']}", plan, ex=7 * 86400)
        self.redis.set(self._lease(job), job["job"], px=int((self.config.lease + self.config.start) * 1000))
        self._save_state()
        start = (int(name) + job["attempt"]) % len(nodes)
        for node in nodes[start:] + nodes[:start]:
            try:
                self._post(node, job)
                job["node"] = node
                self._save_state()
                return
            except (OSError, ValueError):
                self.down.add(node)
        if self.down >= set(self.config.nodes):
            raise ClusterUnavailable("no Scrapyd node can be reached: " + ", ".join(self.config.nodes))
        self.redis.delete(self._lease(job))  # on no node: scheduled again when one is free

    def _free_nodes(self, job: dict[str, Any]) -> list[str]:
        """The nodes that answer and run fewer than ``jobs_per_node`` of this run's live jobs."""
        live = [j["node"] for j in self.state["jobs"].values() if j is not job and j["job"] and not j["closed"]
                and j.get("node") and self.redis.exists(self._lease(j))]
        reachable = [n for n in self.config.nodes if n not in self.down] or self.config.nodes
        return [n for n in reachable if live.count(n) < self.config.jobs_per_node]

    def _post(self, node: str, job: dict[str, Any]) -> None:
        settings = {**self.settings, "ARCHIVE_RUN_ID": str(self.state["run"]), "ARCHIVE_CLUSTER_KEY": self.key,
                    "ARCHIVE_CLUSTER_JOB": job["job"], "ARCHIVE_CLUSTER_HOST": job["host"],
                    "ARCHIVE_CLUSTER_LEASE": str(self.config.lease)}
        data = [("project", self.config.project), ("spider", "blog"), ("jobid", job["job"]),
                ("sources", ",".join(map(str, job["sources"]))), *self.spider_args.items(),
                *(("setting", f"{k}={v}") for k, v in settings.items())]
        request = urllib.request.Request(node.rstrip("/") + "/schedule.json", urllib.parse.urlencode(data).encode())
        with urllib.request.urlopen(request, timeout=10) as response:
            answer = json.load(response)
        if answer.get("status") != "ok":
            raise ValueError(f"{node} refused the job: {answer.get('message')}")

    def _save_state(self) -> None:
        self.redis.set(f"{self.key}:run", json.dumps(self.state))

    def _progress(self) -> dict[str, int]:
        return sum_counts(json.loads(v) for v in self.redis.hvals(f"{self.key}:progress"))

    # -- the result stream ----------------------------------------------------------------

    def _ingest(self, start: str, *, block: bool = True) -> tuple[str, int]:
        """Make the writes of the entries from ``start`` (``0``: those not acknowledged; ``>``: new ones).

        Returns:
            Where to read from next, and how many entries were read.
        """
        entries: Any = self.redis.xreadgroup(GROUP, "coordinator", {self.stream: start}, count=500,
                                             block=500 if block and start == ">" else None)
        batch: list[tuple[bytes, dict[bytes, bytes]]] = entries[0][1] if entries else []
        done = self._done()
        holders = {job["job"]: job for job in self.state["jobs"].values()}
        for entry_id, fields in batch:
            if _id(entry_id) > done and fields[b"job"].decode() in holders:
                self._apply(holders[fields[b"job"].decode()], fields)
                self.writer.run(save_ingested, self.stream, entry_id.decode())
            self.acks.append(entry_id)
        self.writer.commit()
        self._ack()
        if start == "0" and batch:
            return "0", len(batch)  # more delivered before, perhaps
        return ">", len(batch)

    def _apply(self, job: dict[str, Any], fields: dict[bytes, bytes]) -> None:
        if b"closed" in fields:
            job["closed"] = fields[b"closed"].decode()
            self._save_state()
            return
        fn, args, kwargs = _Calls(fields[b"call"]).load()
        try:
            self.writer.run(fn, *args, **kwargs)
        except ValueError:
            pass  # the job's own plan refused it too, and recorded why

    def _done(self) -> tuple[int, int]:
        row = self.writer.run(lambda db: db.execute(
            "select last_id from cluster_ingest where stream = ?", [self.stream]).fetchone())
        return _id(row[0]) if row else (0, 0)

    def _ack(self) -> None:
        if self.acks:
            self.redis.xack(self.stream, GROUP, *self.acks)
            self.acks = []


def save_ingested(db: Any, stream: str, entry_id: str) -> None:
    """Record the last entry of ``stream`` whose writes are made (in their transaction)."""
    db["cluster_ingest"].upsert({"stream": stream, "last_id": entry_id}, pk="stream")


def _id(entry_id: bytes | str) -> tuple[int, int]:
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


class _Calls(pickle.Unpickler):
    """Unpickles a write: a function of this package and plain values, nothing else."""

    def __init__(self, data: bytes):
        super().__init__(io.BytesIO(data))

    def find_class(self, module: str, name: str) -> Any:
        if module.startswith("archive.") and "." not in name:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"not an archive write: {module}.{name}")


