"""Downloader middlewares: send requests for some hosts to another base URL; refuse a
gzip body that is cut short.

``ARCHIVE_MAP_HOSTS = {"blog.example.com": "http://127.0.0.1:8000"}`` makes a
request for ``https://blog.example.com/p/1`` go to ``http://127.0.0.1:8000/p/1``
while the response, and so the archive, keeps the original URL. This is how a
blog is archived from a mirror, a staging copy or a local test server.

``TruncatedGzipMiddleware``: Scrapy decompresses what a cut gzip stream holds and
says nothing; a page cut short is refused here instead (its error is recorded).
"""

import zlib

from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from scrapy import Request
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Response

from archive.urls import host_of

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

META_KEY = "archive_mapped"
CHUNK = 1 << 20


class MapHostsMiddleware:
    def __init__(self, host_map: dict[str, str]):
        self.host_map = host_map

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "MapHostsMiddleware":
        host_map = crawler.settings.getdict("ARCHIVE_MAP_HOSTS")
        if not host_map:
            raise NotConfigured("no ARCHIVE_MAP_HOSTS")
        return cls({k.lower(): v.rstrip("/") for k, v in host_map.items()})

    def process_request(self, request: Request) -> Request | None:
        base = self.host_map.get(host_of(request.url))
        if base is None:
            return None
        parts = urlsplit(request.url)
        target = base + urlunsplit(("", "", parts.path or "/", parts.query, ""))
        meta = {**request.meta, META_KEY: (request.url, target)}
        return request.replace(url=target, meta=meta, dont_filter=True)

    def process_response(self, request: Request, response: Response) -> Response:
        mapped: Any = request.meta.get(META_KEY)
        if not mapped or request.url != mapped[1]:
            return response
        original, target = mapped
        location = response.headers.get("Location")
        if location and 300 <= response.status < 400:
            # A redirect within the mirror is a redirect within the original site.
            absolute = urljoin(target, location.decode("latin-1"))
            base = self.host_map[host_of(original)]
            if absolute == base or absolute.startswith(base + "/"):
                parts = urlsplit(original)
                absolute = f"{parts.scheme}://{parts.netloc}{absolute[len(base):] or '/'}"
            response.headers["Location"] = absolute
        return response.replace(url=original)


class TruncatedGzipMiddleware:
    """Between the downloader and Scrapy's decompression: a gzip body must reach its end."""

    def __init__(self, max_size: int):
        self.max_size = max_size

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "TruncatedGzipMiddleware":
        return cls(crawler.settings.getint("DOWNLOAD_MAXSIZE"))

    def process_response(self, request: Request, response: Response) -> Response:
        encoding = response.headers.get("Content-Encoding", b"").lower()
        if encoding in (b"gzip", b"x-gzip") and not gzip_complete(response.body, self.max_size):
            raise IgnoreRequest(f"truncated: the gzip body ({len(response.body)} bytes) is cut short, not archived")
        return response


def gzip_complete(body: bytes, max_size: int = 0) -> bool:
    """True when every gzip member of ``body`` ends, or when it holds more than ``max_size``
    bytes (the size cap refuses it then); output is read a chunk at a time and dropped."""
    data, size = body, 0
    while data:
        decompressor = zlib.decompressobj(wbits=31)
        try:
            while data and not decompressor.eof:
                size += len(decompressor.decompress(data, CHUNK))
                data = decompressor.unconsumed_tail
                if max_size and size > max_size:
                    return True
        except zlib.error:
            return True  # not gzip at all: Scrapy's decompression says so
        if not decompressor.eof:
            return False
        data = decompressor.unused_data
    return True
