"""The watchdog: a crawl that makes no progress ends all the same (issue 46, docs/reliability.md).

Every wait of a crawl is bounded on its own (a download's ``DOWNLOAD_TIMEOUT``, a rendered page's
``ARCHIVE_RENDER_TIMEOUT``, a host's Retry-After up to ``ARCHIVE_RETRY_AFTER_MAX``, an extraction's
time limit), but a fault nobody foresaw can still leave a crawl waiting for ever, and a crawl that
never ends holds the archive's lock: every later run of a schedule exits 75. ``Watchdog`` reads
the crawl's counters every few seconds; when none has moved for ``ARCHIVE_STALL_SECONDS`` while
work is pending, the crawl has stalled:

1. every request in the downloader (being fetched or rendered, or waiting for its host's turn) is
   given up with ``Stalled``, which the spider records as an error of kind ``stalled``; the crawl
   goes on with the rest;
2. if it stalls again, the spider is closed, its pages already fetched extracted and saved.

Either way the run ends as ``stalled`` and ``blogarchive crawl`` exits 1 with a line that names the
stall. Should even the close not finish, the reactor is stopped after one more period.
"""

import asyncio
import logging
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from scrapy import signals
from twisted.internet import task
from twisted.python.failure import Failure

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)
T = TypeVar("T")
# the counters that move whenever a crawl does anything: a page or an error back, an item out, a request made
PROGRESS = ("downloader/response_count", "downloader/exception_count", "item_scraped_count", "item_dropped_count",
            "scheduler/enqueued", "extract/count")
REASON = "stalled"  # the spider's close reason and the run's status
_watchdogs: "dict[Crawler, Watchdog]" = {}


class Stalled(Exception):
    """A request given up: the crawl had made no progress for the watchdog's time."""


class Watchdog:
    def __init__(self, crawler: "Crawler", seconds: float):
        self.crawler = crawler
        self.seconds = seconds
        self.inflight: dict[Request, asyncio.Future[Any]] = {}  # requests in the download handler
        self.given_up: dict[Request, str] = {}
        self.stalls = 0
        self.closing = False
        self.last: tuple[int, ...] = ()
        self.moved = time.monotonic()
        self.loop: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "Watchdog":
        watchdog = cls(crawler, crawler.settings.getfloat("ARCHIVE_STALL_SECONDS"))
        _watchdogs[crawler] = watchdog
        crawler.signals.connect(watchdog.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(watchdog.spider_closed, signal=signals.spider_closed)
        return watchdog

    @classmethod
    def of(cls, crawler: "Crawler") -> "Watchdog | None":
        """The crawl's watchdog (None where the extension is off)."""
        return _watchdogs.get(crawler)

    def spider_opened(self) -> None:
        if self.seconds > 0:
            self.moved = time.monotonic()
            self.loop = task.LoopingCall(self.check)
            self.loop.start(min(5.0, self.seconds / 4), now=False)

    def spider_closed(self) -> None:
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        _watchdogs.pop(self.crawler, None)

    async def watch(self, request: "Request", download: Awaitable[T]) -> T:
        """Await a download that the watchdog can give up (``Stalled``)."""
        future = asyncio.ensure_future(download)
        self.inflight[request] = future
        try:
            return await future
        except asyncio.CancelledError:
            if request in self.given_up:
                raise Stalled(self.given_up.pop(request)) from None
            raise
        finally:
            self.inflight.pop(request, None)

    def check(self) -> None:
        stats = self.crawler.stats
        now = time.monotonic()
        counts = tuple(int(stats.get_value(key, 0)) for key in PROGRESS)
        if counts != self.last or not self._pending():
            self.last, self.moved = counts, now
            return
        if now - self.moved < self.seconds:
            return
        self.moved = now  # the next stage waits a whole period again
        self.stalls += 1
        stats.set_value("stall/count", self.stalls)
        if self.stalls == 1:
            given = self.give_up(f"no answer, and no progress of the crawl for {self.seconds:g} s: given up")
            logger.error("the crawl stalled: no progress for %g s; %d requests in flight given up, the rest goes on",
                         self.seconds, given)
            if given:
                return
        if not self.closing:
            self.closing = True
            given = self.give_up(f"the crawl stalled again for {self.seconds:g} s: given up, the crawl stopped")
            logger.error("the crawl stalled again: %d requests given up, the crawl stops", given)
            if self.crawler.engine is not None:
                asyncio.ensure_future(self.crawler.engine.close_spider_async(reason=REASON))
            return
        from twisted.internet import reactor  # the one Scrapy installed

        logger.error("the crawl did not close within %g s of its stall: stopped", self.seconds)
        reactor.stop()  # type: ignore[attr-defined]

    def give_up(self, why: str) -> int:
        """Fail every request in the downloader with ``Stalled``: the number given up."""
        engine = self.crawler.engine
        given = 0
        for slot in list(engine.downloader.slots.values()) if engine else []:
            while slot.queue:  # waiting for the host's turn
                request, waiting = slot.queue.popleft()
                waiting.errback(Failure(Stalled(why)))
                given += 1
        for request, future in list(self.inflight.items()):  # being fetched or rendered
            if not future.done():
                self.given_up[request] = why
                future.cancel()
                given += 1
        self.crawler.stats.inc_value("stall/given_up", given)
        return given

    def _pending(self) -> bool:
        """Whether the crawl has work left: requests to send or in flight, responses being handled."""
        engine = self.crawler.engine
        if engine is None or engine.scheduler is None:
            return False
        scraper = engine.scraper.slot
        return bool(engine.downloader.active or engine.scheduler.has_pending_requests()
                    or (scraper is not None and scraper.active))
