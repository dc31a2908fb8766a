"""The ``blog`` spider: finds every post of a blog through its feeds, sitemaps and pages.

One source is one blog: a home page (its folder is the scope), a feed or a
sitemap. Feeds and sitemaps are read first; pages wait until they are, so
that every page is judged knowing which URLs the feeds list.
"""

import codecs
import gzip
import io
import re
from collections.abc import AsyncIterator, Iterator
from functools import cached_property, partial
from itertools import islice
from typing import Any
from urllib.parse import urljoin, urlsplit

from parsel import Selector
from protego import Protego
from scrapy import Request, Spider, signals
from scrapy.exceptions import DontCloseSpider, DownloadCancelledError, IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse, Response, TextResponse
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.sitemap import Sitemap
from twisted.python.failure import Failure
from w3lib.encoding import html_to_unicode, http_content_type_encoding
from w3lib.html import get_base_url

from archive import ensure_sources, find_sources
from archive.core.urls import HASH_ROUTE, feed_item_url, host_of, parse_url, url_key
from archive.core.xmlsafety import XmlEntitiesError, check_entities
from archive.tables.captures import body_sha256
from archive.tables.media import (
    DEFERRED,
    LISTED,
    OK,
    THEME,
    mark_theme_media,
    media_states,
    shown_images,
    sniff_image,
    source_media_bytes,
    theme_media,
    unarchived_images,
)
from archive.tables.revisit import finish_source_crawl, get_host, in_future, start_source_crawl

from crawler.discover.feeds import FeedError, item_id, looks_like_feed, parse_feed
from crawler.discover.incremental import feed_probes, load_plan, sitemap_lastmod
from crawler.discover.platforms import PLATFORM_ORIGINS, api_resource, listing_for
from crawler.discover.platforms.listing import Listed, Unavailable
from crawler.extract.article_media import page_images
from crawler.extract.pool import ExtractionFailed, ExtractionPool
from crawler.extract.post_page import PostPage
from crawler.fetch.conditional import response_headers
from crawler.fetch.hostdown import HostDown
from crawler.fetch.media_ledger import POSTS, MediaRefused, ledger_for
from crawler.fetch.middlewares import NETWORK_FAILURES, TooLarge, network_kind
from crawler.fetch.stopping import NotSent
from crawler.fetch.watchdog import Stalled
from crawler.items import BlogPost, CrawlError, MediaFile, PageRecord, PostAlias, PostGone, SourceUpdate
from crawler.judge.encoding import html_encoding
from crawler.judge.pages import (
    HOME,
    SectionStats,
    article_marks,
    below,
    dated,
    decide,
    in_scope,
    listing_links,
    listing_reason,
    read_evidence,
    site_page_entry,
    teasers,
    url_shape,
)
from crawler.judge.render import SHELL_CHARS, render_reason, visible_text
from crawler.meta import HTTP_ANSWER, MAPPED, RENDER, RENDER_FAILED, RENDER_MAY, REVALIDATE, SHA, UNCHANGED
from crawler.spiders.spill import SpillDict, SpillSet
from crawler.spiders.state import LEARNED, SourceState
from crawler.store.archive_store import ArchiveStore

FEED_TYPES = ("application/rss+xml", "application/atom+xml", "application/feed+json", "application/json")
DISCOVERY_PRIORITY = 100
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
READ_HEAD, READ_TAIL = 2_000_000, 250_000  # bytes of a huge page read to judge it (see _read_part)
BASE_CHARS = 4096  # where a page's <base href> is looked for, as Scrapy's get_base_url does
LATE_ENTRY = "late_entry"  # meta: a post fetched again for a feed entry read after its extraction
LISTING = "platform_listing"  # meta: a request of a platform's listing (crawler.discover.platforms)
# Publish dates that carry their time; others (a visible date, <time> with a day only...) may lack it.
TIMED_ORIGINS = {"feed", "JSON-LD datePublished", "article:published_time", *PLATFORM_ORIGINS}
TIME_OF_DAY = re.compile(r"\d:\d\d")
BODY_KINDS = ("too-large", "truncated")  # a body refused for what it is, not a host unreachable


