"""Item pipelines: validate, then store in the archive through ``archive.tables``.

The store pipeline writes each item in one step of the archive's writer: a post
is saved and its version recorded (``archive.tables.history``) together; a post
gone is marked so, a body whose items are all written is noted processed.
It owns the run: it records it in ``crawl_runs`` when the
spider opens and closes it with totals and the sources' status at the end.
With ``ARCHIVE_RUN_ID`` (``blogarchive crawl --processes N``), the run is
blogarchive's: the pipeline adds its totals and sources' status to it, and
blogarchive closes it when every crawl process has.
"""

import logging
import sqlite3
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import Request, signals
from scrapy.exceptions import CloseSpider, DropItem

from archive import (
    ArchiveError,
    add_run_totals,
    finish_run,
    run_status,
    save_alias,
    save_error,
    save_page,
    save_post,
    start_run,
    update_source,
)
from archive.core.db import utcnow
from archive.core.queries import SOURCE_FAILURES, run_errors
from archive.core.urls import normalize_url
from archive.tables.history import NoPost, mark_gone, record_version
from archive.tables.media import save_media_file
from archive.tables.revisit import mark_processed

from crawler.items import BlogPost, CrawlError, MediaFile, PageRecord, PostAlias, PostGone, Processed, SourceUpdate
from crawler.meta import MEDIA
from crawler.store.archive_store import ArchiveStore, ArchiveUnwritable, Write

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)
# Errors told on standard error, one line each (Scrapy's own lines for them are INFO).
TOLD_KINDS = ("seed", "dns", "refused", "timeout", "tls", "reset", "truncated", "network")


def source_status(errors: Counter[str]) -> str:
    """A source's status after a crawl that did not fail it: ``ok`` only when its own pages, posts and
    files had no error; errors on other hosts (images elsewhere) are told apart."""
    blog, elsewhere = errors["blog"], errors["other hosts"]
    status = f"{blog} errors" if blog else "ok"
    if elsewhere:
        status += f", {elsewhere} {'more ' if blog else 'errors '}on other hosts"
    if errors["hosts down"]:
        status += f", {errors['hosts down']} on hosts down since an earlier run"
    return status


class ValidatePipeline:
    """Drop posts that cannot be stored: no URL, or neither text nor title (a protected post's metadata is kept)."""

    def process_item(self, item: Any) -> Any:
        if isinstance(item, BlogPost):
            if not item.url or not item.source_id:
                raise DropItem(f"post without URL or source: {item.url}")
            if not (item.text or "").strip() and not (item.protected or item.title):
                raise DropItem(f"post without text: {item.url}")
        return item


