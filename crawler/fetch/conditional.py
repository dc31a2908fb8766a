"""Downloader middleware: conditional requests, raw captures, Retry-After.

Every request for a URL fetched before carries its validators
(``If-None-Match``, ``If-Modified-Since``); a ``304`` is answered with the
stored body, flagged unchanged, so the spider can skip it. Every body is
captured (``archive.tables.captures``; the HTML a browser rendered from a page, beside it).
Hosts whose validators lie are found and noted with the reason; their pages are fetched in
full and compared by body hash instead. A feed still fresh by its ``Cache-Control``/``Expires`` is not
requested at all. A run that resumes an interrupted one reads what that run fetched from
its captures, without asking again. A document (robots.txt, a seed, a feed, a sitemap) is
fetched once per run: every later request for it, from whichever source, is
answered with the first answer. A ``429``/``503`` with ``Retry-After`` pauses the host for
that long (up to ``ARCHIVE_RETRY_AFTER_MAX`` seconds; beyond, the host is
left alone until then, in this run and the next ones).
"""

import logging
import time
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.responsetypes import responsetypes
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import task

from archive.core.db import utcnow
from archive.core.urls import host_of
from archive.tables.captures import body_sha256, latest_capture, save_capture
from archive.tables.revisit import get_fetch, get_host, in_future, later, note_host, save_fetch

from crawler.discover.feeds import looks_like_feed
from crawler.meta import MAPPED, RENDER, REVALIDATE, SHA, STATE, UNCHANGED
from crawler.store.archive_store import ArchiveStore

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

DROPPED_HEADERS = {"content-encoding", "content-length", "transfer-encoding"}
KEPT_META = (UNCHANGED, SHA, STATE, f"{STATE}_url")  # what a document's later requests get from its first
KEPT_STATUSES = (200, 404, 410)  # answers worth repeating within a run (a 5xx is retried instead)
FUTURE_SLACK = 300  # seconds of clock skew forgiven to Last-Modified