class BlogSpider(Spider):
    name = "blog"

    def __init__(self, url: str | None = None, max_pages: str | None = None, mode: str | None = None,
                 sources: str | None = None, media: str | None = None, render: str | None = None,
                 media_max_mb: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.seed_urls = url.split() if url else []
        # ids of the sources to crawl (blogarchive crawl --processes N splits them)
        self.source_ids = {int(i) for i in sources.split(",")} if sources else None
        # the run's own options (blogarchive crawl --max-pages, --media, --media-max-mb): they win over a source's settings
        self.max_pages_arg = int(max_pages) if max_pages else None
        self.media_arg = media
        self.media_max_mb_arg = float(media_max_mb) if media_max_mb else None
        self.render_arg = render
        self.trusted_hosts: set[str] = set()  # hosts the user typed: see crawler.fetch.safety
        self.mode = mode or "incremental"
        if self.mode not in ("incremental", "recheck", "full"):
            raise ValueError(f"mode is incremental, recheck or full, not {mode!r}")
        self.states: list[SourceState] = []

    async def start(self) -> AsyncIterator[Request | CrawlError | SourceUpdate]:
        db = self.store.db
        if self.seed_urls:
            sources = self.store.write_now(ensure_sources, self.seed_urls)
        else:
            sources = [s for s in find_sources(db) if self.source_ids is None or s["id"] in self.source_ids]
        if not sources:
            self.logger.warning("no sources to crawl: give a URL or add sources first")
        for source in sources:
            not_before = get_host(db, host_of(source["url"]))["not_before"]
            if in_future(not_before):
                yield CrawlError(source["id"], source["url"], "deferred", f"the host asked to be left alone until {not_before} (Retry-After)")
                continue
            state = self._state_for(source)
            twins = state.aliases - {host_of(source["scope"]), *_www_twin(host_of(source["scope"]))}
            if twins:
                yield SourceUpdate(state.id, hosts=sorted(twins))
            # the due posts wait, as every page does, until the seed and the feeds are read
            yield self._discovery(state, source["url"], self.parse_seed, seed=True)
            for url in state.plan.due if state.plan else []:
                for request in self._page(state, url):
                    yield request

    def _state_for(self, source: dict[str, Any]) -> SourceState:
        settings = self.crawler.settings
        host_map = {k.lower(): v.rstrip("/") for k, v in settings.getdict("ARCHIVE_MAP_HOSTS").items()}
        host = host_of(source["scope"])
        aliases = {host, *_www_twin(host)}
        if host in host_map:
            aliases |= {h for h, base in host_map.items() if base == host_map[host]}
        parts = urlsplit(source["scope"])
        state = SourceState(
            id=source["id"],
            url=source["url"],
            scope=source["scope"],
            origin=f"{parts.scheme}://{parts.netloc}",
            aliases=aliases,
            bases={host_map[h] for h in aliases if h in host_map},
            max_pages=self.max_pages_arg or source.get("max_pages") or settings.getint("ARCHIVE_MAX_PAGES"),
            max_depth=settings.getint("ARCHIVE_MAX_DEPTH"),
            max_links=settings.getint("ARCHIVE_MAX_LINKS"),
            max_query_variants=settings.getint("ARCHIVE_MAX_QUERY_VARIANTS"),
            sections=SectionStats(min_share=settings.getfloat("ARCHIVE_SECTION_MIN_SHARE")),
            seen=SpillSet(settings.getint("ARCHIVE_MEMORY_KEYS")),
            parsed=SpillDict(settings.getint("ARCHIVE_MEMORY_KEYS")),
            entries=SpillDict(settings.getint("ARCHIVE_MEMORY_KEYS")),
            listed=SpillDict(settings.getint("ARCHIVE_MEMORY_KEYS")),
            dated_entries=SpillSet(settings.getint("ARCHIVE_MEMORY_KEYS")),
            lacking=SpillDict(settings.getint("ARCHIVE_MEMORY_KEYS")),
            unsure=SpillDict(settings.getint("ARCHIVE_MEMORY_KEYS")),
            plan=load_plan(self.store.db, source, mode=self.mode, policy=settings.get("ARCHIVE_REVISIT")),
            media=ledger_for(settings, self.media_arg or source.get("media"), theme=theme_media(self.store.db, source["id"]),
                             max_file_mb=self.media_max_mb_arg or source.get("media_max_mb"),
                             source_bytes=source_media_bytes(self.store.db, source["id"])),
            render=self.render_arg or source.get("render") or settings.get("ARCHIVE_RENDER"),
            learned=source.get("rendered"),
        )
        state.seen.add(url_key(source["url"]))
        self.trusted_hosts |= aliases
        self.store.write(start_source_crawl, state.id)
        self.states.append(state)
        return state

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> "BlogSpider":
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.spider_idle, signal=signals.spider_idle)
        return spider

    def spider_idle(self) -> None:
        """A complete crawl has walked every listing: the known posts that nothing listed are checked at once."""
        requests = []
        for state in self.states:
            plan = state.plan
            if not plan or not plan.complete or state.unlisted_checked or state.budget_cut or plan.failed:
                continue
            state.unlisted_checked = True
            for url, post in plan.posts.items():
                if not post["gone_at"] and url_key(url) not in state.seen and url_key(url) not in state.parsed:
                    requests += [r for r in self._page(state, url) if isinstance(r, Request)]
        if not requests:  # the pages are all read: the evidence of which images are the theme's is whole
            requests = [r for state in self.states for r in self._media_requests(state)]
        for request in requests:
            self.crawler.engine.crawl(request)
        if requests:
            raise DontCloseSpider

    def _media_requests(self, state: SourceState) -> Iterator[Request]:
        """The images the source's posts show that are not the theme's nor archived already."""
        assert state.media is not None
        theme = state.media.settle()
        if theme:
            self.store.write(mark_theme_media, state.id, theme)
            self.crawler.stats.inc_value("media/theme", len(theme))
        wanted = state.media.take()
        if state.media.mode == "all" and not state.media.caught_up:
            state.media.caught_up = True
            # listed before, not fetched (a crawl interrupted, --media metadata, import warc), deferred (its
            # host not reached); in a --full run, as in a first crawl, every image not archived (one that failed
            # too: a 404 may be there now); in a --recheck run every archived image, revalidated (a conditional request each)
            if self.mode == "full":
                wanted = unarchived_images(self.store.db, state.id) | wanted
            else:
                wanted = shown_images(self.store.db, state.id, LISTED) | shown_images(self.store.db, state.id, DEFERRED) | wanted
            if self.mode == "recheck":
                wanted |= shown_images(self.store.db, state.id, OK)
        known = media_states(self.store.db, list(wanted))
        if self.mode == "recheck":
            known = {url: status for url, status in known.items() if status != OK}
        for url, posts in wanted.items():
            # the theme's as the archive may not say yet (its write is queued behind this read)
            if known.get(url) not in (OK, THEME) and url not in state.media.theme:
                self.crawler.stats.inc_value("media/requests")
                yield state.media.request(url, posts, state.id, callback=self.parse_media, errback=self.on_media_error,
                                          cb_kwargs={"state": state, "url": url})

    @cached_property
    def extraction(self) -> ExtractionPool:
        """The crawl's extraction workers (the ``crawler.extract.pool.ExtractionPool`` extension)."""
        pool = self.crawler.get_extension(ExtractionPool)
        if pool is None:
            raise NotConfigured("crawler.extract.pool.ExtractionPool is not in EXTENSIONS")
        return pool

    @cached_property
    def store(self) -> ArchiveStore:
        """The crawl's connection to the archive (``crawler.store.archive_store``)."""
        return ArchiveStore.of(self.crawler)

    def closed(self, reason: str) -> None:
        for state in self.states:
            assert state.plan is not None
            complete = reason == "finished" and state.plan.complete and not (state.plan.failed or state.budget_cut)
            self.store.write(finish_source_crawl, state.id, finished=reason == "finished", complete=complete)
            self.crawler.stats.inc_value("archive/bad_urls", state.bad_urls)
            for remembered in (state.seen, state.parsed, state.entries, state.listed, state.dated_entries, state.lacking,
                               state.unsure):
                self.crawler.stats.inc_value("archive/keys_on_disk", remembered.spilled)
                remembered.close()

    # -- requests ---------------------------------------------------------

    def _discovery(self, state: SourceState, url: str, callback: Any, *, probe: bool = False, **meta: Any) -> Request:
        state.pending += 1
        state.documents.add(url_key(url))  # never requested again as a page
        return Request(
            url,
            callback=callback,
            errback=self.on_error,
            cb_kwargs={"state": state},
            priority=DISCOVERY_PRIORITY,
            meta={"source_id": state.id, "discovery": True, "probe": probe, **meta},
            dont_filter=True,
        )

    def _page(self, state: SourceState, url: str, depth: int = 0) -> Iterator[Any]:
        """A request for an in-scope page, held while feeds are still being read."""
        key = url_key(url)
        if key in state.seen or key in state.documents:
            return
        state.seen.add(key)
        reason = state.trap(url, depth)
        if reason is None and len(state.seen) > state.max_pages:
            reason = f"the page budget of {state.max_pages} was reached"
            state.budget_cut = True
        if reason:
            state.cuts[reason] += 1
            if state.cuts[reason] == 1:  # recorded once per reason; the total is in the stats
                yield CrawlError(state.id, url, "cut", f"not fetched: {reason}")
            self.crawler.stats.inc_value("archive/cut")
            return
        # state.seen has made this request unique. Scrapy's duplicate filter would
        # also drop where a redirect leads when that page was fetched already (its
        # alias lost), and would keep a fingerprint of every request of the blog.
        request = Request(
            url,
            callback=self.parse_page,
            errback=self.on_error,
            cb_kwargs={"state": state},
            meta={"source_id": state.id, RENDER_MAY: True},
            dont_filter=True,
        )
        if state.pending:
            state.held.append(request)
        else:
            yield request

    def _again(self, state: SourceState, url: str) -> Request:
        """The page once more, for what was read after it was judged: a feed entry, or a listing's link."""
        return Request(url, callback=self.parse_page, errback=self.on_error, cb_kwargs={"state": state},
                       meta={"source_id": state.id, REVALIDATE: True, LATE_ENTRY: True}, dont_filter=True)

    def _render(self, state: SourceState, response: Response, why: str) -> Request:
        """The page again, from the browser (crawler.fetch.render), its HTTP answer kept in case it cannot be rendered."""
        return Request(response.url, callback=self.parse_page, errback=self.on_error, cb_kwargs={"state": state},
                       meta={"source_id": state.id, "depth": response.meta.get("depth", 0), RENDER: why,
                             HTTP_ANSWER: (response.status, response.headers, response.body)}, dont_filter=True)

    def _doubt(self, state: SourceState, response: Response) -> Iterator[Request]:
        """The page again, without validators, when its feed entry says it changed since."""
        url = state.own(response.url) or response.url
        if state.plan and not response.meta.get(REVALIDATE) and state.plan.doubts(url, state.entries.get(url_key(url))):
            yield Request(
                url,
                callback=self.parse_page,
                errback=self.on_error,
                cb_kwargs={"state": state},
                meta={"source_id": state.id, REVALIDATE: True},
                dont_filter=True,
            )

    def _bad_urls(self, state: SourceState, url: str) -> Iterator[CrawlError]:
        """One row per source, where the first string that is no URL was met (the stats count them all)."""
        if state.first_bad_url is not None and not state.bad_url_told:
            state.bad_url_told = True
            yield CrawlError(state.id, url, "bad-url", f"not a URL, taken as no link: {state.first_bad_url[:200]!r} "
                                                       "(archive/bad_urls in the crawl's stats counts them all)")

    def _discovery_done(self, state: SourceState) -> Iterator[Request]:
        state.pending -= 1
        if state.pending == 0:
            held, state.held = state.held, []
            yield from held

    # -- callbacks --------------------------------------------------------

    async def parse_seed(self, response: Response, state: SourceState) -> AsyncIterator[Any]:
        # The user typed the seed: where it redirects to is the same blog.
        state.aliases.add(host_of(response.url))
        state.links.clear()  # resolved before that host was known
        body = response.body
        if looks_like_feed(body, _content_type(response)):
            yield SourceUpdate(state.id, kind="feed", feeds=[state.url])
            for output in self.parse_feed(response, state):
                yield output
        elif b"<urlset" in body[:2048] or b"<sitemapindex" in body[:2048] or body[:2] == b"\x1f\x8b":
            yield SourceUpdate(state.id, kind="sitemap", sitemaps=[state.url])
            for output in self.parse_sitemap(response, state):
                yield output
        elif isinstance(response, TextResponse):
            response = _decoded(response)
            for output in self._discover_from_home(response, state):
                yield output
            async for output in self.parse_page(response, state):
                yield output
            for output in self._discovery_done(state):
                yield output
        else:
            yield CrawlError(state.id, response.url, "seed", "neither an HTML page, a feed nor a sitemap")
            for output in self._discovery_done(state):
                yield output

    def _discover_from_home(self, response: TextResponse, state: SourceState) -> Iterator[Any]:
        part, base = _read_part(response)
        sel = Selector(text=part, type="html")
        feeds = state.feeds = _declared_feeds(base, state, sel)
        state.home_unchanged = "cached" in response.flags or bool(response.meta.get(UNCHANGED))
        yield SourceUpdate(state.id, kind="home", feeds=feeds)
        # every post when resuming too: the run cut short may have archived a later change than one it left
        state.listing = listing_for(self.store.db, state.id, response_headers(response), sel, base, state.own,
                                    whole=not state.plan or state.plan.complete or state.plan.resume)
        if state.listing is not None:  # the platform's listing, and the feeds and sitemaps only if it fails
            state.home = state.own(response.url)
            for url in state.listing.start():
                yield self._listing_request(state, url)
            return
        yield from self._discover_declared(state, state.own(response.url))

    def _discover_declared(self, state: SourceState, home: str | None) -> Iterator[Request]:
        """The feeds the home page declares (or those at the usual paths), and robots.txt's sitemaps."""
        for feed in state.feeds:
            yield self._discovery(state, feed, self.parse_feed, declared_by=home)
        if not state.feeds:
            for url in feed_probes(self.store.db, state.scope, home_unchanged=state.home_unchanged,
                                   full=self.mode == "full"):
                yield self._discovery(state, url, self.parse_feed, probe=True)
        yield self._discovery(state, urljoin(state.origin, "/robots.txt"), self.parse_robots, probe=True)

    def parse_listing(self, response: Response, state: SourceState) -> Iterator[Any]:
        listing = state.listing
        if listing is not None:  # None: it failed already, and the blog is read as any other
            try:
                more = listing.read(response.meta[LISTING], response.status, response_headers(response), response.body)
            except Unavailable as e:
                self.logger.info("%s: read from its pages instead", e)
                yield from self._listing_failed(state)
            else:
                for url in more:
                    yield self._listing_request(state, url)
                if listing.done():
                    yield from self._listed(state, listing.result())
        yield from self._discovery_done(state)

    def _listing_request(self, state: SourceState, url: str) -> Request:
        request = self._discovery(state, url, self.parse_listing)
        request.meta[LISTING] = url  # the URL as the listing asked for it (a --map-host mirror answers another)
        return request

    def _listing_failed(self, state: SourceState) -> Iterator[Request]:
        """A platform's API that cannot be read (off, 401, 403, 404): the blog is discovered from its HTML."""
        if state.listing is not None:
            state.listing = None
            yield from self._discover_declared(state, state.home)

    def _listed(self, state: SourceState, listed: Listed) -> Iterator[Any]:
        """A platform's listing read: its entries are the posts' evidence; the new and changed posts, and
        the known ones it no longer lists, are fetched; in an incremental run the known posts it vouches
        are unchanged are not (the revisit policy's are dropped), unless ``--recheck`` asked for them."""
        plan = state.plan
        wanted = []
        for url, entry in listed.entries.items():
            if not in_scope(url, state.scope):
                continue
            state.entries[url_key(url)] = entry
            state.sections.add(url_shape(url, state.scope), dated=bool(entry.get("published")))
            state.note_date(entry.get("published_raw"))
            if not plan or plan.wants_entry(url, entry.get("updated")):
                wanted.append(url)
        if plan and plan.mode == "incremental":  # those listed as not changed since their archived update too
            vouched = listed.unchanged | (set(listed.entries) - set(wanted))
            state.held = [r for r in state.held if state.own(r.url) not in vouched]
        wanted += sorted(listed.absent)
        for url in wanted:
            yield from self._page(state, url)

    def parse_robots(self, response: Response, state: SourceState) -> Iterator[Any]:
        text = response.body.decode("utf-8", "replace")
        sitemaps = [u for u in (state.own(s) for s in Protego.parse(text).sitemaps) if u]
        for url in sitemaps or [urljoin(state.scope, "sitemap.xml")]:
            if url_key(url) not in state.documents:
                yield self._discovery(state, url, self.parse_sitemap, probe=not sitemaps)
        yield from self._bad_urls(state, response.url)
        yield from self._discovery_done(state)

    def parse_feed(self, response: Response, state: SourceState) -> Iterator[Any]:
        if state.plan and state.plan.skip(response):
            yield from self._discovery_done(state)
            return
        try:
            feed = parse_feed(response.body, response.url, http_charset=_http_charset(response),
                              page=response.meta.get("declared_by"))
        except XmlEntitiesError as e:  # a bomb is told, even where a feed was only guessed at
            yield CrawlError(state.id, response.url, "xml-entities", f"feed not read: {e}")
            yield from self._discovery_done(state)
            return
        except FeedError as e:
            if not response.meta.get("probe"):
                yield CrawlError(state.id, response.url, "feed", str(e))
            yield from self._discovery_done(state)
            return
        self.crawler.stats.inc_value("feed/replies", len(feed["replies"]))
        if feed["replies"] and not feed["entries"]:
            # a comments feed: its entries point inside posts, and say nothing of a post's title,
            # dates, author or tags; nor is it one of the blog's feeds, nor its title the blog's name
            self.logger.debug("a feed of replies, evidence about no post: %s", response.url)
            own = state.own(response.url)
            if own and own in state.feeds:  # the home page declared it
                state.feeds.remove(own)
                yield SourceUpdate(state.id, feeds=state.feeds)
            yield from self._discovery_done(state)
            return
        feed_url = state.own(response.url)
        if feed_url and feed_url not in state.feeds and not response.meta.get("paged"):
            state.feeds.append(feed_url)
            yield SourceUpdate(state.id, feeds=state.feeds)
        if not response.meta.get("of_a_listing"):  # a category's feed is named after the category
            state.site.note_name(feed["title"])
        for warning in feed["warnings"]:
            yield CrawlError(state.id, response.url, "feed", warning)
        new = 0
        listed = []
        before = state.plan.previous_entries(response, state.own) if state.plan else None
        for entry in feed["entries"]:
            if entry["url"] is None:
                yield from self._feed_only_post(state, feed_url or response.url, entry)
                continue
            url = state.own(entry["url"])
            if url and in_scope(url, state.scope):
                listed.append(url)  # an entry another feed gave first is listed by this one too
            if url and in_scope(url, state.scope) and url_key(url) not in state.entries:
                new += 1
                state.entries[url_key(url)] = entry
                state.sections.add(url_shape(url, state.scope), dated=bool(entry.get("published")))
                state.note_date(entry.get("published_raw"))
                changed = bool(state.plan and state.plan.entry_changed(url, entry, before))
                if state.plan and state.plan.content_edited(url, entry, before):
                    state.feed_edits.add(url_key(url))
                if not state.plan or changed or state.plan.wants_entry(url, entry.get("updated")):
                    yield from self._page(state, url)
                flags = state.lacking.get(url_key(url))
                if flags and brings(entry, flags):  # extracted before this feed was read
                    del state.lacking[url_key(url)]
                    yield self._again(state, url)
                elif "feed" in state.unsure.get(url_key(url), ()):  # judged not a post before this feed was read
                    del state.unsure[url_key(url)]
                    yield self._again(state, url)
        for url in state.plan.missing(response, listed, state.own, feed=feed, before=before) if state.plan else []:
            yield from self._page(state, url)
        for link in feed["next"]:
            url = state.own(link, response.url)
            if url and url_key(url) not in state.seen:
                state.seen.add(url_key(url))
                yield self._discovery(state, url, self.parse_feed)
        yield from self._bad_urls(state, response.url)
        if feed["wordpress"] and new and feed_url:
            # WordPress pages its feeds with ?paged=N; stop at the first page with nothing new.
            page = response.meta.get("paged", 1) + 1
            base = response.meta.get("paged_base", feed_url)
            yield self._discovery(state, f"{base}{'&' if '?' in base else '?'}paged={page}", self.parse_feed,
                                  probe=True, paged=page, paged_base=base)
        yield from self._discovery_done(state)

    def _feed_only_post(self, state: SourceState, feed_url: str, entry: dict[str, Any]) -> Iterator[Any]:
        """An entry with no link (and no guid that is a permalink): its content is the post, archived
        from what the feed says at the feed's URL with its guid as fragment; without content it is
        evidence for nothing."""
        from crawler.extract.post import extract_post, feed_page  # slow to import (trafilatura): only for such an entry

        guid = item_id(entry)
        url = feed_item_url(feed_url, guid)
        body = entry.get("content") or entry.get("summary") or ""
        post = (extract_post(url, feed_page(body), feed_entry={**entry, "guid": guid, "content": body})
                if body.strip() else None)
        if post is None or not post.text:
            name = entry.get("title") or guid
            yield CrawlError(state.id, feed_url, "feed", f"an entry with no link and no content ({name!r}): not a post")
            return
        post.source_id = state.id
        yield post

    def parse_sitemap(self, response: Response, state: SourceState) -> Iterator[Any]:
        body = response.body
        if body[:2] == b"\x1f\x8b":
            with gzip.GzipFile(fileobj=io.BytesIO(body)) as f:
                body = f.read(MAX_SITEMAP_BYTES)
        unchanged = bool(state.plan and state.plan.skip(response))
        try:
            check_entities(body)  # Scrapy's parser expands none, but a bomb is told as one
            sitemap = Sitemap(body)
        except XmlEntitiesError as e:
            yield CrawlError(state.id, response.url, "xml-entities", f"sitemap not read: {e}")
            yield from self._discovery_done(state)
            return
        except Exception as e:  # lxml raises several kinds on garbage
            if not response.meta.get("probe") and not unchanged:
                yield CrawlError(state.id, response.url, "sitemap", f"not a readable sitemap: {e}")
            yield from self._discovery_done(state)
            return
        # an index's own validators say nothing of its children: they are revalidated whatever it answered
        if unchanged and sitemap.type != "sitemapindex":
            yield from self._discovery_done(state)
            return
        own = state.own(response.url)
        if own and own not in state.sitemaps:
            state.sitemaps.append(own)
            yield SourceUpdate(state.id, sitemaps=state.sitemaps)
        listed = []
        for entry in sitemap:
            url = state.own(entry.get("loc", ""))
            if not url:
                continue
            if sitemap.type == "sitemapindex":
                if url_key(url) not in state.seen:
                    state.seen.add(url_key(url))
                    yield self._discovery(state, url, self.parse_sitemap)
            elif in_scope(url, state.scope):
                listed.append(url)
                if not state.plan or state.plan.wants_entry(url, sitemap_lastmod(entry), since_check=True):
                    yield from self._page(state, url)
        for url in state.plan.missing(response, listed, state.own) if state.plan else []:
            yield from self._page(state, url)
        yield from self._bad_urls(state, response.url)
        yield from self._discovery_done(state)

    async def parse_page(self, response: Response, state: SourceState) -> AsyncIterator[Any]:
        if not isinstance(response, HtmlResponse):
            return
        # a page that did not change, whose full-content feed entry did: the feed's text is the post's
        feed_edit = bool(response.meta.get(UNCHANGED)) and url_key(state.own(response.url) or response.url) in state.feed_edits
        if state.plan and state.plan.skip(response) and not feed_edit:
            for request in self._doubt(state, response):
                yield request
            return
        response = _decoded(response)
        url = state.own(response.url) or response.url
        aliases = _redirect_aliases(response, state, url)
        depth = response.meta.get("depth", 0) + 1
        # the page's tree, not cached on the response: it is let go before the page waits for a worker
        part, base = _read_part(response)
        encoding = response.encoding
        sel = Selector(text=part, type="html")
        del part
        hrefs = list(islice((h for a in sel.root.iter("a", "area") if (h := a.get("href"))), state.max_links + 1))
        rendered = "playwright" in response.flags
        if rendered and not state.hash_routes and any(HASH_ROUTE.search(urljoin(base, h)) for h in hrefs):
            state.hash_routes = True  # its scripts route by #/post: each route is a page of its own
        if len(hrefs) > state.max_links:
            yield CrawlError(state.id, url, "cut", f"more than {state.max_links} links: only the first {state.max_links} read")
            del hrefs[state.max_links:]
        links = list(dict.fromkeys(t for href in hrefs if (t := state.link(base, href, encoding))))
        for told in self._bad_urls(state, url):
            yield told
        for link_url in state.plan.select_links(links, lambda u: url_key(u) in state.seen) if state.plan else links:
            for output in self._page(state, link_url, depth):
                yield output
        if state.plan and state.plan.done_before(response, url) and not feed_edit:
            for request in self._doubt(state, response):
                yield request
            return
        via = "http"
        if rendered:
            via = f"browser: {response.meta[RENDER]}"
            if lesson := state.note_rendered(len(visible_text(sel.root)) >= SHELL_CHARS):
                yield SourceUpdate(state.id, rendered=lesson)  # the next run starts from it
        elif RENDER_FAILED in response.meta:
            via = f"http: {response.meta[RENDER_FAILED]}"
            yield CrawlError(state.id, url, "render", f"{response.meta[RENDER_FAILED]} (asked for: {response.meta[RENDER]}); "
                                                      "archived as its HTTP answer has it")
        elif state.may_render():
            entry = state.entries.get(url_key(url))
            # a listing (a tag's page of two posts, an archive) of a blog whose home page is no shell is short
            # by nature, not for want of its scripts; so is a page no feed lists as a post (a story, a stub)
            listing = listing_reason(url, state.scope)
            why = state.render_first(url)
            if not why and not (listing not in (None, HOME) and state.home_static):
                why = render_reason(sel.root, feed_text=_entry_text(entry), title=(entry or {}).get("title"),
                                    blog_has_text=state.with_text >= LEARNED and listing is None and entry is not None)
            state.home_static = state.home_static or (listing == HOME and not why)
            if why:
                self.crawler.stats.inc_value("render/needed")
                yield self._render(state, response, why)
                return
        evidence = read_evidence(sel, state.max_links, state.furniture)
        evidence.read_more = teasers(evidence, lambda href: key if (t := state.link(base, href, encoding))
                                     and (key := url_key(t)) != url_key(url) else None)
        canonical = state.own(evidence.canonical, response.url) if evidence.canonical else None
        # a theme that names the home page canonical on every page of its pagination (or on every
        # page) says nothing of which page this is: read as the home, its list of posts would be lost
        if canonical and listing_reason(canonical, state.scope) == HOME and listing_reason(url, state.scope) != HOME:
            canonical = None
        if canonical and url_key(canonical) != url_key(url) and in_scope(canonical, state.scope):
            aliases.append({"alias": url, "why": "rel=canonical"})
            state.seen.add(url_key(canonical))
            url = canonical
        # reached again through a redirect or another form (but fetched again for a late feed entry)
        if url_key(url) in state.parsed and not response.meta.get(LATE_ENTRY):
            if state.parsed[url_key(url)] == "post":
                for a in aliases:
                    yield PostAlias(state.id, a["alias"], url, a["why"])
            return
        entry = state.entries.get(url_key(url))
        if entry is None and state.plan:
            entry = state.plan.cached_entry(url, state.own, state.sections, state.scope)
        if entry and (link := state.own(entry["url"])) and link != url:  # an entry is kept under its own URL
            aliases.append({"alias": link, "why": "feed link"})
        late = response.meta.get(LATE_ENTRY)  # a page judged and learned from already
        if not late:
            state.note_date(evidence.published)
            if entry is not None:  # one time a page: its machine-readable one, else the one it writes out
                state.note_shown_time(evidence.published, entry.get("published")) \
                    or state.note_shown_time(evidence.visible_date, entry.get("published"))
        content_links = [(t, text, as_entry, with_date) for href, text, as_entry, with_date
                         in listing_links(sel.root, state.max_links) if (t := state.link(base, href, encoding))]
        judge = partial(decide, url, state.scope, evidence, sections=state.sections,
                        dated_text=dated(evidence, url),
                        posts_linked=len({url_key(t) for t, *_ in content_links if url_key(t) in state.entries}),
                        children_linked=len({url_key(t) for t, *_ in content_links if below(t, url)}))
        # a feed's entry with no date, in a URL shape that holds none of the feed's dated entries, is a
        # site page the generator's feed lists with every page (Hugo's resume, projects): no post's evidence
        in_feed = entry is not None and not site_page_entry(entry, url_shape(url, state.scope), state.sections)
        listed, listed_dated = url_key(url) in state.listed, url_key(url) in state.dated_entries
        kind, reason = judge(in_feed=in_feed, listed=listed, listed_dated=listed_dated)
        if entry is not None and not in_feed:
            reason += "; its feed entry, undated in a URL shape of no dated entry, is a site page's"
        state.parsed[url_key(url)] = kind
        if kind in ("page", "listing"):
            # a listing or a feed read later may show it after all: the page is then judged again
            unsure = []
            if not listed and judge(in_feed=in_feed, listed=True, listed_dated=True)[0] == "post":
                unsure.append("listed")
            if not in_feed and judge(in_feed=True, listed=listed)[0] == "post":
                unsure.append("feed")
            if unsure:
                state.unsure[url_key(url)] = tuple(unsure)
        if not late and kind == "post" and state.media and state.media.mode != "off":
            # only posts: a listing shows the covers of the posts it lists, the newest on many of them
            state.media.note_page(page_images(sel.root, base))
        yield PageRecord(url, state.id, kind, reason, via)
        if not late:
            state.site.note_name(evidence.site_name)
            if reason == HOME:
                state.site.note_name(evidence.title)
                state.furniture = article_marks(evidence)  # what calls its list of posts an article calls no page one
            state.site.note_page(evidence.title, evidence.headings, post=kind == "post")
        if kind == "listing":
            for own, text, as_entry, with_date in content_links:
                if not as_entry:  # a link in a sentence shows a page, it does not list it
                    continue
                if not state.listed.get(url_key(own)):
                    state.listed[url_key(own)] = text
                if with_date:
                    state.dated_entries.add(url_key(own))
                if "listed" in state.unsure.get(url_key(own), ()):
                    del state.unsure[url_key(own)]
                    yield self._again(state, own)
        if kind != "post":
            state.site.note_keywords(evidence.keywords)
            # a category's, tag's, author's or translation's own feed: metadata for the posts it lists
            for feed in _declared_feeds(base, state, sel):
                if feed not in state.feeds and url_key(feed) not in state.seen and in_scope(feed, state.scope):
                    state.seen.add(url_key(feed))
                    yield self._discovery(state, feed, self.parse_feed, of_a_listing=True, declared_by=url)
            return
        self.crawler.stats.inc_value("extract/count")
        del sel, content_links  # the tree (on a 15 MB page, 50 MB or more) is not held while the page waits
        # the page's bytes, decoded in the worker: a huge page is never held here as text too
        page = PostPage(url, response.body, encoding, feed_entry=entry, feed_edit=feed_edit, site=state.site.parts,
                        default_tz=state.default_tz, link_text=state.listed.get(url_key(url)) or None,
                        source_id=state.id, aliases=aliases)
        try:
            post = await self.extraction.extract_page(page)
        except ExtractionFailed as e:
            yield CrawlError(state.id, url, "extract", str(e))
            return
        if post is None:
            yield CrawlError(state.id, url, "extract", "judged a post, but no article text was found")
            return
        if via == "http" and post.text:
            state.with_text += 1
        if state.media:
            post.media = state.media.keep(url, post.media or [])
        if entry is None and (flags := lacks(post)):
            late = state.entries.get(url_key(url))  # read while the page was being extracted
            if late is not None and brings(late, flags):
                yield self._again(state, url)
            else:
                state.lacking[url_key(url)] = flags
        yield post

    def parse_media(self, response: Response, state: SourceState, url: str) -> Iterator[MediaFile]:
        content_type, width, height = sniff_image(response.body)
        self.crawler.stats.inc_value("media/archived")
        yield MediaFile(url, state.id, "ok", sha256=response.meta.get(SHA) or body_sha256(response.body),
                        content_type=content_type, size=len(response.body), width=width, height=height)

    def on_media_error(self, failure: Failure) -> Iterator[Any]:
        request = _failed_request(failure)
        state: SourceState = request.cb_kwargs["state"]
        url = request.cb_kwargs["url"]
        error = failure.value
        if isinstance(error, MediaRefused):
            status, message = error.status, str(error)
        elif isinstance(error, HttpError) and error.response.status == 304:
            return  # unchanged, and its body not at hand: a cluster job's plan holds no image's body
        elif isinstance(error, HttpError):
            status = message = f"HTTP {error.response.status}"
        elif isinstance(error, HostDown):
            # one row for the host, none for each image: each is asked for again by the next run
            self.crawler.stats.inc_value("media/deferred")
            yield MediaFile(url, state.id, DEFERRED)
            if error.first:
                yield CrawlError(state.id, url, "host-down", f"{error}: its images are asked for by the next run")
            return
        else:
            status, message = _error_kind(failure), _error_message(failure)
            if status == "too-large":
                message = f"larger than the cap of {round(request.meta['download_maxsize'] / (1024 * 1024), 2):g} MB: not fetched"
            elif status in NETWORK_FAILURES:  # the host may answer another day: one row, of what failed
                self.crawler.stats.inc_value("media/deferred")
                yield MediaFile(url, state.id, DEFERRED)
                yield CrawlError(state.id, url, status, f"{message} (an image shown by {request.meta[POSTS][0]}, "
                                 "asked for again by the next run)")
                return
        self.crawler.stats.inc_value("media/skipped")
        yield MediaFile(url, state.id, status.lower())
        yield CrawlError(state.id, url, "media", f"{message} (shown by {request.meta[POSTS][0]})")

    def on_error(self, failure: Failure) -> Iterator[Any]:
        if isinstance(failure.value, NotSent):
            return  # waiting for its turn when the crawl was asked to stop: the next run asks again
        request = _failed_request(failure)
        state: SourceState = request.cb_kwargs["state"]
        error = failure.value
        if request.meta.get(LISTING):  # the platform's API is off or forbidden: no error, its pages are read
            yield from self._listing_failed(state)
            yield from self._discovery_done(state)
            return
        if isinstance(error, HttpError):
            status = error.response.status
            # the known post asked for, whichever signal made it due (or where its redirect led)
            known = [u for u in (state.own(error.response.url), state.own(_original_url(request)))
                     if state.plan and u in state.plan.posts]
            if status in (404, 410) and known:
                yield PostGone(known[0], state.id)
                return
            kind, message = "http", f"HTTP {status}"
            if request.meta.get("probe") and status in (404, 410):
                kind = ""
        else:
            kind, message = _error_kind(failure), _error_message(failure)
        if kind == "robots" and not request.meta.get("discovery"):
            kind = ""  # a page robots.txt forbids is skipped by policy, not failed
        seed = bool(request.meta.get("seed"))
        if seed:
            # a body refused for what it is (a bomb) keeps its kind; the source fails all the same
            kind = kind if kind in BODY_KINDS else "seed"
            message = f"the source's own URL failed: {message}"
            if state.plan:
                state.plan.failed = True
        if kind:
            yield CrawlError(state.id, _original_url(request), kind, message, fails_source=seed)
        if request.meta.get("discovery"):
            yield from self._discovery_done(state)


