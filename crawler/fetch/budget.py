"""The crawl's memory budget (``ARCHIVE_MEMORY_MB``): big pages go through a few lanes.

A page of a few hundred kB costs little, however many are in flight. A big one is
held many times over on its way: its download, its decompressed body, its text,
the copy sent to an extraction worker and the tree the worker builds from it, the
post that comes back (text and Markdown) and its write (the row and its index
entries). Twenty such pages at once took the crawl's processes past 1.5 GB.

So a page needs a *lane* once it is known to be big (over ``BIG_PAGE_BYTES`` once
decompressed): at its headers (its length; a compressed one in an encoding that cannot be
measured counted ``COMPRESSION`` times over), as its bytes arrive (a gzip, deflate, br or
zstd body by what they decompress to, measured a chunk at a time and dropped:
``crawler.fetch.middlewares.DecompressedSize``), or once its decompressed size is known, before
it is decompressed. A compressed body that passes the size cap (``DOWNLOAD_MAXSIZE``) once
decompressed, a bomb, is refused as its first bytes show it (``too-large``): it never waits for
a lane, nor is fetched again. It
holds the lane until its callback is done (its extraction included: the spider
middleware ``ReleaseLanes``), or, for a page that reaches no callback, until its
request is let go. A lane is free only while the
archive's writer holds less than a big page's worth of writes, so a big page's
capture and post are written before the next big page comes in.

A page found big when every lane is taken is read no further: its download is
stopped, or its body dropped before its decompression, and it is scheduled again to wait for a
lane before it is fetched (one more request, for its headers). Nothing is dropped.

Lanes: what ``ARCHIVE_MEMORY_MB`` holds beside the processes at rest (the crawl's and
its extraction workers), a page of the size cap (``DOWNLOAD_MAXSIZE``) being held about
ten times at once across them (``crawler.memory.lanes``), one at least. The 512 MB
default gives one lane. Once a browser starts (``crawler.fetch.render``), its processes take their
``BROWSER_MB`` of the budget, and the lanes are what is left.
"""

import asyncio
import gc
import logging
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import StopDownload
from scrapy.http import Headers, Response

from crawler.extract.pool import ExtractionPool, workers_of
from crawler.fetch.middlewares import (
    DECOMPRESSED,
    ENCODINGS,
    METER,
    DecompressedSize,
    TooLarge,
    last_encoding,
)
from crawler.fetch.render import BROWSER_STARTED
from crawler.memory import BIG_PAGE_BYTES, BROWSER_MB, lanes, trim
from crawler.store.archive_store import ArchiveStore

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

COMPRESSION = 8  # what a compressed page is taken to grow to, until it is decompressed
# Seconds a page waits for a lane before what holds one is looked for in reference
# cycles too (a failure's traceback can keep a request alive until the collector runs).
COLLECT_AFTER = 5.0
# Seconds at most an extraction worker's start waits for a big page's lane to be let go, and for its
# writes once they are queued (``MemoryBudget.hold``): the writer always finishes them, but on a busy
# machine a 15 MB post's write takes 2 to 6 s
HOLD_SECONDS = 5.0
WRITE_SECONDS = 60.0

LANE = "archive_lane"  # request.meta: the lane this page holds
BIG = "archive_big"  # request.meta: found big with every lane taken; waits for one
STOPPED = "archive_stopped"  # request.meta: its download was stopped for a lane
OVER_CAP = "archive_over_cap"  # request.meta: its download was stopped, its body past the size cap once decompressed


class _Lane:
    """Held in a request's meta: ``release()`` frees its lane, at the latest when it is let go."""

    __slots__ = ("__weakref__", "release")
    release: weakref.finalize


