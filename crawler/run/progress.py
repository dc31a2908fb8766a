"""Progress lines while a crawl runs: pages fetched, posts saved, errors."""

import sys
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import task

from crawler.run.launch import progress_line
from crawler.store.archive_store import ArchiveStore

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class Progress:
    """Every ``ARCHIVE_PROGRESS_INTERVAL`` seconds, a line on standard error; in a crawl of
    several processes, the counts go to blogarchive, which prints their sums."""

    def __init__(self, crawler: "Crawler", interval: float):
        self.stats = crawler.stats
        self.store = ArchiveStore.of(crawler)
        self.interval = interval
        self.loop = task.LoopingCall(self.report)

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "Progress":
        interval = crawler.settings.getfloat("ARCHIVE_PROGRESS_INTERVAL")
        if not interval:
            raise NotConfigured  # asked for (--quiet): nothing to warn about
        if crawler.settings.get("ARCHIVE_WRITER_FD"):
            interval = min(interval, 1.0)  # blogarchive shows the sums at its own pace
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
        counts = {
            "pages": get("response_received_count", 0),
            "posts": sum(get(f"archive/posts_{k}", 0) for k in ("new", "updated", "unchanged")),
            "errors": get("archive/errors", 0),
        }
        if self.store.remote:
            self.store.remote.tell("progress", counts)
        else:
            print(progress_line(counts), file=sys.stderr, flush=True)
