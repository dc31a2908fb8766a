"""Downloader middlewares: send requests for some hosts to another base URL; refuse a
compressed body that is cut short; follow a meta refresh read from a page's first bytes.

``ARCHIVE_MAP_HOSTS = {"blog.example.com": "http://127.0.0.1:8000"}`` makes a
request for ``https://blog.example.com/p/1`` go to ``http://127.0.0.1:8000/p/1``
while the response, and so the archive, keeps the original URL. This is how a
blog is archived from a mirror, a staging copy or a local test server.

``TruncatedBodyMiddleware``: Scrapy decompresses what a cut gzip, deflate, br or
zstd stream holds and says nothing; a page cut short is refused here instead
(its error is recorded, of kind ``truncated``).

``MetaRefreshMiddleware``: Scrapy's, but it decodes only the first ``HEAD_BYTES``
of a page to find the refresh in its first 4,096 characters. Scrapy's decodes
the whole body for them and keeps the text on the response: one more copy of
every page in flight, 15 MB more for a 15 MB page (and up to four times its bytes
for a text that is not ASCII).
"""

import sys
import zlib
from collections.abc import Callable

from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from scrapy import Request
from scrapy.downloadermiddlewares import redirect
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse, Response

from archive.urls import host_of

try:
    import brotli
except ImportError:  # pragma: no cover - Scrapy takes either
    import brotlicffi as brotli

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

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
            raise NotConfigured  # no message: nothing to map is the usual case, not a warning
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


HEAD_BYTES = 4 * 4096  # 4,096 characters of four bytes at most


class MetaRefreshMiddleware(redirect.MetaRefreshMiddleware):
    """Scrapy's meta refresh, found in the page's first ``HEAD_BYTES`` decoded alone."""

    def process_response(self, request: Request, response: Response) -> Request | Response:
        if not isinstance(response, HtmlResponse) or len(response.body) <= HEAD_BYTES:
            return super().process_response(request, response)
        head = response.replace(body=response.body[:HEAD_BYTES], encoding=response.encoding)
        answer = super().process_response(request, head)
        return response if answer is head else answer


DECOMPRESSED = "archive_decompressed"  # request.meta: its compressed body's size once decompressed


class TruncatedBodyMiddleware:
    """Between the downloader and Scrapy's decompression: a compressed body must reach its end.

    Its decompressed size, counted on the way (the output is read a chunk at a time and
    dropped), goes in the request's meta (``DECOMPRESSED``): the memory budget, next, knows a
    big page before it is decompressed whole (crawler.budget)."""

    def __init__(self, max_size: int):
        self.max_size = max_size

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "TruncatedBodyMiddleware":
        return cls(crawler.settings.getint("DOWNLOAD_MAXSIZE"))

    def process_response(self, request: Request, response: Response) -> Response:
        encodings = response.headers.get("Content-Encoding", b"").lower().split(b",")
        encoding = encodings[-1].strip().decode("latin-1")  # the last applied is undone first
        measure = DECOMPRESSED_SIZE.get(encoding)
        if measure:
            max_size = request.meta.get("download_maxsize", self.max_size)
            size = measure(response.body, max_size)
            if size is None:
                raise IgnoreRequest(f"truncated: the {encoding} body ({len(response.body)} bytes) is cut short, not archived")
            if max_size and size > max_size:  # refused now: never decompressed, nor waiting for a lane
                raise TooLarge(f"the {encoding} body ({len(response.body):,} bytes) decompresses to more than "
                               f"the size cap of {_mb(max_size)} MB: not archived")
            request.meta[DECOMPRESSED] = size
        return response


class TooLarge(IgnoreRequest):
    """A body over the size cap (``DOWNLOAD_MAXSIZE``, or a request's ``download_maxsize``), once decompressed."""


def _mb(size: int) -> str:
    return f"{round(size / CHUNK, 2):g}"