class MemoryBudget:
    """Downloader middleware, and receiver of the download signals: the lanes of big pages."""

    def __init__(self, crawler: "Crawler", memory_mb: int, workers: int):
        self.memory_mb, self.workers = memory_mb, workers
        self.lanes = lanes(memory_mb, workers, crawler.settings.getint("DOWNLOAD_MAXSIZE") / 2**20)
        self.max_size = crawler.settings.getint("DOWNLOAD_MAXSIZE")
        self.taken = 0
        self.store = ArchiveStore.of(crawler)
        self.stats = crawler.stats
        # bytes in so far, each counted ``weight`` times (COMPRESSION when compressed): (weight, count)
        self.received: weakref.WeakKeyDictionary[Request, tuple[int, int]] = weakref.WeakKeyDictionary()
        self.waiting: deque[tuple[asyncio.Future[None], Request]] = deque()
        self.held: deque[tuple[Callable[[], None], int, float]] = deque()  # (start, releases then, since)
        self.releases = 0
        self.loop: asyncio.AbstractEventLoop | None = None
        self._poll: asyncio.TimerHandle | None = None
        self._collected = 0.0

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "MemoryBudget":
        settings = crawler.settings
        memory_mb, workers = settings.getint("ARCHIVE_MEMORY_MB"), workers_of(settings)
        budget = cls(crawler, memory_mb, workers)
        logger.info("memory budget: %d MB, %d extraction workers, %d lanes for big pages", memory_mb, workers,
                    budget.lanes)
        pool = crawler.get_extension(ExtractionPool)
        if pool is not None:
            pool.hold_start = budget.hold
        crawler.signals.connect(budget.headers_received, signal=signals.headers_received)
        crawler.signals.connect(budget.bytes_received, signal=signals.bytes_received)
        crawler.signals.connect(budget.browser_started, signal=BROWSER_STARTED)
        return budget

    def browser_started(self) -> None:
        """A browser's processes take their share of the budget: the lanes are what is left of it."""
        self.lanes = lanes(self.memory_mb - BROWSER_MB, self.workers, self.max_size / 2**20)
        logger.info("memory budget: a browser started, about %d MB; %d lanes for big pages", BROWSER_MB, self.lanes)

    # -- a page found big ---------------------------------------------------------------

    def headers_received(self, headers: Headers, body_length: Any, request: Request, spider: Any) -> None:
        encoding = last_encoding(headers)
        if encoding in ENCODINGS:
            # measured as its bytes come, before any lane is asked for: a bomb is refused from its
            # first bytes, whatever its length, and a big page known from what they decompress to
            request.meta[METER] = DecompressedSize(encoding, request.meta.get("download_maxsize", self.max_size))
        else:
            request.meta.pop(METER, None)  # an earlier answer's, kept by a redirect or a retry
        if LANE in request.meta:
            return
        weight = COMPRESSION if _compressed(headers) else 1
        if encoding not in ENCODINGS and isinstance(body_length, int) and body_length * weight > BIG_PAGE_BYTES:
            self._need_lane(request)  # (a length not given is judged by the bytes)
        self.received[request] = (weight, 0)

    def bytes_received(self, data: bytes, request: Request, spider: Any) -> None:
        meter: DecompressedSize | None = request.meta.get(METER)
        if meter is not None:
            meter.feed(data)
            if meter.over:
                request.meta[OVER_CAP] = True
                raise StopDownload(fail=True)
        if LANE in request.meta:
            return
        weight, got = self.received.get(request, (1, 0))
        got += len(data) if meter else weight * len(data)
        self.received[request] = (weight, got)
        if max(got, meter.size if meter else 0) > BIG_PAGE_BYTES:
            self._need_lane(request)

    def process_response(self, request: Request, response: Response) -> Request | Response:
        """Before decompression: a body over ``BIG_PAGE_BYTES`` once decompressed (its size measured
        by ``TruncatedBodyMiddleware``) holds a lane, or is fetched again later, never decompressed."""
        size = request.meta.pop(DECOMPRESSED, len(response.body))
        if size <= BIG_PAGE_BYTES or LANE in request.meta or self._take(request):
            return response
        return self._later(request)

    def process_exception(self, request: Request, exception: Exception) -> Request | None:
        if isinstance(exception, StopDownload) and request.meta.pop(OVER_CAP, False):
            meter = request.meta.pop(METER)
            raise TooLarge(f"the {meter.encoding} body decompresses to more than the size cap (download_maxsize) of "
                           f"{round(meter.max_size / 2**20, 2):g} MB (known from its first {meter.fed:,} bytes): not archived")
        if isinstance(exception, StopDownload) and request.meta.get(STOPPED):
            return self._later(request)
        return None

    def _need_lane(self, request: Request) -> None:
        if not self._take(request):
            request.meta[STOPPED] = True  # here, not by another handler
            raise StopDownload(fail=True)

    def _later(self, request: Request) -> Request:
        self.stats.inc_value("memory/big_page_waits")
        meta = {k: v for k, v in request.meta.items() if k not in (LANE, STOPPED, METER)}
        return request.replace(meta={**meta, BIG: True}, dont_filter=True)

    # -- lanes ----------------------------------------------------------------------------

    async def process_request(self, request: Request) -> None:
        if not request.meta.get(BIG) or LANE in request.meta:
            return
        if self.waiting or not self._take(request):
            future = asyncio.get_running_loop().create_future()
            self.waiting.append((future, request))
            self._check()
            await future

    def _take(self, request: Request) -> bool:
        if self.taken >= self.lanes or self.store.backlog_bytes() > BIG_PAGE_BYTES:
            return False
        self.loop = self.loop or asyncio.get_running_loop()
        trim()  # what the last big page's writes let go, before this one comes in
        self.taken += 1
        lane = request.meta[LANE] = _Lane()
        lane.release = weakref.finalize(lane, self.loop.call_soon_threadsafe, self._release)
        self.stats.inc_value("memory/big_pages")
        self.stats.max_value("memory/big_pages_at_once", self.taken)
        return True

    def _release(self) -> None:
        self.taken -= 1
        self.releases += 1
        trim()
        self._check()

    def hold(self, start: Callable[[], None]) -> None:
        """Call ``start`` (a fresh extraction worker, for the one that extracted a big page) once the
        page is done: a lane was let go since (the page's own, once its post is on its way to the
        writer; or none is taken), ``HOLD_SECONDS`` at most, and then the writer holds less than a
        big page, ``WRITE_SECONDS`` at most. Its post's write takes about 125 MB in this process, a
        fresh worker 130: never both at once (``memory/starts_during_writes`` counts the starts that
        could not wait)."""
        self.held.append((start, self.releases, time.monotonic()))
        self._check()

    def _written(self, releases: int, since: float) -> bool:
        waited = time.monotonic() - since
        if not (self.releases > releases or not self.taken or waited > HOLD_SECONDS):
            return False
        if self.store.backlog_bytes() <= BIG_PAGE_BYTES:
            return True
        if waited > WRITE_SECONDS:
            self.stats.inc_value("memory/starts_during_writes")
            return True
        return False

    def _check(self) -> None:
        """Let the pages that wait take the lanes that are free, in turn, and the held workers start;
        look again soon while some wait."""
        while self.held and self._written(*self.held[0][1:]):
            self.held.popleft()[0]()
        while self.waiting and self._take(self.waiting[0][1]):
            future, _ = self.waiting.popleft()
            if not future.done():
                future.set_result(None)
        if (self.waiting or self.held) and self._poll is None:
            if self.waiting and self.taken >= self.lanes and time.monotonic() - self._collected > COLLECT_AFTER:
                self._collected = time.monotonic()
                gc.collect()
            self._poll = asyncio.get_running_loop().call_later(0.1, self._polled)

    def _polled(self) -> None:
        self._poll = None
        self._check()


def _compressed(headers: Headers) -> bool:
    return (headers.get(b"Content-Encoding") or b"identity").strip().lower() != b"identity"


class ReleaseLanes:
    """Spider middleware: a page's lane is free once its callback is done."""

    async def process_spider_output(self, response: Response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        try:
            async for output in result:
                yield output
        finally:
            request = getattr(response, "request", None)
            lane = request.meta.get(LANE) if request is not None else None
            if lane is not None:
                lane.release()
