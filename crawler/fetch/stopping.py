"""Ctrl-C in the crawl's process: no request more, the pages in flight finished and saved.

Scrapy's first SIGINT or SIGTERM closes the spider: the scheduler gives no request more, but
every request already handed to the downloader is still sent, each after its host's delay
(with the default delay of 1 s, about 20 s more of fetching). ``Stopping`` first takes the
requests still waiting for their turn out of the downloader's queues (``NotSent``: no error is
recorded; the next run, which resumes the interrupted one, finds them again), so only the
requests already on the wire finish; their pages are extracted, and the archive's writer
commits them as the engine stops. A second signal is Scrapy's: the reactor stops at once
(``blogarchive crawl`` kills the crawl's processes on a second Ctrl-C).
"""

import functools
import signal
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest
from twisted.python.failure import Failure

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class NotSent(IgnoreRequest):
    """A request that was waiting for its turn when the crawl was asked to stop."""


class Stopping:
    def __init__(self, crawler: "Crawler"):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "Stopping":
        extension = cls(crawler)
        crawler.signals.connect(extension.engine_started, signal=signals.engine_started)
        return extension

    def engine_started(self) -> None:
        from twisted.internet import reactor  # the one Scrapy installed

        # once the reactor runs: Scrapy installs its own handlers as it starts
        reactor.callFromThread(self._wrap_handlers)

    def _wrap_handlers(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            handler = signal.getsignal(signum)
            if callable(handler):
                signal.signal(signum, functools.partial(self._on_signal, handler))

    def _on_signal(self, scrapy_handler: Any, signum: int, frame: Any) -> None:
        from twisted.internet import reactor

        reactor.callFromThread(self.drop_waiting)  # before the spider closes: Scrapy's handler asks for that next
        scrapy_handler(signum, frame)  # and installs its own for a second signal

    def drop_waiting(self) -> None:
        """Fail every request that waits in the downloader for its host's turn with ``NotSent``."""
        engine = self.crawler.engine
        if engine is None:
            return
        dropped = 0
        for slot in list(engine.downloader.slots.values()):
            while slot.queue:
                request, waiting = slot.queue.popleft()
                waiting.errback(Failure(NotSent(f"not sent, the crawl was asked to stop: {request.url}")))
                dropped += 1
        self.crawler.stats.inc_value("stop/not_sent", dropped)
