"""The HTTP download handler of every crawl, which fences a cluster job's host.

A cluster job (``crawler.store.cluster_writer``) renews its lease on its host every
second. This handler, Scrapy's own with one check, sends no request once
the last renewal is older than the lease: a job that was stalled (stopped,
swapped out, cut off from Redis) while another job took its host never
fetches from that host again. The check runs when a request leaves for the
network, after its slot's delay; outside a cluster job it is never made,
and Redis is never imported.
"""

from typing import TYPE_CHECKING, cast

from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.exceptions import IgnoreRequest

from crawler.store.archive_store import ArchiveStore

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from crawler.store.cluster_writer import ClusterWriter


class LeasedDownloadHandler(HTTP11DownloadHandler):
    """Scrapy's HTTP handler that, in a cluster job, sends nothing once its host's lease may be another
    job's. It asks when a request leaves for the network, after its slot's delay: a request that
    waited in the slot while the job was stalled is not sent either."""

    def __init__(self, crawler: "Crawler"):
        super().__init__(crawler)
        self.leased = bool(crawler.settings.get("ARCHIVE_CLUSTER_KEY"))

    async def download_request(self, request: "Request") -> "Response":
        if self.leased:
            store = ArchiveStore.of(self._crawler)
            writer = cast("ClusterWriter", store.remote)  # ARCHIVE_CLUSTER_KEY: the store's is a job's
            if not writer.holds_lease():
                lost = cast(str, writer.lost)  # holds_lease() is false once lost says why
                store.fail(lost)  # stops the crawl; nothing more of it reaches the archive
                raise IgnoreRequest(lost)
        return await super().download_request(request)
