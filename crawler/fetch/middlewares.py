"""Downloader middlewares: send requests for some hosts to another base URL; refuse a
compressed body that is cut short; follow a meta refresh read from a page's first bytes.

``ARCHIVE_MAP_HOSTS = {"blog.example.com": "http://127.0.0.1:8000"}`` makes a
request for ``https://blog.example.com/p/1`` go to ``http://127.0.0.1:8000/p/1``
while the response, and so the archive, keeps the original URL. This is how a
blog is archived from a mirror, a staging copy or a local test server.

``TruncatedBodyMiddleware``: Scrapy decompresses what a cut gzip, deflate, br or
zstd stream holds and says nothing; a page cut short is refused here instead
(its error is recorded, of kind ``truncated``), and so is a body that decompresses past
the size cap (``too-large``), before it waits for a lane of the memory budget. Both are read
from ``DecompressedSize``, which measures a body as its bytes come (crawler.fetch.budget feeds it).

``MetaRefreshMiddleware``: Scrapy's, but it decodes only the first ``HEAD_BYTES``
of a page to find the refresh in its first 4,096 characters. Scrapy's decodes
the whole body for them and keeps the text on the response: one more copy of
every page in flight, 15 MB more for a 15 MB page (and up to four times its bytes
for a text that is not ASCII).

Both redirects, ``RedirectMiddleware`` (Scrapy's) and the meta refresh, take a
target that is no URL (``Location: http://[::1``) as no redirect: the answer is
kept as it came (a 3xx is then recorded as its status), not raised as a bug.
"""

import logging
import sys
import zlib
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from scrapy import Request
from scrapy.downloadermiddlewares import redirect
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Headers, HtmlResponse, Response

from archive.core.urls import host_of, parse_url

from crawler.meta import MAPPED, RENDER

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

logger = logging.getLogger(__name__)
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
        # a page for the browser keeps its hash route (#/post): the page's scripts read it
        fragment = parts.fragment if request.meta.get(RENDER) else ""
        target = base + urlunsplit(("", "", parts.path or "/", parts.query, fragment))
        meta = {**request.meta, MAPPED: (request.url, target)}
        return request.replace(url=target, meta=meta, dont_filter=True)

    def process_response(self, request: Request, response: Response) -> Response:
        mapped: Any = request.meta.get(MAPPED)
        if not mapped or request.url != mapped[1]:
            return response
        original, target = mapped
        location = response.headers.get("Location")
        if location and 300 <= response.status < 400:
            # A redirect within the mirror is a redirect within the original site.
            absolute = parse_url(location.decode("latin-1"), target)
            base = self.host_map[host_of(original)]
            if absolute is None:  # no URL: left for RedirectMiddleware to refuse
                return response.replace(url=original)
            if absolute == base or absolute.startswith(base + "/"):
                parts = urlsplit(original)
                absolute = f"{parts.scheme}://{parts.netloc}{absolute[len(base):] or '/'}"
            response.headers["Location"] = absolute
        return response.replace(url=original)


HEAD_BYTES = 4 * 4096  # 4,096 characters of four bytes at most


class RedirectMiddleware(redirect.RedirectMiddleware):
    """Scrapy's redirects; a ``Location`` that is no URL is no redirect."""

    def process_response(self, request: Request, response: Response) -> Request | Response:
        try:
            return super().process_response(request, response)
        except ValueError:  # w3lib's and urllib's word for a URL they cannot parse
            logger.debug("a redirect to no URL (%r) at %s: not followed", response.headers.get("Location"), request.url)
            return response


class MetaRefreshMiddleware(redirect.MetaRefreshMiddleware):
    """Scrapy's meta refresh, found in the page's first ``HEAD_BYTES`` decoded alone; a refresh to no URL is none."""

    def process_response(self, request: Request, response: Response) -> Request | Response:
        try:
            return self._refresh(request, response)
        except ValueError:
            logger.debug("a meta refresh to no URL at %s: not followed", request.url)
            return response

    def _refresh(self, request: Request, response: Response) -> Request | Response:
        if not isinstance(response, HtmlResponse) or len(response.body) <= HEAD_BYTES:
            return super().process_response(request, response)
        head = response.replace(body=response.body[:HEAD_BYTES], encoding=response.encoding)
        answer = super().process_response(request, head)
        return response if answer is head else answer


DECOMPRESSED = "archive_decompressed"  # request.meta: its compressed body's size once decompressed
METER = "archive_meter"  # request.meta: its ``DecompressedSize``, fed as its bytes come (crawler.fetch.budget)


class TruncatedBodyMiddleware:
    """Between the downloader and Scrapy's decompression: a compressed body must reach its end.

    Its decompressed size, counted on the way (the output is read a chunk at a time and
    dropped: as its bytes came, or here for a body that came otherwise), goes in the request's
    meta (``DECOMPRESSED``): the memory budget, next, knows a big page before it is decompressed
    whole (crawler.fetch.budget)."""

    def __init__(self, max_size: int):
        self.max_size = max_size

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "TruncatedBodyMiddleware":
        return cls(crawler.settings.getint("DOWNLOAD_MAXSIZE"))

    def process_response(self, request: Request, response: Response) -> Response:
        encoding = last_encoding(response.headers)
        if encoding in ENCODINGS:
            max_size = request.meta.get("download_maxsize", self.max_size)
            measured: DecompressedSize | None = request.meta.pop(METER, None)  # as its bytes came
            if measured is not None and measured.fed == len(response.body):
                size = measured.result()
            else:  # a body that came otherwise (the archive's own, for a conditional request)
                size = decompressed_size(response.body, encoding, max_size)
            if size is None:
                raise IgnoreRequest(f"truncated: the {encoding} body ({len(response.body)} bytes) is cut short, not archived")
            if max_size and size > max_size:  # refused now: never decompressed, nor waiting for a lane
                raise TooLarge(f"the {encoding} body ({len(response.body):,} bytes) decompresses to more than "
                               f"the size cap (download_maxsize) of {_mb(max_size)} MB: not archived")
            request.meta[DECOMPRESSED] = size
        return response