def _read_part(response: TextResponse) -> tuple[str, str]:
    """What the crawl's process parses of a page to judge it, and the page's base URL read from
    it: all of the page, or of a huge page its first ``READ_HEAD`` and last ``READ_TAIL`` bytes as
    text (links, head, byline, the scripts at the end), never the whole page as text. The whole
    page goes to the extraction worker as bytes; a 500,000-link page would take 300 MB here."""
    body = response.body
    if len(body) <= READ_HEAD + READ_TAIL or codecs.lookup(response.encoding).name.startswith(("utf-16", "utf-32")):
        part = response.text
    else:
        head = html_to_unicode(f"charset={response.encoding}", body[:READ_HEAD])[1]  # a BOM says more than the charset
        part = head + body[-READ_TAIL:].decode(response.encoding, errors="replace")
    try:
        base = parse_url(get_base_url(part[:BASE_CHARS], response.url, response.encoding))
    except ValueError:
        base = None
    return part, base or response.url  # a <base href> that is no URL is ignored, as by a browser


def _declared_feeds(base: str, state: SourceState, sel: Selector) -> list[str]:
    """The feeds a page declares with ``<link rel="alternate">``, in the blog's own form (not a
    platform's API resource, which WordPress declares as ``application/json``)."""
    declared = [
        state.own(link.attrib["href"], base)
        for link in sel.xpath('//link[@rel="alternate"][@href]')
        if (link.attrib.get("type") or "").lower() in FEED_TYPES
    ]
    return list(dict.fromkeys(u for u in declared if u and not api_resource(u)))


