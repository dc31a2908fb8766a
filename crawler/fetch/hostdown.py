"""A host that cannot be reached is given up for the rest of the run after a few tries, not once per URL.

A blog whose images live on a host that no longer resolves shows hundreds of them: each was
looked up, waited out the host's delay and retries, and failed on its own (a first crawl of
254 s against 19 s without its images). Here, once ``DOWN_AFTER`` different URLs of a host have
failed in a row to reach it (its name does not resolve, its port refuses, or its connection
times out before any answer), the host is *down* until the run ends: every request for it left
or still to come is refused at once (``HostDown``), before its name is looked up or it waits in
the host's queue, and recorded as deferred (an image is asked for again by the next run). A host
whose robots.txt could not be fetched for a network failure (after its retries) is down too
(``crawler.fetch.safety.RobotsPolicyMiddleware``): RFC 9309 forbids the rest of it anyway.
An answer from the host, any answer, starts the count again.

Two downloader middlewares share what the run knows of each host (``HostHealth``):
``HostDownMiddleware`` first of all (before the internal-address check looks the name up), and
``HostFailuresMiddleware`` just before retries, so it sees each failure before it is retried
(a retry of a host that went down is refused too).
"""

import weakref
from typing import TYPE_CHECKING, Any, Self

from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Headers, Response

from archive.core.urls import host_of

from crawler.fetch.middlewares import network_kind
from crawler.meta import MAPPED

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

DOWN_AFTER = 3  # different URLs of a host that failed in a row to reach it
UNREACHED = ("dns", "refused")  # and "timeout" before the host said anything

_health: "weakref.WeakKeyDictionary[Crawler, HostHealth]" = weakref.WeakKeyDictionary()


class HostDown(IgnoreRequest):
    """A request not sent: its host is down for the rest of the run. ``first``: the first one refused."""

    def __init__(self, host: str, why: str, *, first: bool):
        super().__init__(f"deferred: {host} is down for the rest of this run ({why}); not asked for")
        self.host, self.first = host, first


class HostHealth:
    """What the run knows of each host: down (and why), or the URLs that failed in a row to reach it."""

    def __init__(self, stats: Any) -> None:
        self.stats = stats
        self.down: dict[str, str] = {}
        self.failing: dict[str, set[str]] = {}
        self.told: set[str] = set()  # hosts whose first refused request was handed on
        self.heard: weakref.WeakSet[Request] = weakref.WeakSet()  # requests whose answer began

    @classmethod
    def of(cls, crawler: "Crawler") -> "HostHealth":
        health = _health.get(crawler)
        if health is None:
            health = _health[crawler] = cls(crawler.stats)
            crawler.signals.connect(health.headers_received, signal=signals.headers_received)
        return health

    def headers_received(self, headers: Headers, body_length: Any, request: Request, spider: Any) -> None:
        self.heard.add(request)

    def failed(self, host: str, url: str, kind: str) -> None:
        failing = self.failing.setdefault(host, set())
        failing.add(url)
        if len(failing) >= DOWN_AFTER and host not in self.down:
            self.down[host] = f"{len(failing)} URLs in a row failed: {kind}"

    def answered(self, host: str) -> None:
        self.failing.pop(host, None)

    def refuse(self, host: str) -> HostDown:
        """What refuses a request for ``host``, which is down (the first one says so)."""
        self.stats.inc_value("hosts/deferred")
        first = host not in self.told
        if first:
            self.told.add(host)
            self.stats.inc_value("hosts/down")
        return HostDown(host, self.down[host], first=first)


def request_host(request: Request) -> str:
    """The host the blog names, not the ``--map-host`` mirror a request was sent to."""
    mapped = request.meta.get(MAPPED)
    return host_of(mapped[0] if mapped and mapped[1] == request.url else request.url)


class _HealthMiddleware:
    """A downloader middleware that reads or writes the run's ``HostHealth``."""

    def __init__(self, crawler: "Crawler"):
        self.health = HostHealth.of(crawler)

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> Self:
        return cls(crawler)


class HostDownMiddleware(_HealthMiddleware):
    """First of all: a request for a host that is down is refused, never looked up nor queued."""

    def process_request(self, request: Request) -> None:
        host = request_host(request)
        if host in self.health.down:
            raise self.health.refuse(host)


class HostFailuresMiddleware(_HealthMiddleware):
    """Just before retries: counts each failure to reach a host, and each answer from it."""

    def process_response(self, request: Request, response: Response) -> Response:
        self.health.answered(request_host(request))
        return response

    def process_exception(self, request: Request, exception: Exception) -> None:
        if isinstance(exception, IgnoreRequest):
            return  # refused here, not by the host
        kind = network_kind(exception)
        if kind in UNREACHED or (kind == "timeout" and request not in self.health.heard):
            self.health.failed(request_host(request), request.url, kind)
