"""The browser, for the pages that need one (issue 37, docs/rendering.md).

``RenderingDownloadHandler`` is the crawl's HTTP download handler (``LeasedDownloadHandler``) that
sends a request whose meta holds ``RENDER`` to Chromium through scrapy-playwright (the ``render``
extra) instead. Playwright and its browser start with the first such request: a crawl that renders
nothing never starts them, nor imports Playwright. One browser per crawl process, one context with
no profile on disk, no service workers, no downloads and no permissions granted; each page is closed
after use and has ``ARCHIVE_RENDER_TIMEOUT`` seconds to load and fall quiet (no request for half a
second). A request the page makes goes out only to a host the crawl was given (its sources' hosts
and the ``--map-host`` mirrors, as ``crawler.fetch.safety`` trusts them); a script or stylesheet
from another host only when that host is public; anything else is aborted (``render/aborted``).

A page's requests to its blog's host never wait for the host's download slot, which the page itself
holds while they load (that wait stalled every crawl with a delay: issue 46). They draw on the host's
bucket instead: ``ARCHIVE_RENDER_BURST`` requests go at once (a page's own scripts, styles and
Markdown), then one per the host's delay (a script that asks again and again keeps the crawl's
pace). A rendered page teaches AutoThrottle nothing (its time is the browser's, not the host's
latency), and the crawl's next request to the host waits its delay after the page's last one.
A page sent to a mirror by ``--map-host`` is rendered at the mirror's address.

A page that cannot be rendered (no browser, the time limit passed) is answered as HTTP has it: the
answer the spider fetched before it asked for the browser (``HTTP_ANSWER``), or else fetched now;
``RENDER_FAILED`` says why, and the spider records it (an error of kind ``render``).
"""

import asyncio
import logging
import time
from collections import Counter
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy.exceptions import CannotResolveHostError
from scrapy.http import HtmlResponse

from archive.core.urls import host_of

from crawler.fetch.lease import LeasedDownloadHandler
from crawler.fetch.safety import RobotsPolicyMiddleware, host_verdict, trusted_hosts
from crawler.fetch.watchdog import Watchdog
from crawler.memory import BROWSER_MB, rendering_mb
from crawler.meta import HTTP_ANSWER, RENDER, RENDER_FAILED, RENDER_MAY

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)
ASSETS = ("script", "stylesheet")  # what a page may load from a public host that is not the blog's
BROWSER_STARTED = object()  # signal: the crawl's browser started (crawler.fetch.budget gives it its share)
LOCAL_SCHEMES = ("data:", "blob:", "about:")
PACE_STEP = 0.1  # seconds: how soon a request waiting for its turn sees its page closing


class LearnedRendering:
    """A blog's page goes to the browser without asking over HTTP first when its blog says so
    (``SourceState.render_first``: ``render=always``, a hash route, or the blog's pages so far all
    needed the browser). Decided as the request leaves, not when it was made: a listing's links are
    all made at once, before any of them was rendered."""

    def process_request(self, request: "Request") -> None:
        state = request.cb_kwargs.get("state")
        if request.meta.get(RENDER_MAY) and not request.meta.get(RENDER) and state is not None:
            if why := state.render_first(request.url):
                request.meta[RENDER] = why


class RenderFailed(RuntimeError):
    """No browser to render with."""