def lacks(post: BlogPost) -> str:
    """What a feed entry could give the post that its page did not: ``t`` a published time
    (the page's date is not a structured one with its time), ``g`` tags, ``c`` categories,
    ``a`` an author."""
    chosen = {p["field"]: p["origin"] for p in post.provenance if p.get("chosen")}
    missing = {"t": chosen.get("published") not in TIMED_ORIGINS, "g": not post.tags,
               "c": not post.categories, "a": not post.author}
    return "".join(flag for flag, lacking in missing.items() if lacking)


def brings(entry: dict[str, Any], flags: str) -> bool:
    """True when the feed ``entry`` gives something of what ``flags`` (see ``lacks``) says is missing."""
    offers = {"t": bool(entry.get("published")) and bool(TIME_OF_DAY.search(entry.get("published_raw") or "")),
              "g": bool(entry.get("tags")), "c": bool(entry.get("categories")), "a": bool(entry.get("author"))}
    return any(offers[flag] for flag in flags)


def _redirect_aliases(response: Response, state: SourceState, final: str) -> list[dict[str, str]]:
    """The URLs a redirect chain (HTTP or meta refresh) passed through on its way to ``final``."""
    urls = response.meta.get("redirect_urls", [])
    reasons = response.meta.get("redirect_reasons", [])
    aliases = []
    for url, reason in zip(urls, reasons):
        own = state.own(url)
        if own and url_key(own) != url_key(final):
            why = "meta refresh" if reason == "meta refresh" else f"redirect {reason}"
            aliases.append({"alias": own, "why": why})
    return aliases