def last_encoding(headers: Headers) -> str:
    """The last ``Content-Encoding`` applied: the first one undone."""
    return (headers.get("Content-Encoding") or b"").lower().split(b",")[-1].strip().decode("latin-1")


class TooLarge(IgnoreRequest):
    """A body over the size cap (``DOWNLOAD_MAXSIZE``, or a request's ``download_maxsize``), once decompressed."""


def _mb(size: int) -> str:
    return f"{round(size / CHUNK, 2):g}"


class DecompressedSize:
    """What a compressed body decompresses to, counted as its bytes are fed (``feed``), a chunk of
    output at a time, each dropped: a bomb is known from its first bytes, and never held.

    ``size`` stops growing once past ``max_size`` (``over``: the size cap refuses the body then).
    ``ended``: the stream reached its end (a cut one never does). ``foreign``: the bytes are not of
    that encoding at all (Scrapy's decompression says so; the body's own size is taken)."""

    def __init__(self, encoding: str, max_size: int = 0):
        self.encoding = "gzip" if encoding == "x-gzip" else encoding
        self.max_size = max_size
        self.size = self.fed = 0
        self.ended = self.foreign = False
        self._stream: Any = None

    @property
    def over(self) -> bool:
        return bool(self.max_size) and self.size > self.max_size

    def result(self) -> int | None:
        """The size of what was fed once decompressed (the fed size when ``foreign``), or None when it is cut short."""
        if self.foreign:
            return self.fed
        return self.size if self.ended or self.over else None

    def feed(self, data: bytes) -> None:
        self.fed += len(data)
        if self.foreign or self.over or not data:
            return
        try:
            {"gzip": self._zlib, "deflate": self._zlib, "br": self._br, "zstd": self._zstd}[self.encoding](data)
        except (zlib.error, brotli.error, zstd.ZstdError):
            # garbage after a whole gzip member or zstd frame ends the stream there, as Scrapy reads it
            self.foreign = not (self.ended or self.size)
        if self.over:
            self._stream = None  # fed no more: a brotli stream's window alone may be 16 MB

    def _zlib(self, data: bytes) -> None:
        while data and not self.over:
            if self._stream is None or self._stream.eof:
                if self._stream is not None and self.encoding == "deflate":
                    return  # what follows the stream's end is not read
                self._stream = zlib.decompressobj(wbits=self._wbits(data))
            self.size += len(self._stream.decompress(data, CHUNK))
            self.ended = self._stream.eof
            data = self._stream.unconsumed_tail or (self._stream.unused_data if self._stream.eof else b"")

    def _wbits(self, head: bytes) -> int:
        if self.encoding == "gzip":
            return 31
        # a zlib header (RFC 1950), or the raw deflate some servers send
        return 15 if len(head) >= 2 and head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0 else -15

    def _br(self, data: bytes) -> None:
        self._stream = self._stream or brotli.Decompressor()
        self.size += len(self._stream.process(data, output_buffer_limit=CHUNK))
        while not self._stream.is_finished() and not self._stream.can_accept_more_data() and not self.over:
            self.size += len(self._stream.process(b"", output_buffer_limit=CHUNK))
        self.ended = self._stream.is_finished()

    def _zstd(self, data: bytes) -> None:
        while data and not self.over:
            if self._stream is None or self._stream.eof:
                self._stream = zstd.ZstdDecompressor()
            self.size += len(self._stream.decompress(data, CHUNK))
            while not self._stream.eof and not self._stream.needs_input and not self.over:
                self.size += len(self._stream.decompress(b"", CHUNK))
            self.ended = self._stream.eof
            data = self._stream.unused_data if self._stream.eof else b""


ENCODINGS = ("gzip", "x-gzip", "deflate", "br", "zstd")


def decompressed_size(body: bytes, encoding: str, max_size: int = 0) -> int | None:
    """What ``body`` decompresses to (counted up to just past ``max_size``), or None when it is cut short."""
    measure = DecompressedSize(encoding, max_size)
    measure.feed(body)
    return measure.result()


# What failed on the way, by the exception (or the one it wraps) that says so.
NETWORK_KINDS = [
    ("dns", {"CannotResolveHostError", "DNSLookupError", "gaierror"}),
    ("refused", {"DownloadConnectionRefusedError", "ConnectionRefusedError"}),
    ("timeout", {"DownloadTimeoutError", "TimeoutError", "TCPTimedOutError"}),
    ("reset", {"ResponseDataLossError", "_DataLoss", "ConnectionLost", "ConnectionDone", "ConnectionResetError"}),
]


NETWORK_FAILURES = ("dns", "refused", "timeout", "tls", "reset", "network")


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
