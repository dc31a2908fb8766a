"""Progress lines while a crawl runs: pages fetched, posts saved, errors."""

import sys
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import task

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class Progress:
    def __init__(self, crawler: "Crawler", interval: float):
        self.stats = crawler.stats
        self.interval = interval
        self.loop = task.LoopingCall(self.report)

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "Progress":
        interval = crawler.settings.getfloat("ARCHIVE_PROGRESS_INTERVAL")
        if not interval:
            raise NotConfigured  # asked for (--quiet): nothing to warn about
        extension = cls(crawler, interval)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self) -> None:
        self.loop.start(self.interval, now=False)

    def spider_closed(self) -> None:
        if self.loop.running:
            self.loop.stop()

    def report(self) -> None:
        get = self.stats.get_value
        saved = sum(get(f"archive/posts_{k}", 0) for k in ("new", "updated", "unchanged"))
        print(
            f"progress: {get('response_received_count', 0)} pages fetched, "
            f"{saved} posts saved, {get('archive/errors', 0)} errors",
            file=sys.stderr,
            flush=True,
        )