# Each measure reads the output a chunk at a time and drops it. It answers the size of the
# output, or None when the stream is cut short. It stops counting once past max_size (the
# size cap refuses the body then), and answers the body's own size when it is not of that
# encoding at all (Scrapy's decompression says so).

def gzip_size(body: bytes, max_size: int = 0) -> int | None:
    """What ``body``'s gzip members decompress to, or None when one does not end."""
    return _zlib_size(body, max_size, wbits=31)


def deflate_size(body: bytes, max_size: int = 0) -> int | None:
    """What the zlib stream decompresses to (or the raw deflate one, which some servers send)."""
    try:
        zlib.decompressobj().decompress(body[:64], 1)
    except zlib.error:
        return _zlib_size(body, max_size, wbits=-15)
    return _zlib_size(body, max_size, wbits=15)


def _zlib_size(body: bytes, max_size: int, *, wbits: int) -> int | None:
    data, size = body, 0
    while data:
        decompressor = zlib.decompressobj(wbits=wbits)
        try:
            while data and not decompressor.eof:
                size += len(decompressor.decompress(data, CHUNK))
                data = decompressor.unconsumed_tail
                if max_size and size > max_size:
                    return size
        except zlib.error:
            return size or len(body)
        if not decompressor.eof:
            return None
        data = decompressor.unused_data if wbits == 31 else b""
    return size


def br_size(body: bytes, max_size: int = 0) -> int | None:
    """What the brotli stream decompresses to, or None when it does not end."""
    decompressor = brotli.Decompressor()
    try:
        size = len(decompressor.process(body, output_buffer_limit=CHUNK))
        while not decompressor.is_finished() and not decompressor.can_accept_more_data():
            size += len(decompressor.process(b"", output_buffer_limit=CHUNK))
            if max_size and size > max_size:
                return size
    except brotli.error:
        return len(body)
    return size if decompressor.is_finished() else None


def zstd_size(body: bytes, max_size: int = 0) -> int | None:
    """What ``body``'s zstd frames decompress to, or None when one does not end."""
    data, size = body, 0
    while data:
        decompressor = zstd.ZstdDecompressor()
        try:
            size += len(decompressor.decompress(data, CHUNK))
            while not decompressor.eof and not decompressor.needs_input:
                size += len(decompressor.decompress(b"", CHUNK))
                if max_size and size > max_size:
                    return size
        except zstd.ZstdError:
            return size or len(body)
        if not decompressor.eof:
            return None
        data = decompressor.unused_data
    return size


DECOMPRESSED_SIZE: dict[str, Callable[[bytes, int], int | None]] = {
    "gzip": gzip_size, "x-gzip": gzip_size, "deflate": deflate_size, "br": br_size, "zstd": zstd_size,
}


# What failed on the way, by the exception (or the one it wraps) that says so.
NETWORK_KINDS = [
    ("dns", {"CannotResolveHostError", "DNSLookupError", "gaierror"}),
    ("refused", {"DownloadConnectionRefusedError", "ConnectionRefusedError"}),
    ("timeout", {"DownloadTimeoutError", "TimeoutError", "TCPTimedOutError"}),
    ("reset", {"ResponseDataLossError", "_DataLoss", "ConnectionLost", "ConnectionDone", "ConnectionResetError"}),
]


def network_kind(error: BaseException) -> str:
    """``dns``, ``refused``, ``timeout``, ``tls``, ``reset`` or, for anything else, ``network``."""
    causes, seen = [error], []
    while causes:
        cause = causes.pop()
        seen.append(cause)
        causes += [c for c in (cause.__cause__, cause.__context__) if c is not None and c not in seen]
        causes += [r.value for r in getattr(cause, "reasons", None) or [] if r.value not in seen]
    if any(type(c).__module__.startswith(("OpenSSL", "ssl", "service_identity")) for c in seen):
        return "tls"
    names = {cls.__name__ for c in seen for cls in type(c).__mro__}
    return next((kind for kind, classes in NETWORK_KINDS if names & classes), "network")