class ConditionalMiddleware:
    def __init__(self, crawler: "Crawler", retry_after_max: float):
        self.crawler = crawler
        self.store = ArchiveStore.of(crawler)
        self.retry_after_max = retry_after_max
        self.paused: dict[str, float] = {}  # host -> monotonic time it may be asked again
        self.hosts: dict[str, dict[str, Any]] = {}
        self.documents: dict[str, tuple[Response, dict[str, Any]]] = {}  # URL -> its answer in this run

    @classmethod
    def from_crawler(cls, crawler: "Crawler") -> "ConditionalMiddleware":
        return cls(crawler, crawler.settings.getfloat("ARCHIVE_RETRY_AFTER_MAX"))

    @property
    def full(self) -> bool:
        return getattr(self.crawler.spider, "mode", "") == "full"

    def _host(self, host: str) -> dict[str, Any]:
        if host not in self.hosts:
            self.hosts[host] = get_host(self.store.db, host)
        return self.hosts[host]

    # -- requests ------------------------------------------------------------

    async def process_request(self, request: Request) -> Response | None:
        url = request.meta[MAPPED][0] if MAPPED in request.meta else request.url
        if _document(request) and url in self.documents:
            response, meta = self.documents[url]
            request.meta.update(meta)
            self.crawler.stats.inc_value("revisit/same_run")
            return response.replace(request=request, flags=["cached"])
        host = host_of(url)
        wait = self.paused.get(host, 0) - time.monotonic()
        if wait > 0:
            from twisted.internet import reactor  # the one Scrapy installed

            await maybe_deferred_to_future(task.deferLater(reactor, wait))
        not_before = self._host(host).get("not_before")
        if in_future(not_before):
            raise IgnoreRequest(f"{host} asked not to be fetched before {not_before} (Retry-After)")
        if request.meta.get(RENDER):
            return None  # a browser's answer is the page as its scripts left it: asked in full, never revalidated
        if request.meta.get(f"{STATE}_url") == url:
            return None  # the same request again, mapped to another host
        state = get_fetch(self.store.db, url)
        request.meta[STATE], request.meta[f"{STATE}_url"] = state, url
        if not state or not state["sha256"] or self.full:
            return None
        since = _resumed_since(request)
        # fetched by the interrupted run this one resumes, or a feed still fresh: not asked again
        known = "resumed" if since and (state["checked_at"] or "") >= since else \
            "fresh" if in_future(state["fresh_until"]) else None
        if known:
            cached = self._cached(request, url, state)
            if cached is not None:
                self.crawler.stats.inc_value(f"revisit/{known}")
                return cached
        if request.meta.get(REVALIDATE) or self._host(host)["validators"] == "broken":
            return None
        if state["etag"]:
            request.headers["If-None-Match"] = state["etag"]
        if state["last_modified"]:
            request.headers["If-Modified-Since"] = state["last_modified"]
        if state["etag"] or state["last_modified"]:
            self.crawler.stats.inc_value("revisit/conditional")
        return None

    # -- responses -----------------------------------------------------------

    def process_response(self, request: Request, response: Response) -> Request | Response:
        answer = self._answer(request, response)
        if isinstance(answer, Response) and answer.status in KEPT_STATUSES and _document(request):
            meta = {k: request.meta[k] for k in KEPT_META if k in request.meta}
            self.documents.setdefault(answer.url, (answer, meta))
        return answer

    def _answer(self, request: Request, response: Response) -> Request | Response:
        if "cached" in response.flags:
            return response
        self.crawler.stats.inc_value("revisit/requests")  # one per request that reached a server
        if response.status in (429, 503) and response.headers.get("Retry-After"):
            return self._retry_after(request, response)
        state = request.meta.get(STATE) if request.meta.get(f"{STATE}_url") == response.url else None
        if response.status == 304:
            cached = self._cached(request, response.url, state) if state and state["sha256"] else None
            if cached is None:
                return response
            self.crawler.stats.inc_value("revisit/not_modified")
            fields: dict[str, Any] = {"checked_at": utcnow()}
            if response.headers.get("ETag"):
                fields["etag"] = _header(response, "ETag")
            self.store.write(save_fetch, response.url, **fields)
            return cached
        sha = body_sha256(response.body)
        if "playwright" in response.flags:  # rendered: a capture beside its HTTP answer's, which keeps its validators
            self.store.write(save_capture, url=response.url, status=response.status, headers=response_headers(response),
                             body=response.body, source_id=request.meta.get("source_id"),
                             run_id=self.crawler.stats.get_value("archive/run_id"), sha=sha, fetched_via="browser",
                             held=len(response.body))
            return response
        self.store.write(
            save_capture,
            url=response.url,
            status=response.status,
            headers=response_headers(response),
            body=response.body,
            source_id=request.meta.get("source_id"),
            run_id=self.crawler.stats.get_value("archive/run_id"),
            sha=sha,
            held=len(response.body),
        )
        if response.status != 200:
            # with its source: a cluster job's plan holds the source's rows (a usual feed path's 404 among them)
            self.store.write(save_fetch, response.url, source_id=request.meta.get("source_id"),
                             status=response.status, checked_at=utcnow())
            return response
        etag, modified = _header(response, "ETag"), _header(response, "Last-Modified")
        self._check_validators(response, state, sha, etag, modified)
        self.store.write(
            save_fetch,
            response.url,
            source_id=request.meta.get("source_id"),
            status=200,
            etag=etag,
            last_modified=modified,
            sha256=sha,
            fetched_at=utcnow(),
            checked_at=utcnow(),
            fresh_until=_fresh_until(response) if looks_like_feed(response.body, _header(response, "Content-Type") or "") else None,
        )
        request.meta[SHA] = sha
        if state and state["sha256"] == sha and state["processed"] == sha:
            request.meta[UNCHANGED] = "same body"
            self.crawler.stats.inc_value("revisit/same_body")
        return response

    def _cached(self, request: Request, url: str, state: dict[str, Any]) -> Response | None:
        """The stored body of ``url`` as a response, flagged ``cached``."""
        capture = latest_capture(self.store.db, url, http=True)
        if capture is None or capture["body"] is None:
            return None
        headers = {k: v for k, v in capture["headers"].items() if k not in DROPPED_HEADERS}
        cls = responsetypes.from_args(headers=headers, url=url, body=capture["body"])
        request.meta[SHA] = capture["sha256"]
        if state["processed"] == capture["sha256"]:
            request.meta[UNCHANGED] = "not modified"
        return cls(url=url, status=200, headers=headers, body=capture["body"], request=request, flags=["cached"])

    def _check_validators(
        self, response: Response, state: dict[str, Any] | None, sha: str, etag: str | None, modified: str | None
    ) -> None:
        """Note the host when its validators cannot be trusted, with the reason."""
        reason = None
        modified_at = _http_date(modified)
        date = _http_date(_header(response, "Date")) or datetime.now(timezone.utc)
        if modified_at and (modified_at - date).total_seconds() > FUTURE_SLACK:
            reason = f"Last-Modified in the future ({modified}) at {response.url}"
        elif state and state["sha256"] == sha and etag and state["etag"] and etag != state["etag"]:
            reason = f"ETag changes although the body does not, at {response.url}"
        elif state and state["sha256"] == sha and modified and state["last_modified"] and modified != state["last_modified"]:
            reason = f"Last-Modified changes although the body does not, at {response.url}"
        elif state and state["sha256"] and state["sha256"] != sha and etag and etag == state["etag"]:
            reason = f"the same ETag for a changed body (a 304 would hide the change), at {response.url}"
        elif state and state["sha256"] and state["sha256"] != sha and modified and modified == state["last_modified"] and not etag:
            reason = f"the same Last-Modified for a changed body (a 304 would hide the change), at {response.url}"
        host = host_of(response.url)
        if reason and self._host(host)["validators"] != "broken":
            logger.warning("validators of %s cannot be trusted: %s; comparing body hashes instead", host, reason)
            self.store.write(note_host, host, validators="broken", reason=reason)
            self.hosts[host] = {**self._host(host), "validators": "broken", "reason": reason}
            self.crawler.stats.inc_value("revisit/broken_validators")

    def _retry_after(self, request: Request, response: Response) -> Request | Response:
        seconds = _retry_seconds(_header(response, "Retry-After") or "")
        host = host_of(response.url)
        tries = request.meta.get("archive_retry_after", 0)
        if seconds is None:
            return response
        if seconds <= self.retry_after_max and tries < self.crawler.settings.getint("RETRY_TIMES"):
            logger.info("%s answered %s, Retry-After %.0f s: waiting", host, response.status, seconds)
            self.paused[host] = max(self.paused.get(host, 0), time.monotonic() + seconds)
            self.crawler.stats.inc_value("revisit/retry_after")
            retry = request.replace(dont_filter=True)
            retry.meta["archive_retry_after"] = tries + 1
            return retry
        not_before = later(seconds)
        self.store.write(note_host, host, not_before=not_before)
        self.hosts[host] = {**self._host(host), "not_before": not_before}
        return response


