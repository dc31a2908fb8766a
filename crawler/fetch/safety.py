"""Downloader middlewares that keep a crawl from being turned against the machine it runs on.

``PrivateAddressMiddleware``: only the hosts the user typed (seeds, their
aliases, ``--map-host`` hosts and their targets, each with its port) may be loopback, private
or link-local addresses. Anything else, a redirect above all, that names or resolves to
such an address, in any spelling (``2130706433``, ``0x7f000001``,
``0177.0.0.1``, ``[::1]``), is refused. A name is resolved once and checked, and the
connection is made to that address (DNS rebinding: a second answer is never used). The
browser's requests (``crawler.fetch.render``) are held to the same hosts and rule.

``CallbackErrorsMiddleware`` (a spider middleware): an unexpected exception
while handling a page is recorded against its source, which is marked failed.

``RobotsPolicyMiddleware``: Scrapy's robots.txt handling, with RFC 9309's
rule for an unreachable robots.txt: a 5xx answer or a network error means
that nothing on the host may be fetched; a 4xx means everything may. A
request that ``--map-host`` sends to another server was judged by its own
host's robots.txt: the mirror's is never asked for.
"""

import asyncio
import ipaddress
import logging
import socket
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import CannotResolveHostError, IgnoreRequest
from scrapy.http import Response
from scrapy.resolver import dnscache

from archive.core.urls import host_of

from crawler.fetch.hostdown import HostHealth
from crawler.fetch.middlewares import network_kind
from crawler.items import CrawlError
from crawler.meta import MAPPED

logger = logging.getLogger(__name__)
# What a network failure says of a host that could not be reached.
UNREACHABLE = {"dns": "its name does not resolve", "refused": "it refuses connections", "timeout": "it does not answer"}

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def literal_address(host: str) -> Address | None:
    """The address an IP literal names, in any of the spellings resolvers accept."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    try:  # 2130706433, 0x7f000001, 0177.0.0.1, 127.1: what inet_aton (and so curl, browsers) accept
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def is_internal(address: Address) -> bool:
    """Loopback, private, link-local, multicast, reserved or unspecified."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return not address.is_global or address.is_multicast


def trusted_hosts(crawler: "Crawler") -> set[str]:
    """``host[:port]`` of what the user typed: the seeds' hosts and the mirrors they map to."""
    hosts = set(getattr(crawler.spider, "trusted_hosts", ()))
    host_map = crawler.settings.getdict("ARCHIVE_MAP_HOSTS")
    # a mapped host is never asked for itself: its requests go to the mirror the user named
    hosts |= {host_of(base) for base in host_map.values()} | {host.lower() for host in host_map}
    return hosts


