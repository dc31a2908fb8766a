"""A download handler that answers from the archive's captures: a crawl without the network.

``blogarchive import warc`` saves a WARC's responses as captures, then runs
the crawl with this handler for http and https: each request is answered
with the newest capture of its URL (status, headers and body as stored), or
``404`` when nothing was captured. A request that ``ARCHIVE_MAP_HOSTS`` sent
elsewhere is answered for its original URL: the import maps the hosts a
blog's crawl took as its own to one name, so they are one blog again.
Everything else is the crawl as it is (discovery, robots.txt, redirects,
judging pages, extraction, identity), so the posts are those a crawl of the
same pages gives. The responses are
flagged ``cached``: they are captures already and are not stored again.
"""

import json
from typing import TYPE_CHECKING

from scrapy.core.downloader.handlers.base import BaseDownloadHandler
from scrapy.http import Response
from scrapy.responsetypes import responsetypes

from archive.tables.captures import load_body

from crawler.fetch.conditional import DROPPED_HEADERS
from crawler.meta import MAPPED, SHA
from crawler.store.archive_store import ArchiveStore

if TYPE_CHECKING:
    from scrapy import Request

LATEST = "select status, headers, sha256 from captures where url = ? order by fetched_at desc, id desc limit 1"


class CaptureDownloadHandler(BaseDownloadHandler):
    async def download_request(self, request: "Request") -> Response:
        db = ArchiveStore.of(self.crawler).db
        url = request.meta[MAPPED][0] if MAPPED in request.meta else request.url  # the URL the blog gave
        row = db.execute(LATEST, [url]).fetchone()
        if row is None:
            return Response(url=request.url, status=404, request=request, flags=["cached"])
        status, headers_json, sha = row
        body = load_body(db, sha) or b""
        headers = {k: v for k, v in json.loads(headers_json or "{}").items() if k not in DROPPED_HEADERS}
        cls = responsetypes.from_args(headers=headers, url=request.url, body=body)
        request.meta[SHA] = sha
        return cls(url=request.url, status=status, headers=headers, body=body, request=request, flags=["cached"])
