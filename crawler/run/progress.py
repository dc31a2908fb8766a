"""Progress while a crawl runs: pages and files fetched, requests still queued, posts saved, errors."""

import json
import os
import sys
from typing import TYPE_CHECKING, TextIO

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import task

from crawler.run.launch import progress_line
from crawler.store.archive_store import ArchiveStore

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class Progress:
    """Every ``ARCHIVE_PROGRESS_INTERVAL`` seconds, a line on standard error; in a crawl of
    several processes, the counts go to blogarchive, which prints their sums; with
    ``ARCHIVE_PROGRESS_FD``, they go there, one JSON object a line (blogarchive's display
    on a terminal). Pages and files (the posts' images) are counted apart."""

    def __init__(self, crawler: "Crawler", interval: float, to: TextIO | None):
        self.crawler = crawler
        self.stats = crawler.stats
        self.store = ArchiveStore.of(crawler)
        self.interval = interval
        self.to = to
        self.loop = task.LoopingCall(self.report)

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "Progress":
        interval = crawler.settings.getfloat("ARCHIVE_PROGRESS_INTERVAL")
        if not interval:
            raise NotConfigured  # asked for (--quiet): nothing to warn about
        fd = crawler.settings.get("ARCHIVE_PROGRESS_FD")
        if crawler.settings.get("ARCHIVE_WRITER_FD") or fd:
            interval = min(interval, 1.0)  # blogarchive shows them at its own pace
        extension = cls(crawler, interval, os.fdopen(int(fd), "w", buffering=1) if fd else None)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self) -> None:
        self.loop.start(self.interval, now=False)

    def spider_closed(self) -> None:
        if self.loop.running:
            self.loop.stop()
        if self.to:
            self.report()  # the last counts
        if self.to:
            self.to.close()

    def queued(self) -> int:
        """The requests known and not answered yet: waiting in the scheduler, or in the downloader (a host's
        delay, their transfer). The pages still to come, as far as the crawl knows now."""
        engine = self.crawler.engine
        waiting = self.stats.get_value("scheduler/enqueued", 0) - self.stats.get_value("scheduler/dequeued", 0)
        return waiting + (len(engine.downloader.active) if engine else 0)

    def report(self) -> None:
        get = self.stats.get_value
        counts = {
            "pages": get("response_received_count", 0) - get("archive/files", 0),  # crawler.store.pipelines
            "files": get("archive/files", 0),
            "posts": sum(get(f"archive/posts_{k}", 0) for k in ("new", "updated", "unchanged")),
            "errors": get("archive/errors", 0),
            "queued": self.queued(),
        }
        if self.store.remote:
            self.store.remote.tell("progress", counts)
        elif self.to:
            try:
                print(json.dumps(counts), file=self.to)
            except BrokenPipeError:  # blogarchive is gone: the crawl goes on
                self.to = None
        else:
            print(progress_line(counts), file=sys.stderr, flush=True)