def _entry_text(entry: dict[str, Any] | None) -> str | None:
    """The text of a feed entry's content (its summary does not say how long the post is)."""
    content = (entry or {}).get("content")
    return " ".join(Selector(text=content, type="html").xpath("//text()").getall()).strip() if content else None


def _http_charset(response: Response) -> str | None:
    return http_content_type_encoding(_content_type(response))


def _decoded(response: TextResponse) -> TextResponse:
    """The response read in the encoding its bytes are really in (see crawler.judge.encoding)."""
    encoding = html_encoding(response.body, _http_charset(response))
    if codecs.lookup(encoding).name != codecs.lookup(response.encoding).name:
        return response.replace(encoding=encoding)
    return response


def _content_type(response: Response) -> str:
    return (response.headers.get("Content-Type") or b"").decode("latin-1").lower()


def _original_url(request: Request) -> str:
    """The URL as the blog names it, not as a ``--map-host`` mirror was asked for it."""
    mapped = request.meta.get(MAPPED)
    return mapped[0] if mapped and mapped[1] == request.url else request.url


def _failed_request(failure: Failure) -> Request:
    """The request an errback's failure is of, which Scrapy sets on the failure."""
    return failure.request  # type: ignore[attr-defined]  # Scrapy's own attribute: Twisted's class types none


