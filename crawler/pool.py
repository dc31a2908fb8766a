"""Extraction in worker processes, off the reactor: a pool sized to the cores.

``ExtractionPool`` (an extension) starts ``ARCHIVE_EXTRACT_WORKERS`` processes
(forkserver) for the first page to extract and stops them when the spider closes. The spider
awaits ``extract()``; each idle worker takes the next waiting page, and the
results come back, as plain dicts, in order of completion. ``ExtractionGate``
(a downloader middleware) holds new requests while ``ARCHIVE_EXTRACT_QUEUE``
pages wait for a worker, so the pages in flight stay bounded.

A page gets ``ARCHIVE_EXTRACT_TIMEOUT`` seconds: SIGALRM stops it inside the
worker, and a worker that does not answer even then (stuck in C code) is
killed and replaced. The workers run ``crawler.worker``, which imports neither Scrapy nor
Twisted, and each is replaced by a fresh one after ``ARCHIVE_EXTRACT_RECYCLE_PAGES`` pages or
once it holds more than ``ARCHIVE_EXTRACT_RECYCLE_MB``. Workers end with the crawl: they stop at the end of their
pipe, and on Linux the kernel kills them when their parent, the forkserver,
goes (it goes when the crawl's process does, however that one ends).
"""

import asyncio
import json
import logging
import multiprocessing
import os
from collections import Counter, deque
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from .items import BlogPost
from .worker import work

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

STOP_SECONDS = 5.0  # a worker asked to stop is killed after this long


class ExtractionFailed(Exception):
    """A page could not be extracted: it took too long, or its worker failed."""


# -- the crawl's side --------------------------------------------------------------------


@dataclass
class _Task:
    url: str
    html: str
    options: dict[str, Any]
    future: "asyncio.Future[tuple[str, Any]]"


@dataclass
class _Worker:
    process: "BaseProcess"
    conn: Connection
    task: _Task | None = None
    deadline: asyncio.TimerHandle | None = None
    pages: int = 0  # pages it answered