async def host_verdict(host: str) -> "str | Address | None":
    """Why ``host`` is refused; or the address it resolved to, all of whose answers are public."""
    address = literal_address(host)
    if address is not None:
        return f"is the internal address {address}" if is_internal(address) else None
    try:  # IPv4, as the downloader's resolver (Scrapy's CachingThreadedResolver)
        infos = await asyncio.get_running_loop().getaddrinfo(host, None, family=socket.AF_INET, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as e:
        # not left to the downloader's own lookup, which could answer otherwise; asked again on a retry
        raise CannotResolveHostError(f"DNS lookup failed: {host}: {e}") from e
    addresses = [ipaddress.ip_address(sockaddr[0]) for *_, sockaddr in infos]
    for resolved in addresses:
        if is_internal(resolved):
            return f"resolves to the internal address {resolved}"
    return addresses[0]


class PrivateAddressMiddleware:
    def __init__(self, crawler: "Crawler"):
        self.crawler = crawler
        self.verdicts: dict[str, str | Address | None] = {}

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "PrivateAddressMiddleware":
        return cls(crawler)

    async def process_request(self, request: Request) -> None:
        parts = urlsplit(request.url)
        if parts.scheme not in ("http", "https"):
            raise IgnoreRequest(f"refused: {parts.scheme}: URLs are never fetched")
        if host_of(request.url) in trusted_hosts(self.crawler):
            return
        host = (parts.hostname or "").lower()
        if host not in self.verdicts:
            self.verdicts[host] = await host_verdict(host)
        verdict = self.verdicts[host]
        if isinstance(verdict, Address):
            # DNS rebinding: the connection is made to the address checked here, never to what a
            # second lookup (the downloader's) would answer. Scrapy's resolver reads this cache first.
            dnscache[host] = str(verdict)
        elif verdict:
            self.crawler.stats.inc_value("archive/refused_internal")
            raise IgnoreRequest(f"refused: {host} {verdict}")


class CallbackErrorsMiddleware:
    """A bug met while handling one source's page marks that source failed; the rest goes on."""

    def __init__(self, crawler: "Crawler"):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "CallbackErrorsMiddleware":
        return cls(crawler)

    def process_spider_exception(self, response: Response, exception: Exception) -> list[Any]:
        source_id = response.meta.get("source_id")
        self.crawler.stats.inc_value("archive/callback_errors")
        logger.exception("unexpected error on %s", response.url, exc_info=exception)
        return [CrawlError(source_id, response.url, "bug", f"{type(exception).__name__}: {exception}")]


class _OneLine(logging.Filter):
    """A robots.txt that could not be fetched is one INFO line in the log, not a traceback:
    the host's pages are refused for it, and each of those is recorded in ``crawl_errors``
    (and told on standard error by the pipeline)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            record.msg, record.args = "%s (%s)", (record.getMessage(), type(record.exc_info[1]).__name__)
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


class RobotsPolicyMiddleware(RobotsTxtMiddleware):
    def __init__(self, crawler: "Crawler"):
        super().__init__(crawler)
        self.unreachable: dict[str, str] = {}
        robots_logger = logging.getLogger(RobotsTxtMiddleware.__module__)
        if not any(isinstance(f, _OneLine) for f in robots_logger.filters):
            robots_logger.addFilter(_OneLine())

    async def process_request(self, request: Request) -> None:
        mapped = request.meta.get(MAPPED)
        if mapped and mapped[1] == request.url:
            return  # judged by its own host's robots.txt before --map-host sent it elsewhere
        await super().process_request(request)

    def forbids(self, url: str) -> bool:
        """Whether the robots.txt read for ``url``'s host forbids it: for a request that is not the
        crawl's own (a rendered page's), to the blog's host or to the mirror that stands for it
        (``--map-host``). False while no robots.txt of that host is read."""
        host_map = self.crawler.settings.getdict("ARCHIVE_MAP_HOSTS")
        netloc = next((host.lower() for host, base in host_map.items() if host_of(base) == host_of(url)),
                      urlsplit(url).netloc.lower())
        parser = self._parsers.get(netloc)
        if parser is None or not hasattr(parser, "allowed"):  # none, or still being read (a Deferred)
            return False
        return not parser.allowed(url, self._robotstxt_useragent or self._default_useragent)

    async def _parse_robots(self, response: Response, netloc: str, request: Request) -> None:
        if response.status >= 500:
            self.unreachable[netloc] = f"HTTP {response.status}"
        await super()._parse_robots(response, netloc, request)

    def _robots_error(self, exc: Exception, netloc: str) -> None:
        if not isinstance(exc, IgnoreRequest):
            kind = network_kind(exc)
            self.unreachable[netloc] = f"{kind}: {type(exc).__name__}"
            # the host could not be reached (its retries included): down for the run, its requests deferred;
            # said as what happened to the host (its name does not resolve), not as a rule of robots.txt
            HostHealth.of(self.crawler).down.setdefault(
                host_of(f"http://{netloc}/"), f"{UNREACHABLE.get(kind, 'cannot be reached')} ({kind}: {type(exc).__name__})")
        super()._robots_error(exc, netloc)

    def process_request_2(self, rp: Any, request: Request) -> None:
        health = HostHealth.of(self.crawler)
        if host_of(request.url) in health.down:  # the requests that waited for its robots.txt
            raise health.refuse(host_of(request.url))
        netloc = urlsplit(request.url).netloc
        if netloc in self.unreachable:
            self.crawler.stats.inc_value("robotstxt/forbidden")
            raise IgnoreRequest(
                f"Forbidden by robots.txt: unreachable ({self.unreachable[netloc]}), "
                "which RFC 9309 reads as disallowing everything"
            )
        super().process_request_2(rp, request)