def _error_kind(failure: Failure) -> str:
    message = _error_message(failure)
    if failure.check(HostDown):
        return "host-down"
    if failure.check(Stalled):
        return "stalled"
    # DownloadCancelledError: Scrapy's, once more bytes came than the size cap
    if failure.check(TooLarge, DownloadCancelledError) or "DOWNLOAD_MAXSIZE" in message or "larger than download max size" in message:
        return "too-large"
    if isinstance(failure.value, IgnoreRequest):
        if message.startswith("truncated"):
            return "truncated"
        return "robots" if "robots.txt" in message else "refused" if message.startswith("refused") else "ignored"
    assert failure.value is not None  # a Failure is made of an exception: Twisted's hints allow none
    return network_kind(failure.value)



def _error_message(failure: Failure) -> str:
    """What went wrong, in one line, even when Twisted's own message is empty."""
    message = failure.getErrorMessage()
    if failure.check(DownloadCancelledError) and not message:
        # Scrapy cancels a download, saying nothing, once more bytes came than the size cap
        return "larger than the size cap as its bytes came: its download was cancelled, not archived"
    reasons = getattr(failure.value, "reasons", None)  # ResponseFailed and its kin
    if reasons or "DataLoss" in type(failure.value).__name__:
        causes = ", ".join(r.getErrorMessage() or type(r.value).__name__ for r in reasons or [failure])
        message = f"the connection broke before the whole answer arrived ({causes})"
    return message or type(failure.value).__name__


def _www_twin(host: str) -> set[str]:
    """The host with ``www.``, or without it: the same blog."""
    return {host[4:] if host.startswith("www.") else f"www.{host}"}