class ArchivePipeline:
    """Save every item in the archive and keep the run's totals."""

    def __init__(self, crawler: "Crawler"):
        self.crawler = crawler
        self.store = ArchiveStore.of(crawler)
        self.run_id = 0
        self.owns_run = True  # False: blogarchive crawl --processes N opened it, and closes it
        self.started = 0.0
        self.sources: set[int] = set()
        self.failed: set[int] = set()
        # Aliases of a post still in the extraction workers when its alias was found:
        # saved with the post when it comes.
        self.waiting: dict[str, list[dict[str, str]]] = {}

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "ArchivePipeline":
        pipeline = cls(crawler)
        # The run is closed on spider_closed, which carries the finish reason.
        crawler.signals.connect(pipeline.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(pipeline.response_received, signal=signals.response_received)
        return pipeline

    def response_received(self, request: Request) -> None:
        """The responses for the posts' images counted apart from the pages' (the run's ``files``)."""
        if MEDIA in request.meta:
            self.crawler.stats.inc_value("archive/files")

    def open_spider(self) -> None:
        given = self.crawler.settings.getint("ARCHIVE_RUN_ID")
        try:
            # committed at once: the run shows while it runs
            self.run_id = given or self.store.write_now(start_run, [])
        except ArchiveError as e:
            raise CloseSpider(str(e)) from e
        self.owns_run = not given
        self.started = time.monotonic()
        self.crawler.stats.set_value("archive/run_id", self.run_id)

    def process_item(self, item: Any) -> Any:
        if self.store.fatal:
            raise DropItem(f"not saved, the archive cannot be written ({self.store.fatal}): {getattr(item, 'url', '')}")
        # Saved in the writer thread (crawler.store.archive_store), in the order items come;
        # a disk that is full or read-only there stops the crawl.
        held = len(getattr(item, "text", None) or "") + len(getattr(item, "markdown", None) or "")
        self.store.apply(self._save, item, held=held)
        return item

    def _save(self, run: "Write", item: Any) -> None:
        stats = self.crawler.stats
        if isinstance(item, BlogPost):
            if not self._save_post(run, item):
                return
        elif isinstance(item, PostGone):
            if run(mark_gone, item.url):
                stats.inc_value("archive/posts_gone")
                logger.info("gone: %s", item.url)
        elif isinstance(item, Processed):
            run(mark_processed, item.url, item.sha256)
        elif isinstance(item, PostAlias):
            if not run(save_alias, item.alias, item.url, item.why):
                self.waiting.setdefault(normalize_url(item.url), []).append({"alias": item.alias, "why": item.why})
        elif isinstance(item, PageRecord):
            run(save_page, ItemAdapter(item).asdict(), run_id=self.run_id)
            stats.inc_value(f"archive/pages_{item.kind}")
        elif isinstance(item, CrawlError):
            fields = ItemAdapter(item).asdict()
            del fields["fails_source"]
            run(save_error, run_id=self.run_id, **fields)
            if item.kind in TOLD_KINDS or item.fails_source:
                logger.error("%s: %s (%s)", item.url, item.message, item.kind)
            stats.inc_value("archive/errors")
            if item.source_id and (item.kind in SOURCE_FAILURES or item.fails_source):
                self.failed.add(item.source_id)
        elif isinstance(item, MediaFile):
            fields = ItemAdapter(item).asdict()
            run(save_media_file, fields.pop("url"), **fields)
            stats.inc_value(f"media/{'saved' if item.status == 'ok' else 'not_saved'}")
        elif isinstance(item, SourceUpdate):
            fields = {k: v for k, v in ItemAdapter(item).asdict().items() if v is not None and k != "source_id"}
            if fields:
                run(update_source, item.source_id, **fields)
        source_id = getattr(item, "source_id", None)
        if source_id:
            self.sources.add(source_id)

    def _save_post(self, run: "Write", item: BlogPost) -> bool:
        """The post, then its version when it is new, changed or back, in this one step.

        Returns:
            False when the post could not be saved (its error is recorded).
        """
        stats = self.crawler.stats
        post = ItemAdapter(item).asdict()
        post["aliases"] = (post.get("aliases") or []) + self.waiting.pop(normalize_url(item.url), [])
        try:
            outcome = run(save_post, post, run_id=self.run_id)
        except ValueError as e:
            run(save_error, run_id=self.run_id, source_id=item.source_id, url=item.url, kind="data", message=str(e))
            logger.warning("not saved: %s", e)
            outcome = ""
        else:
            stats.inc_value(f"archive/posts_{outcome}")
        # the post answered: one archived before and marked gone is back, even where this content was not saved
        try:
            change = run(record_version, item.url, run_id=self.run_id)
        except NoPost:
            change = None  # never saved
        if change:
            stats.inc_value("archive/versions")
            if change != "new":
                logger.info("new version of %s: %s", item.url, change)
        return bool(outcome)

    def spider_closed(self, reason: str) -> None:
        if not self.run_id or self.store.fatal:
            return
        if reason == "finished" and self.crawler.stats.get_value("stall/count"):
            reason = "stalled"  # what stalled was given up (crawler.fetch.watchdog), the rest finished
        try:
            self.store.apply_now(self._close_run, reason, time.monotonic() - self.started)
        except (sqlite3.OperationalError, ArchiveUnwritable) as e:
            logger.error("the run could not be closed in the archive: %s", e)
            return
        if self.store.remote:
            self.store.remote.tell("closed", reason)  # blogarchive closes the run when every process has

    def _close_run(self, run: "Write", reason: str, seconds: float) -> None:
        now = utcnow()
        errors = run(run_errors, self.run_id)
        for source_id in self.sources:
            status = "failed" if source_id in self.failed else source_status(errors.get(source_id, Counter()))
            run(update_source, source_id, last_crawl_at=now, last_status=status)
        get = self.crawler.stats.get_value
        run(
            add_run_totals,
            self.run_id,
            mode=getattr(self.crawler.spider, "mode", None),
            sources=sorted(self.sources),
            pages=get("response_received_count", 0) - get("archive/files", 0),
            files=get("archive/files", 0),
            requests=get("revisit/requests", 0),
            not_modified=sum(get(f"revisit/{k}", 0) for k in ("not_modified", "fresh", "same_body", "resumed")),
            extractions=get("extract/count", 0),
            versions=get("archive/versions", 0),
        )
        if self.owns_run:
            run(finish_run, self.run_id, status=run_status(reason), seconds=seconds)

