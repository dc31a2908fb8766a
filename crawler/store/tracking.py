"""The crawl lock, and knowing what a run has finished.

- ``LockPipeline`` (first to open) holds the archive's crawl lock for the
  whole crawl, or checks the one ``blogarchive crawl`` passed down through
  ``ARCHIVE_LOCK_FD``, and marks runs left ``running`` by a dead crawl as
  interrupted. A cluster job takes no lock: it writes a plan of its own, and
  the coordinator holds the archive's lock; a lock in the node's folder would
  let one job at a time run on the node.
- ``ProcessedMiddleware`` yields a ``Processed`` item after the last item of
  every callback, so a resumed run knows which bodies were fully archived
  (the store pipeline, ``crawler.store.pipelines``, notes them).
"""

import logging
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import CloseSpider
from scrapy.http import Response

from archive import ArchiveError, open_archive
from archive.core.lock import (
    CrawlLocked,
    acquire_lock,
    adopt_lock,
    close_stale_runs,
    release_lock,
)

from crawler.items import Processed
from crawler.meta import SHA

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class LockPipeline:
    def __init__(self, path: str, fd: int | None, *, run_given: bool = False, cluster_job: bool = False):
        self.path = path
        self.fd = fd
        self.owned = False
        self.run_given = run_given  # blogarchive opened the run, after closing the stale ones
        self.cluster_job = cluster_job  # its archive is its own plan; the coordinator holds the lock

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "LockPipeline":
        fd = crawler.settings.get("ARCHIVE_LOCK_FD")
        return cls(crawler.settings.get("ARCHIVE_PATH"), int(fd) if fd not in (None, "") else None,
                   run_given=bool(crawler.settings.getint("ARCHIVE_RUN_ID")),
                   cluster_job=bool(crawler.settings.get("ARCHIVE_CLUSTER_KEY")))

    def open_spider(self) -> None:
        if self.cluster_job:
            return
        try:
            if self.fd is None:
                self.fd, stale = acquire_lock(self.path)
                self.owned = True
                if stale:
                    logger.warning("took over the crawl lock of pid %s, which is no longer running", stale)
            else:
                adopt_lock(self.fd)
            if self.run_given:
                return
            db = open_archive(self.path)
        except (CrawlLocked, ArchiveError) as e:
            raise CloseSpider(str(e)) from e
        try:
            if close_stale_runs(db):
                logger.warning("a previous crawl died: its run is marked interrupted and its work resumes")
        finally:
            db.close()

    def process_item(self, item: Any) -> Any:
        return item

    def close_spider(self) -> None:
        if self.owned and self.fd is not None:
            release_lock(self.fd)
            self.fd = None


class ProcessedMiddleware:
    """Spider middleware: after a callback's last output, say its body is archived."""

    def process_spider_output(self, response: Response, result: Iterable[Any]) -> Iterable[Any]:
        yield from result
        yield from self._processed(response)

    async def process_spider_output_async(self, response: Response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for item in result:
            yield item
        for item in self._processed(response):
            yield item

    def _processed(self, response: Response) -> Iterable[Processed]:
        sha = response.meta.get(SHA)
        if sha:
            yield Processed(response.url, sha)
