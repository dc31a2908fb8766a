"""The crawl lock, post history, and knowing what a run has finished.

- ``LockPipeline`` (first to open) holds the archive's crawl lock for the
  whole crawl, or checks the one ``blogarchive crawl`` passed down through
  ``ARCHIVE_LOCK_FD``, and marks runs left ``running`` by a dead crawl as
  interrupted.
- ``HistoryPipeline`` (after the store pipeline) records a version of each
  saved post that changed, marks posts gone, and notes processed bodies.
- ``ProcessedMiddleware`` yields a ``Processed`` item after the last item of
  every callback, so a resumed run knows which bodies were fully archived.
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
from archive.tables.history import NoPost, mark_gone, record_version
from archive.tables.revisit import mark_processed

from crawler.items import BlogPost, PostGone, Processed
from crawler.meta import SHA
from crawler.store.archive_store import ArchiveStore, Write

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class LockPipeline:
    def __init__(self, path: str, fd: int | None, *, run_given: bool = False):
        self.path = path
        self.fd = fd
        self.owned = False
        self.run_given = run_given  # blogarchive opened the run, after closing the stale ones

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "LockPipeline":
        fd = crawler.settings.get("ARCHIVE_LOCK_FD")
        return cls(crawler.settings.get("ARCHIVE_PATH"), int(fd) if fd not in (None, "") else None,
                   run_given=bool(crawler.settings.getint("ARCHIVE_RUN_ID")))

    def open_spider(self) -> None:
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


class HistoryPipeline:
    def __init__(self, crawler: "Crawler"):
        self.crawler = crawler
        self.store = ArchiveStore.of(crawler)

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "HistoryPipeline":
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        if isinstance(item, (BlogPost, PostGone, Processed)):
            self.store.apply(self._save, item)  # after the item's own save (crawler.store.archive_store)
        return item

    def _save(self, run: Write, item: Any) -> None:
        stats = self.crawler.stats
        if isinstance(item, BlogPost):
            try:
                change = run(record_version, item.url, run_id=stats.get_value("archive/run_id"))
            except NoPost:
                return  # not saved (its error is recorded)
            if change:
                stats.inc_value("archive/versions")
                if change != "new":
                    logger.info("new version of %s: %s", item.url, change)
        elif isinstance(item, PostGone):
            if run(mark_gone, item.url):
                stats.inc_value("archive/posts_gone")
                logger.info("gone: %s", item.url)
        elif isinstance(item, Processed):
            run(mark_processed, item.url, item.sha256)


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
