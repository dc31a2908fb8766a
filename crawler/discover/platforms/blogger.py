"""Blogger: the blog's own feed lists every post, 150 at a time, with its dates, author and labels.

Found from the home page: ``<meta name="generator" content="blogger">``, which every Blogger
theme writes. The listing is ``/feeds/posts/default`` paged with ``start-index`` and
``max-results`` (Atom; ``openSearch:totalResults`` counts the posts). Only published posts are
in it.

- First run (nothing known): every page, the first alone, then the rest at once when the first
  was full.
- Later runs: the posts updated since the latest change the archive holds (``updated-min``,
  ``orderby=updated``), and the count of all posts (``openSearch:totalResults`` of a one-post
  page). When the count is not the posts known plus the new ones, something left: every page of
  the feed is listed and the known posts it lacks are ``absent``. A run where nothing changed
  costs these two requests.
"""

import re
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode, urljoin

from parsel import Selector

from crawler.discover.feeds import parse_feed
from crawler.discover.platforms.listing import CountedListing, Known, Normalise, Unavailable

EVIDENCE = "Blogger feed"
PER_PAGE = 150  # the most Blogger gives in one page of a feed
TOTAL = re.compile(rb"<openSearch:totalResults>\s*(\d+)\s*</openSearch:totalResults>", re.IGNORECASE)


def feed_url(sel: Selector, base: str) -> str | None:
    """The feed that lists the blog's posts, when the home page is Blogger's, or None."""
    generator = sel.xpath('//meta[translate(@name, "GENERATOR", "generator")="generator"]/@content').get() or ""
    return urljoin(base, "/feeds/posts/default") if generator.strip().lower() == "blogger" else None


class BloggerListing(CountedListing):
    """One run's listing of a Blogger blog's posts (``crawler.discover.platforms.listing.Listing``)."""

    def __init__(self, feed: str, own: Normalise, known: Known):
        super().__init__(own, known)
        self.feed = feed
        self.starts: dict[str, int] = {}  # URL asked -> its start index

    def start(self) -> list[str]:
        if self.known.since is None:
            return [self._ask_from("posts", 1)]
        return [self._ask_from("posts", 1), self._ask_from("count", 1)]

    def read(self, url: str, status: int, headers: dict[str, str], body: bytes) -> list[str]:
        what, start = self.asked[url], self.starts[url]
        self.answered.add(url)
        if status not in (200, 304):
            raise Unavailable(f"{url} answered {status}")
        try:
            feed = parse_feed(body, url)
        except ValueError as e:  # FeedError, or an entity bomb
            raise Unavailable(f"{url} is no feed: {e}") from e
        match = TOTAL.search(body[:8192])
        total = int(match.group(1)) if match else None
        if what == "count":
            self.total = total
            return self._next()
        listed = [(entry, link) for entry in feed["entries"] if (link := self.own(entry["url"] or ""))]
        if what == "posts":
            self.entries.update((link, {**entry, "url": link, "evidence": EVIDENCE}) for entry, link in listed)
        else:
            self.links = (self.links or set()) | {link for _, link in listed}
        more = []
        if len(feed["entries"]) == PER_PAGE:  # a page not full is the last
            if total is None:  # no count: the next page says whether it is the last
                more = [self._ask_from(what, start + PER_PAGE)]
            elif start == 1:
                more = [self._ask_from(what, n) for n in range(1 + PER_PAGE, total + 1, PER_PAGE)]
        return more + self._next()

    def _url(self, what: str, start: int) -> str:
        params: dict[str, Any] = {"start-index": start, "max-results": 1 if what == "count" else PER_PAGE}
        if what == "posts" and self.known.since:
            # from a second before the latest change known: one made in that second is not missed
            since = datetime.fromisoformat(self.known.since.replace("Z", "+00:00")) - timedelta(seconds=1)
            params |= {"updated-min": since.strftime("%Y-%m-%dT%H:%M:%SZ"), "orderby": "updated"}
        return f"{self.feed}?{urlencode(params, safe=':')}"

    def _ask_from(self, what: str, start: int) -> str:
        url = self._url(what, start)
        self.starts[url] = start
        return self._ask(what, url)

    def _first_links(self) -> str:
        url = self._url("links", 1)
        self.starts[url] = 1
        return url
