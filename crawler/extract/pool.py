"""Extraction in worker processes, off the reactor: a pool of one worker fewer than the cores,
and no more than the memory budget holds.

``ExtractionPool`` (an extension) starts ``ARCHIVE_EXTRACT_WORKERS`` processes (``workers_of``)
for the first page to extract and stops them when the spider closes. The spider
awaits ``extract_page()`` of a page it judged a post (``crawler.extract.post_page.PostPage``)
and gets the finished post; each idle worker takes the next waiting page (a busy one holds the
next in its socket, to start it as soon as it has answered), and the
results come back, as plain dicts, in order of completion. ``ExtractionGate``
(a downloader middleware) holds new requests while ``ARCHIVE_EXTRACT_QUEUE``
pages wait for a worker, so the pages in flight stay bounded.

A page gets ``ARCHIVE_EXTRACT_TIMEOUT`` seconds: SIGALRM stops it inside the
worker, and a worker that does not answer even then (stuck in C code) is
killed and replaced. Each worker is a fresh interpreter running ``crawler.extract.worker``,
which imports neither Scrapy nor Twisted and takes pages once it is warm, and each is
replaced by a fresh one after ``ARCHIVE_EXTRACT_RECYCLE_PAGES`` pages, once it holds
more than ``ARCHIVE_EXTRACT_RECYCLE_MB``, or after a big page (``BIG_PAGE_BYTES``): what
its parse grew is given back at once, not kept beside the next page. Workers end with the crawl: they stop at the end
of their socket, and on Linux the kernel kills them when their parent, the crawl's
process, goes, however it ends.
"""

import asyncio
import json
import logging
import os
import pickle
import subprocess
import sys
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, Pipe
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings

from crawler.extract.post_page import PostPage
from crawler.extract.worker import READY
from crawler.items import BlogPost
from crawler.judge.encoding import page_text
from crawler.memory import BIG_PAGE_BYTES, extract_workers

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

STOP_SECONDS = 5.0  # a worker asked to stop is killed after this long
# Where the worker's ``python -m crawler.extract.worker`` finds this package, wherever the crawl runs from.
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


class ExtractionFailed(Exception):
    """A page could not be extracted: it took too long, or its worker failed."""


# -- the crawl's side --------------------------------------------------------------------


@dataclass
class _Task:
    page: PostPage  # its body in its encoding: decoded in the worker, never here
    future: "asyncio.Future[tuple[str, Any]]"


