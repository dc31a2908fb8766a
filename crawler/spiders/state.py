"""What the spider knows about one blog during a run: scope, hosts, feeds, and what it learned."""

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta, timezone, tzinfo
from datetime import time as time_of_day
from typing import Any
from urllib.parse import parse_qsl, urlparse, urlsplit

from dateutil import parser as dateutil_parser
from scrapy.linkextractors import IGNORED_EXTENSIONS
from w3lib.html import strip_html5_whitespace

from archive.core.urls import HASH_ROUTE, host_of, normalize_url, parse_url

from crawler.discover.incremental import SourcePlan
from crawler.discover.platforms.listing import Listing
from crawler.fetch.media_ledger import MediaLedger
from crawler.judge.pages import SectionStats, in_scope
from crawler.judge.site import SiteLearner
from crawler.spiders.spill import SpillDict, SpillSet

# A path segment or query value that is a year, a month or a day: 2024, 2024-07, 2024-07-30.
PAGE_NAMES = {"page", "paged", "p", "start", "offset"}
DATE_VALUE = re.compile(r"^(\d{4})(?:[-_/.]\d{1,2}){0,2}$")
# Links to files that are never pages: Scrapy's list, plus feeds and data. A tuple, for one
# ``str.endswith`` (Scrapy's ``url_has_any_extension`` tries each in turn: 3 times slower).
NOT_PAGES = tuple(sorted({f".{e}" for e in [*IGNORED_EXTENSIONS, "xml", "json", "txt", "rss", "atom", "gz"]}))
CACHED_LINKS = 65_536


QUARTER_HOUR = timedelta(minutes=15)
LEARNED = 2  # pages that say the same of a blog's rendering: its pages are rendered at once, or no more