class RenderingDownloadHandler(LeasedDownloadHandler):
    """The crawl's HTTP handler; a request marked ``RENDER`` goes to the browser instead."""

    def __init__(self, crawler: "Crawler"):
        super().__init__(crawler)
        self.crawler = crawler
        self.timeout = crawler.settings.getfloat("ARCHIVE_RENDER_TIMEOUT")
        self.browser: Any = None  # scrapy-playwright's handler, made by the first page that needs it
        self.starting = asyncio.Lock()
        # the pages the browser renders at once: one waiting for its turn is not yet on the clock
        self.pages = asyncio.Semaphore(crawler.settings.getint("PLAYWRIGHT_MAX_PAGES_PER_CONTEXT"))
        self.verdicts: dict[str, bool] = {}
        self.burst = crawler.settings.getint("ARCHIVE_RENDER_BURST")
        self.buckets: dict[str, Bucket] = {}  # host -> its rendered pages' requests' bucket
        self.closing: set[Any] = set()  # pages being closed: their requests still waiting are aborted
        self.waiting: Counter[Any] = Counter()  # page -> its requests waiting for their turn

    async def download_request(self, request: "Request") -> "Response":
        watchdog = Watchdog.of(self.crawler)
        download = self._download(request)
        return await (watchdog.watch(request, download) if watchdog else download)

    async def _download(self, request: "Request") -> "Response":
        if not request.meta.get(RENDER):
            return await super().download_request(request)
        try:
            return await self._render(request)
        except (Exception, asyncio.TimeoutError) as e:  # the page as HTTP has it, and why it was not rendered
            self.crawler.stats.inc_value("render/failed")
            request.meta[RENDER_FAILED] = f"not rendered: {_first_line(e)}"
            fetched = request.meta.get(HTTP_ANSWER)
            if fetched is None:  # rendered without asking over HTTP first: asked now
                return await super().download_request(request)
            status, headers, body = fetched
            return HtmlResponse(request.url, status=status, headers=headers, body=body, request=request, flags=["cached"])

    async def _render(self, request: "Request") -> "Response":
        browser = await self._browser()
        self.crawler.stats.inc_value("render/pages")
        # the page is closed here, not by scrapy-playwright: its requests still waiting for their turn are
        # aborted first (Chromium would let them all go at once as the page closes)
        request.meta.update(playwright=True, playwright_include_page=True, autothrottle_dont_adjust_delay=True,
                            playwright_page_goto_kwargs={"wait_until": "networkidle", "timeout": self.timeout * 1000})
        async with self.pages:
            try:
                # the navigation has the time limit; the wait beyond it covers a page too busy to hand its DOM over
                return await asyncio.wait_for(browser.download_request(request), self.timeout + 5)
            finally:
                if (page := request.meta.pop("playwright_page", None)) is not None:
                    self.closing.add(page)
                    while self.waiting[page]:
                        await asyncio.sleep(PACE_STEP)
                    await page.close()
                    self.closing.discard(page)
                    del self.waiting[page]
                self._rendered(request)

    async def _browser(self) -> Any:
        async with self.starting:
            if self.browser is None:
                try:
                    from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler
                except ImportError as e:
                    raise RenderFailed("scrapy-playwright is not installed (pip install blogarchive[render])") from e
                if not self.crawler.settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS").get("executable_path"):
                    raise RenderFailed("no Chromium found (install the chromium package, or set BLOGARCHIVE_CHROMIUM)")
                budget, needed = self.crawler.settings.getint("ARCHIVE_MEMORY_MB"), rendering_mb()
                if budget < needed:
                    logger.warning("a page needs a browser, which takes about %d MB beyond the memory budget's %d MB: "
                                   "a crawl that renders wants --memory-mb %d (docs/rendering.md)", BROWSER_MB, budget, needed)
                browser = ScrapyPlaywrightDownloadHandler(self.crawler)
                browser.abort_request = self._refused
                await browser._launch()  # Playwright's driver; the browser itself starts with the first page
                self.crawler.stats.set_value("render/started", 1)
                self.crawler.signals.send_catch_log(BROWSER_STARTED)
                self.browser = browser
            return self.browser

    async def _refused(self, request: Any) -> bool:
        """True for a request of a page that is not to leave the browser (scrapy-playwright aborts it)."""
        url: str = request.url
        if url.startswith(LOCAL_SCHEMES):
            return False
        host = host_of(url) if url.startswith(("http://", "https://")) else ""
        allowed = bool(host) and host in trusted_hosts(self.crawler)
        if allowed and not request.is_navigation_request():  # the page itself was judged and paced as the crawl's
            if self._robots_forbid(url):
                self.crawler.stats.inc_value("render/robots")
                allowed = False
            else:
                allowed = await self._pace(urlsplit(url).hostname or "", request.frame.page)
        if not allowed and host and request.resource_type in ASSETS:
            if host not in self.verdicts:
                try:  # a reason to refuse it is a string; its public address, or None for a public literal
                    self.verdicts[host] = not isinstance(await host_verdict(urlsplit(url).hostname or ""), str)
                except CannotResolveHostError:
                    self.verdicts[host] = False
            allowed = self.verdicts[host]
        if not allowed:
            self.crawler.stats.inc_value("render/aborted")
            logger.debug("a rendered page's request aborted: %s", url)
        return not allowed

    def _robots_forbid(self, url: str) -> bool:
        """Whether the blog's robots.txt, as the crawl read it, forbids a rendered page's request."""
        middlewares = self.crawler.engine.downloader.middleware.middlewares if self.crawler.engine else ()
        robots = next((m for m in middlewares if isinstance(m, RobotsPolicyMiddleware)), None)
        return robots is not None and robots.forbids(url)

    async def _pace(self, hostname: str, page: Any) -> bool:
        """Wait for the host's bucket to give this request its turn (at once while it holds a token).
        False when its page is closed meanwhile: the request is not to be sent."""
        slot = self.crawler.engine.downloader.slots.get(hostname) if self.crawler.engine else None
        if slot is None or not slot.delay:
            return True
        bucket = self.buckets.setdefault(hostname, Bucket(self.burst))
        sent = bucket.take(time.monotonic(), slot.delay)
        if sent <= time.monotonic():
            return True
        self.crawler.stats.inc_value("render/paced")
        self.waiting[page] += 1
        try:
            while time.monotonic() < sent and page not in self.closing:
                await asyncio.sleep(min(PACE_STEP, sent - time.monotonic()))
        finally:
            self.waiting[page] -= 1
        return page not in self.closing

    def _rendered(self, request: "Request") -> None:
        """The crawl's next request to the page's host waits the host's delay after the page's last
        request (Scrapy's slots keep their times on the monotonic clock)."""
        slot_key = request.meta.get("download_slot") or urlsplit(request.url).hostname or ""
        slot = self.crawler.engine.downloader.slots.get(slot_key) if self.crawler.engine else None
        if slot is not None:
            slot.lastseen = max(slot.lastseen, time.monotonic())

    async def close(self) -> None:
        if self.browser is not None:
            await self.browser.close()
        await super().close()


class Bucket:
    """A token bucket: ``size`` requests at once, then one per ``delay`` seconds."""

    def __init__(self, size: int):
        self.size = size
        self.tokens = float(size)
        self.updated: float | None = None

    def take(self, now: float, delay: float) -> float:
        """When the next request may leave (``now`` while a token is left); that turn is then taken."""
        if self.updated is not None:
            self.tokens = min(self.size, self.tokens + (now - self.updated) / delay)
        self.updated = now
        self.tokens -= 1
        return now if self.tokens >= 0 else now - self.tokens * delay


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