@dataclass
class _Worker:
    process: subprocess.Popen
    conn: Connection
    task: _Task | None = None
    next: _Task | None = None  # sent while ``task`` runs: the worker starts it once it has answered
    sending: "asyncio.Future[None] | None" = None  # that page's bytes, on their way in another thread
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
        self.starting: list[_Worker] = []  # started, not warm yet
        self.running: list[_Worker] = []
        self.idle: list[_Worker] = []
        self.room = asyncio.Event()
        self.room.set()
        self.closed = False
        self.deaths = 0  # workers that died in a row, without an answer between
        self.broken = ""  # why no worker is left, when they keep dying
        self.in_flight_max = 0
        # given ``start``, calls it once a big page's post is written (``crawler.fetch.budget``): the fresh
        # worker that replaces the one that extracted it is not warming up beside that write
        self.hold_start: Callable[[Callable[[], None]], None] | None = None
        self.counts: Counter[str] = Counter()  # timeout, error, failed, workers_replaced, workers_recycled, gate_waits
        self.loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "ExtractionPool":
        settings = crawler.settings
        pool = cls(
            workers=workers_of(settings),
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
        return len(self.waiting) + len(self.running) + sum(1 for w in self.running if w.next)

    def start(self) -> None:
        """Start the workers (the first ``extract`` does, so a crawl with nothing to extract starts none)."""
        self.loop = asyncio.get_running_loop()
        if self.workers:
            for _ in range(self.workers):
                self._spawn()
            logger.info("extraction: %d worker processes, pids %s", self.workers,
                        ", ".join(str(w.process.pid) for w in self.starting))

    def _spawn(self) -> None:
        """Start a worker; it takes pages once it says it is ready (``_on_answer``)."""
        assert self.loop is not None
        conn, child = Pipe()
        path = os.pathsep.join(p for p in (PACKAGE_ROOT, os.environ.get("PYTHONPATH")) if p)
        process = subprocess.Popen(
            [sys.executable, "-m", "crawler.extract.worker", str(child.fileno()), repr(self.timeout), str(os.getpid())],
            pass_fds=[child.fileno()], stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": path})
        child.close()
        worker = _Worker(process, conn)
        self.loop.add_reader(conn.fileno(), self._on_answer, worker)
        self.starting.append(worker)

    async def extract(self, url: str, page: str | bytes, *, encoding: str = "utf-8", **options: Any) -> BlogPost | None:
        """``extract_post(url, html, **options)`` in a worker, ``html`` being ``page`` as text
        (bytes in ``encoding``): ``extract_page`` of a page given as its parts.

        Raises:
            ExtractionFailed: the page took longer than the time limit, or its worker failed.
        """
        if isinstance(page, str):
            page, encoding = page.encode("utf-8", "surrogatepass"), "utf-8"
        return await self.extract_page(PostPage(url, page, encoding, **options))

    async def extract_page(self, page: PostPage) -> BlogPost | None:
        """The finished post of ``page`` (``crawler.extract.post.extract_post``), made in a worker;
        None when the page holds no article. Its body is decoded there, as Scrapy decodes a
        response's text.

        Raises:
            ExtractionFailed: the page took longer than the time limit, or its worker failed.
        """
        if not self.workers:
            return self._inline(page)
        if self.closed or self.broken:
            raise ExtractionFailed(self.broken or "the crawl is closing: not extracted")
        if self.loop is None:
            self.start()
        assert self.loop is not None
        task = _Task(page, self.loop.create_future())
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
            logger.error("extraction failed: %s\n%s", page.url, value)
            value = f"extraction failed: {value.strip().splitlines()[-1]}"
        raise ExtractionFailed(value)

    def _inline(self, page: PostPage) -> BlogPost | None:
        from crawler.extract.post import extract_page  # slow to import (trafilatura): only when a page is extracted

        self.in_flight_max = 1
        try:
            return extract_page(page, page_text(page.body, page.encoding))
        except Exception as e:
            logger.exception("extraction failed: %s", page.url)
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
            self._started(worker)
            _send(worker.conn, task)
        # a busy worker's next page waits in its socket, so that it never waits for this thread, which
        # reads its answer only when it can; sent from another thread, as it may fill the socket's buffer
        for worker in self.running:
            if not self.waiting:
                break
            if worker.next is None and (worker.sending is None or worker.sending.done()):
                task = worker.next = self.waiting.popleft()
                worker.sending = self.loop.run_in_executor(None, _send, worker.conn, task)
        if self.closed or len(self.waiting) < self.queue_limit:
            self.room.set()
        else:
            self.room.clear()

    def _on_answer(self, worker: _Worker) -> None:
        try:
            data = worker.conn.recv_bytes()
        except (EOFError, OSError):
            message = f"the extraction worker (pid {worker.process.pid}) died, exit code {_exit_code(worker.process)}"
            self.deaths += 1
            if self.deaths > 2 * self.workers + 2:
                self.broken = f"the extraction workers keep dying (the last: {message}): no extraction"
            self._replace(worker, ("failed", message))
            return
        if worker in self.starting:  # its first message: warm
            assert pickle.loads(data) == READY
            self.starting.remove(worker)
            self.idle.append(worker)
            self._dispatch()
            return
        self.deaths = 0
        worker.pages += 1
        big = worker.task is not None and len(worker.task.page.body) > BIG_PAGE_BYTES
        recycled = big or worker.pages >= self.recycle_pages or resident_mb(worker.process.pid) > self.recycle_mb
        if recycled:
            # a fresh worker instead: what a huge page grew is given back, before its post is unpickled here
            self._stop(worker, kill=False)
        self._finish(worker, pickle.loads(data))
        del data
        if recycled:
            self._inc("extract/workers_recycled")
            if big and self.hold_start and not self.closed:
                self._inc("extract/starts_held")
                self.hold_start(self._spawn_held)
            elif not self.closed:
                self._spawn()
        elif worker.next:  # the page that waited in its socket is its page now
            worker.task, worker.next = worker.next, None
            self._started(worker)
        else:
            self.idle.append(worker)
        self._dispatch()

    def _spawn_held(self) -> None:
        if not self.closed:
            self._spawn()

    def _on_stuck(self, worker: _Worker) -> None:
        worker.deadline = None
        message = f"extraction took longer than {self.timeout:g} s and its worker did not stop: killed"
        self._replace(worker, ("timeout", message))

    def _started(self, worker: _Worker) -> None:
        """``worker`` runs its task, with its time limit from now."""
        assert self.loop is not None
        self.running.append(worker)
        worker.deadline = self.loop.call_later(1.5 * self.timeout + 1, self._on_stuck, worker)

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
        logger.error("%s%s", answer[1], f": {worker.task.page.url}" if worker.task else "")
        self._stop(worker, kill=True)
        if worker in self.running:
            self._finish(worker, answer)
        for workers in (self.idle, self.starting):
            if worker in workers:
                workers.remove(worker)
        if self.broken:
            logger.error(self.broken)
            self._fail_waiting(self.broken)
        elif not self.closed:
            self._inc("extract/workers_replaced")
            self._spawn()
            self._dispatch()

    def _stop(self, worker: _Worker, *, kill: bool) -> None:
        assert self.loop is not None
        if worker.next is not None:  # sent, perhaps started, never to be answered: it goes to another worker
            self.waiting.appendleft(worker.next)
            worker.next = None
            kill = True  # a stop sent now could interleave with that page's bytes
        self.loop.remove_reader(worker.conn.fileno())
        if kill:
            worker.process.kill()
        else:
            try:
                worker.conn.send(None)
            except OSError:
                pass
        worker.conn.close()
        if _exit_code(worker.process) is None:
            worker.process.kill()
            worker.process.wait()

    def close(self) -> None:
        """Stop every worker; pages still in flight fail (the crawl is over)."""
        self.closed = True
        self.room.set()
        for worker in [*self.idle, *self.running, *self.starting]:
            # one still warming up would read the stop only once warm
            self._stop(worker, kill=worker.task is not None or worker in self.starting)
            if worker.task:
                self._finish(worker, ("failed", "the crawl closed before the page was extracted"))
        self._fail_waiting("the crawl closed before the page was extracted")
        self.idle.clear()
        self.starting.clear()
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


def workers_of(settings: BaseSettings) -> int:
    """``ARCHIVE_EXTRACT_WORKERS``, or when it is unset as many as the cores and ``ARCHIVE_MEMORY_MB`` allow."""
    workers = settings.get("ARCHIVE_EXTRACT_WORKERS")
    return extract_workers(settings.getint("ARCHIVE_MEMORY_MB")) if workers is None else int(workers)


def _send(conn: Connection, task: _Task) -> None:
    """``task`` down ``conn``: its page without its body, then the body's bytes as they are
    (pickled, a 15 MB page would be copied first)."""
    try:
        conn.send(replace(task.page, body=b""))
        conn.send_bytes(task.page.body)
    except OSError:  # the worker was stopped meanwhile: its page went back to the waiting ones
        pass


def _exit_code(process: subprocess.Popen) -> int | None:
    """``process``'s exit code, once it has exited, waiting up to STOP_SECONDS for it; None if it has not."""
    try:
        return process.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        return None


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