def _document(request: Request) -> bool:
    """robots.txt, a source's own URL, a feed or a sitemap: read by every source that names it."""
    return bool(request.meta.get("discovery") or request.meta.get("dont_obey_robotstxt"))


def _header(response: Response, name: str) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None


def response_headers(response: Response) -> dict[str, str]:
    """The response's headers by lower-case name, repeated ones joined."""
    return {
        k.decode("latin-1").lower(): b", ".join(v).decode("latin-1")
        for k, v in response.headers.items()
    }


def _http_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _retry_seconds(value: str) -> float | None:
    """Seconds to wait from a ``Retry-After`` value: a number or an HTTP date."""
    value = value.strip()
    if value.isdigit():
        return float(value)
    when = _http_date(value)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds()) if when else None


def _resumed_since(request: Request) -> str | None:
    """When the interrupted run that the request's source resumes began (``SourcePlan.resumed_since``)."""
    plan = getattr(request.cb_kwargs.get("state"), "plan", None)
    return getattr(plan, "resumed_since", None)


def _fresh_until(response: Response) -> str | None:
    """Until when ``Cache-Control: max-age`` or ``Expires`` says the response is fresh."""
    control = (_header(response, "Cache-Control") or "").lower()
    if "no-cache" in control or "no-store" in control:
        return None
    for part in control.split(","):
        name, _, value = part.strip().partition("=")
        if name == "max-age" and value.strip().isdigit():
            age = int(_header(response, "Age") or 0) if (_header(response, "Age") or "").isdigit() else 0
            return later(int(value) - age) if int(value) > age else None
    expires = _http_date(_header(response, "Expires"))
    if expires and expires > datetime.now(timezone.utc):
        return expires.strftime("%Y-%m-%dT%H:%M:%SZ")
    return None
