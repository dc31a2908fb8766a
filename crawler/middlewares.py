"""Downloader middleware: send requests for some hosts to another base URL.

``ARCHIVE_MAP_HOSTS = {"blog.example.com": "http://127.0.0.1:8000"}`` makes a
request for ``https://blog.example.com/p/1`` go to ``http://127.0.0.1:8000/p/1``
while the response, and so the archive, keeps the original URL. This is how a
blog is archived from a mirror, a staging copy or a local test server.
"""

from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from archive.urls import host_of

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

META_KEY = "archive_mapped"


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