def resident_mb(pid: int | None) -> float:
    """A process's resident memory in MB (0 where /proc does not tell)."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


class ExtractionPool:
    """Worker processes that run ``extract_post``; inline in this process when ``workers`` is 0."""

    def __init__(self, *, workers: int, timeout: float, queue: int, stats: "StatsCollector | None" = None,
                 recycle_pages: int = 1000, recycle_mb: float = 250):
        if workers < 0 or timeout <= 0 or queue < 1 or recycle_pages < 1 or recycle_mb <= 0:
            raise ValueError("workers >= 0, timeout > 0, queue >= 1 and recycling after >= 1 page and > 0 MB, please")
        self.workers = workers
        self.timeout = timeout
        self.queue_limit = queue
        self.recycle_pages = recycle_pages
        self.recycle_mb = recycle_mb
        self.stats = stats
        self.waiting: deque[_Task] = deque()
        self.running: list[_Worker] = []
        self.idle: list[_Worker] = []
        self.room = asyncio.Event()
        self.room.set()
        self.closed = False
        self.deaths = 0  # workers that died in a row, without an answer between
        self.broken = ""  # why no worker is left, when they keep dying
        self.in_flight_max = 0
        self.counts: Counter[str] = Counter()  # timeout, error, failed, workers_replaced, workers_recycled, gate_waits
        self.loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "ExtractionPool":
        settings = crawler.settings
        pool = cls(
            workers=settings.getint("ARCHIVE_EXTRACT_WORKERS"),
            timeout=settings.getfloat("ARCHIVE_EXTRACT_TIMEOUT"),
            queue=settings.getint("ARCHIVE_EXTRACT_QUEUE"),
            stats=crawler.stats,
            recycle_pages=settings.getint("ARCHIVE_EXTRACT_RECYCLE_PAGES"),
            recycle_mb=settings.getfloat("ARCHIVE_EXTRACT_RECYCLE_MB"),
        )
        crawler.signals.connect(pool.close, signal=signals.spider_closed)
        return pool

    @property
    def in_flight(self) -> int:
        """Pages handed to the pool and not finished: waiting, or in a worker."""
        return len(self.waiting) + len(self.running)

    def start(self) -> None:
        """Start the workers (the first ``extract`` does, so a crawl with nothing to extract starts none)."""
        self.loop = asyncio.get_running_loop()
        if self.workers:
            ctx = multiprocessing.get_context("forkserver")
            # imported once, in the forkserver: the worker's code and what extraction loads (no Scrapy, no Twisted)
            ctx.set_forkserver_preload(["crawler.worker", "crawler.warmup"])
            for _ in range(self.workers):
                self._spawn(ctx)
            logger.info("extraction: %d worker processes, pids %s", self.workers,
                        ", ".join(str(w.process.pid) for w in self.idle))

    def _spawn(self, ctx: Any) -> None:
        assert self.loop is not None
        conn, child = ctx.Pipe()
        process = ctx.Process(target=work, args=(child, self.timeout), name="blogarchive-extract", daemon=True)
        process.start()
        child.close()
        worker = _Worker(process, conn)
        self.loop.add_reader(conn.fileno(), self._on_answer, worker)
        self.idle.append(worker)

    async def extract(self, url: str, html: str, **options: Any) -> BlogPost | None:
        """``extract_post(url, html, **options)`` in a worker.

        Raises:
            ExtractionFailed: the page took longer than the time limit, or its worker failed.
        """
        if not self.workers:
            return self._inline(url, html, options)
        if self.closed or self.broken:
            raise ExtractionFailed(self.broken or "the crawl is closing: not extracted")
        if self.loop is None:
            self.start()
        assert self.loop is not None
        task = _Task(url, html, options, self.loop.create_future())
        self.waiting.append(task)
        self.in_flight_max = max(self.in_flight_max, self.in_flight)
        self._dispatch()
        status, value = await task.future
        if status == "ok":
            return BlogPost(**value) if value else None
        self._inc(f"extract/{status}")
        if status == "timeout":
            raise ExtractionFailed(value or f"extraction took longer than {self.timeout:g} s: stopped")
        if status == "error":
            logger.error("extraction failed: %s\n%s", url, value)
            value = f"extraction failed: {value.strip().splitlines()[-1]}"
        raise ExtractionFailed(value)

    def _inline(self, url: str, html: str, options: dict[str, Any]) -> BlogPost | None:
        from .extract import extract_post  # slow to import (trafilatura): only when a page is extracted

        self.in_flight_max = 1
        try:
            return extract_post(url, html, **options)
        except Exception as e:
            logger.exception("extraction failed: %s", url)
            self._inc("extract/error")
            raise ExtractionFailed(f"extraction failed: {type(e).__name__}: {e}") from e

    async def wait_for_room(self) -> None:
        """Return when fewer than ``queue`` pages wait for a worker (at once when closed or inline)."""
        if self.workers and not self.room.is_set():
            self._inc("extract/gate_waits")
            await self.room.wait()

    def _dispatch(self) -> None:
        assert self.loop is not None
        while self.waiting and self.idle:
            worker = self.idle.pop()
            task = worker.task = self.waiting.popleft()
            self.running.append(worker)
            worker.deadline = self.loop.call_later(1.5 * self.timeout + 1, self._on_stuck, worker)
            worker.conn.send((task.url, task.html, task.options))
        if self.closed or len(self.waiting) < self.queue_limit:
            self.room.set()
        else:
            self.room.clear()

    def _on_answer(self, worker: _Worker) -> None:
        try:
            answer = worker.conn.recv()
        except (EOFError, OSError):
            worker.process.join(STOP_SECONDS)
            message = f"the extraction worker (pid {worker.process.pid}) died, exit code {worker.process.exitcode}"
            self.deaths += 1
            if self.deaths > 2 * self.workers + 2:
                self.broken = f"the extraction workers keep dying (the last: {message}): no extraction"
            self._replace(worker, ("failed", message))
            return
        self.deaths = 0
        self._finish(worker, answer)
        worker.pages += 1
        if worker.pages >= self.recycle_pages or resident_mb(worker.process.pid) > self.recycle_mb:
            self._stop(worker, kill=False)  # a fresh worker instead: what a huge page grew is given back
            self._inc("extract/workers_recycled")
            if not self.closed:
                self._spawn(multiprocessing.get_context("forkserver"))
        else:
            self.idle.append(worker)
        self._dispatch()

    def _on_stuck(self, worker: _Worker) -> None:
        worker.deadline = None
        message = f"extraction took longer than {self.timeout:g} s and its worker did not stop: killed"
        self._replace(worker, ("timeout", message))

    def _finish(self, worker: _Worker, answer: tuple[str, Any]) -> None:
        task, worker.task = worker.task, None
        if worker.deadline:
            worker.deadline.cancel()
            worker.deadline = None
        self.running.remove(worker)
        if task and not task.future.done():
            task.future.set_result(answer)

    def _replace(self, worker: _Worker, answer: tuple[str, str]) -> None:
        """Kill ``worker``, give its page ``answer`` (status, message) and start another in its place."""
        logger.error("%s%s", answer[1], f": {worker.task.url}" if worker.task else "")
        self._stop(worker, kill=True)
        if worker in self.running:
            self._finish(worker, answer)
        if worker in self.idle:
            self.idle.remove(worker)
        if self.broken:
            logger.error(self.broken)
            self._fail_waiting(self.broken)
        elif not self.closed:
            self._inc("extract/workers_replaced")
            self._spawn(multiprocessing.get_context("forkserver"))
            self._dispatch()

    def _stop(self, worker: _Worker, *, kill: bool) -> None:
        assert self.loop is not None
        self.loop.remove_reader(worker.conn.fileno())
        if kill:
            worker.process.kill()
        else:
            try:
                worker.conn.send(None)
            except OSError:
                pass
        worker.conn.close()
        worker.process.join(STOP_SECONDS)
        if worker.process.exitcode is None:
            worker.process.kill()
            worker.process.join()

    def close(self) -> None:
        """Stop every worker; pages still in flight fail (the crawl is over)."""
        self.closed = True
        self.room.set()
        for worker in [*self.idle, *self.running]:
            self._stop(worker, kill=worker.task is not None)
            if worker.task:
                self._finish(worker, ("failed", "the crawl closed before the page was extracted"))
        self._fail_waiting("the crawl closed before the page was extracted")
        self.idle.clear()
        if self.stats:
            self.stats.set_value("extract/in_flight_max", self.in_flight_max)
        summary = {"workers": self.workers, "queue_limit": self.queue_limit, "in_flight_max": self.in_flight_max,
                   **self.counts}
        logger.info("extraction pool closed: %s", json.dumps(summary))

    def _fail_waiting(self, message: str) -> None:
        for task in self.waiting:
            task.future.set_result(("failed", message))
        self.waiting.clear()
        self.room.set()

    def _inc(self, key: str) -> None:
        self.counts[key.split("/")[-1]] += 1
        if self.stats:
            self.stats.inc_value(key)


class ExtractionGate:
    """Downloader middleware: a request waits while ``ARCHIVE_EXTRACT_QUEUE`` pages wait for a worker."""

    def __init__(self, pool: ExtractionPool):
        self.pool = pool

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "ExtractionGate":
        pool = crawler.get_extension(ExtractionPool)
        if pool is None or not pool.workers:
            raise NotConfigured("no extraction workers")
        return cls(pool)

    async def process_request(self, request: Any) -> None:
        await self.pool.wait_for_room()