@dataclass
class SourceState:
    id: int
    url: str
    scope: str
    origin: str  # scheme://host of the scope
    aliases: set[str]  # hosts that serve the same blog
    bases: set[str]  # mirror bases (--map-host) of those hosts, as the downloader saw them
    max_pages: int
    max_depth: int
    max_links: int
    max_query_variants: int
    sections: SectionStats
    # what grows with the blog: beyond ARCHIVE_MEMORY_KEYS keys each, kept on disk (crawler.spiders.spill)
    seen: SpillSet  # url_key of every URL requested
    parsed: SpillDict  # url_key -> kind, of pages judged
    entries: SpillDict  # url_key -> feed entry
    listed: SpillDict  # url_key -> the text of a listing's link to it ("" for none)
    dated_entries: SpillSet  # url_key of the pages a listing shows with a date beside their link
    lacking: SpillDict  # url_key -> what a post extracted without a feed entry lacks (crawler.spiders.blog.lacks)
    unsure: SpillDict  # url_key -> what would have made a page judged not a post one: ("listed",), ("feed",) or both
    pending: int = 0  # feeds, robots.txt and sitemaps not yet read
    held: list[Any] = field(default_factory=list)
    feeds: list[str] = field(default_factory=list)
    sitemaps: list[str] = field(default_factory=list)
    documents: set[str] = field(default_factory=set)  # url_key of the feeds, sitemaps and robots.txt asked for
    feed_edits: set[str] = field(default_factory=set)  # url_key of known posts whose feed content changed in this run
    cuts: Counter[str] = field(default_factory=Counter)
    query_variants: Counter[str] = field(default_factory=Counter)
    site: SiteLearner = field(default_factory=SiteLearner)  # the blog's own name, tagline, header
    offsets: Counter[timedelta] = field(default_factory=Counter)  # of the dates written with an offset
    shown: Counter[timedelta] = field(default_factory=Counter)  # of pages' zone-less times against their feed's
    budget_cut: bool = False  # the page budget stopped the crawl short: not a complete crawl
    unlisted_checked: bool = False  # a complete crawl's known posts that nothing listed were asked for
    plan: SourcePlan | None = None  # what this run does for the source (crawler/discover/incremental.py)
    listing: Listing | None = None  # its platform's listing, while it can be read (crawler/discover/platforms)
    home: str | None = None  # the home page that declared the platform's API
    home_unchanged: bool = False  # its home page answered 304, or the same body: the usual feed paths may wait
    links: dict[tuple[str, str, str], str | None] = field(default_factory=dict)  # link -> in-scope URL (bounded)
    media: MediaLedger | None = None  # its posts' images (crawler/fetch/media_ledger.py)
    bad_urls: int = 0  # links, feed and sitemap entries that are no URL: taken as no link
    first_bad_url: str | None = None
    bad_url_told: bool = False  # its crawl_errors row (kind bad-url) is written
    render: str = "auto"  # auto, always or never: a browser for its pages (crawler.judge.render)
    learned: str | None = None  # what its earlier crawls learned: "browser" (its pages need one) or "http"
    rendered: int = 0  # pages the browser gave the text their HTTP answer lacked
    rendered_in_vain: int = 0  # pages rendered that had no more text than before
    with_text: int = 0  # posts whose HTTP answer held their text
    hash_routes: bool = False  # its rendered pages link to each other by #/route: each route a page
    home_static: bool = False  # its home page's HTTP answer was no shell: its listings are not judged as ones
    furniture: frozenset[str] = frozenset()  # the article marks its home page carries: its theme's, on every page

    def note_bad_url(self, text: str) -> None:
        self.bad_urls += 1
        if self.first_bad_url is None:
            self.first_bad_url = text

    def render_first(self, url: str) -> str | None:
        """Why the page at ``url`` goes to the browser without asking over HTTP first, or None."""
        if self.render == "always":
            return "render=always"
        if self.hash_routes and HASH_ROUTE.search(url) and self.may_render():
            return "a hash route, which only the page's scripts show"
        if self.render == "auto" and self.rendered >= LEARNED and not self.rendered_in_vain:
            return f"the blog's pages need it ({self.rendered} rendered)"
        if self.render == "auto" and self.learned == "browser" and self.may_render():
            return "the blog's pages needed it in its last crawl"
        return None

    def may_render(self) -> bool:
        """True while a page whose HTTP answer is a shell is worth rendering (never, once renderings gave nothing)."""
        return self.render != "never" and self.rendered_in_vain < LEARNED

    def note_rendered(self, gained: bool) -> str | None:
        """Count a rendered page; what the blog's pages were found to need once that is settled, else None."""
        if gained:
            self.rendered += 1
        else:
            self.rendered_in_vain += 1
        lesson = "http" if self.rendered_in_vain == LEARNED else "browser" if self.rendered == LEARNED else None
        return None if lesson == self.learned else lesson

    def link(self, base: str, href: str, encoding: str) -> str | None:
        """The in-scope page a link of a page at ``base`` leads to, in the blog's own form; else None.

        A blog repeats its navigation, sidebar and tag links on every page, so
        each link is resolved once: root-relative and absolute links do not
        depend on the page's own path.
        """
        href = strip_html5_whitespace(href)
        if href.startswith(("http://", "https://")):
            context = ""
        elif href.startswith("/") and not href.startswith("//"):
            context = base[: base.find("/", base.find("//") + 2)]  # scheme://host of the page
        else:
            context = base
        if not self.hash_routes and "#" in href:  # a route only where the blog routes by them
            href = href.split("#", 1)[0] or base.split("#", 1)[0]
        key = (context, href, encoding)
        if key not in self.links:
            if len(self.links) >= CACHED_LINKS:
                self.links.clear()
            url = parse_url(href, base, encoding=encoding, on_bad=self.note_bad_url)
            own = None if url is None or urlparse(url).path.lower().endswith(NOT_PAGES) else self.own(url)
            self.links[key] = own if own and in_scope(own, self.scope) else None
        return self.links[key]

    def own(self, url: str, base: str = "") -> str | None:
        """``url`` (read against ``base``) normalised, on the blog's own host when it is an alias or
        a mirror; None if not http, or no URL at all."""
        absolute = parse_url(url, base, on_bad=self.note_bad_url)
        if absolute is None:
            return None
        url = absolute
        for mirror in self.bases:
            if url == mirror or url.startswith(mirror + "/"):
                url = self.origin + url[len(mirror):]
                break
        parts = urlsplit(url)
        if host_of(url) in self.aliases:
            url = self.origin + url[len(f"{parts.scheme}://{parts.netloc}"):]
        return normalize_url(url)

    def trap(self, url: str, depth: int) -> str | None:
        """Why following ``url`` would lead into a trap, or None."""
        parts = urlsplit(url)
        segments = parts.path.split("/")
        named = [*zip(["", *segments], segments), *parse_qsl(parts.query)]
        for name, value in named:
            if name.lower() in PAGE_NAMES:
                continue  # /page/1000/ and ?paged=2024 count pages, not years
            match = DATE_VALUE.match(value)
            if match and not 1990 <= int(match.group(1)) <= date.today().year + 1:
                return "a calendar page outside 1990 to next year"
        if parts.query:
            self.query_variants[parts.path] += 1
            if self.query_variants[parts.path] > self.max_query_variants:
                return f"more than {self.max_query_variants} query-string variants of one path"
        if depth > self.max_depth:
            return f"deeper than {self.max_depth} links from the start"
        return None

    def note_date(self, raw: str | None) -> None:
        """Learn the blog's zone from the dates it writes with an offset."""
        try:
            dt = dateutil_parser.parse(raw) if raw else None
        except (ValueError, OverflowError):
            return
        offset = dt.utcoffset() if dt else None
        if offset is not None:
            self.offsets[offset] += 1

    def note_shown_time(self, shown: str | None, instant: str | None) -> bool:
        """Learn the blog's zone from a page that shows its time with no zone (``2019-07-01 13:38``)
        beside its feed entry's instant, which many feeds write in UTC: the difference is the zone
        the blog shows its times in. Whether it was learned."""
        try:
            local = dateutil_parser.parse(shown) if shown else None
            exact = dateutil_parser.parse(instant) if instant else None
        except (ValueError, OverflowError):
            return False
        if local is None or exact is None or local.tzinfo is not None or exact.utcoffset() is None:
            return False
        if local.time() == time_of_day(0, 0):  # a day alone says nothing of the zone
            return False
        offset = local - exact.replace(tzinfo=None) + exact.utcoffset()
        quarters = round(offset / QUARTER_HOUR)
        # the same moment, shown in a zone (zones are whole quarter-hours, within 14 hours of UTC)
        if abs(quarters) > 56 or abs(offset - quarters * QUARTER_HOUR) >= timedelta(minutes=2):
            return False
        self.shown[quarters * QUARTER_HOUR] += 1
        return True

    @property
    def default_tz(self) -> tzinfo | None:
        """The zone of the blog's dates that name none: the one its pages show their times in,
        else the one its dates with an offset say most."""
        counts = self.shown or self.offsets
        if not counts:
            return None
        return timezone(counts.most_common(1)[0][0])
