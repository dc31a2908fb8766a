"""Blogger: the blog's own feed lists every post, 150 at a time, with its dates, author and labels.

Found from the home page: ``<meta name="generator" content="blogger">``, which every Blogger
theme writes. The listing is ``/feeds/posts/default`` paged with ``start-index`` and
``max-results`` (Atom; ``openSearch:totalResults`` counts the posts). Only published posts are
in it.

- First run (nothing known): every page, the first alone, then the rest at once when the first
  was full.
- Later runs: the posts updated since the latest change the archive holds (``updated-min``,
  ``orderby=updated``): a run where nothing changed costs this one request. The feed says
  nothing of a deleted post, so no known post is vouched unchanged: the revisit policy's due
  posts are revisited as on any blog.
"""

import re
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode, urljoin

from parsel import Selector

from crawler.discover.feeds import parse_feed
from crawler.discover.platforms.listing import Known, Listed, Normalise, Unavailable

EVIDENCE = "Blogger feed"
PER_PAGE = 150  # the most Blogger gives in one page of a feed
TOTAL = re.compile(rb"<openSearch:totalResults>\s*(\d+)\s*</openSearch:totalResults>", re.IGNORECASE)


def feed_url(sel: Selector, base: str) -> str | None:
    """The feed that lists the blog's posts, when the home page is Blogger's, or None."""
    generator = sel.xpath('//meta[translate(@name, "GENERATOR", "generator")="generator"]/@content').get() or ""
    return urljoin(base, "/feeds/posts/default") if generator.strip().lower() == "blogger" else None


class BloggerListing:
    """One run's listing of a Blogger blog's posts (``crawler.discover.platforms.listing.Listing``)."""

    def __init__(self, feed: str, own: Normalise, known: Known):
        self.feed, self.own, self.known = feed, own, known
        self.asked: dict[str, int] = {}  # URL -> the start index it asks for
        self.answered: set[str] = set()
        self.entries: dict[str, dict[str, Any]] = {}

    def start(self) -> list[str]:
        return [self._ask(1)]

    def read(self, url: str, status: int, headers: dict[str, str], body: bytes) -> list[str]:
        self.answered.add(url)
        if status not in (200, 304):
            raise Unavailable(f"{url} answered {status}")
        try:
            feed = parse_feed(body, url)
        except ValueError as e:  # FeedError, or an entity bomb
            raise Unavailable(f"{url} is no feed: {e}") from e
        for entry in feed["entries"]:
            link = self.own(entry["url"] or "")
            if link:
                self.entries[link] = {**entry, "url": link, "evidence": EVIDENCE}
        if len(feed["entries"]) < PER_PAGE:  # a page not full is the last
            return []
        match = TOTAL.search(body[:8192])
        if match is None:  # no count: the next page says whether it is the last
            return [self._ask(self.asked[url] + PER_PAGE)]
        if self.asked[url] != 1:
            return []
        return [self._ask(start) for start in range(1 + PER_PAGE, int(match.group(1)) + 1, PER_PAGE)]

    def done(self) -> bool:
        return self.answered == set(self.asked)

    def result(self) -> Listed:
        return Listed(dict(self.entries))

    def _page(self, start: int) -> str:
        params: dict[str, Any] = {"start-index": start, "max-results": PER_PAGE}
        if self.known.since:
            # from a second before the latest change known: one made in that second is not missed
            since = datetime.fromisoformat(self.known.since.replace("Z", "+00:00")) - timedelta(seconds=1)
            params |= {"updated-min": since.strftime("%Y-%m-%dT%H:%M:%SZ"), "orderby": "updated"}
        return f"{self.feed}?{urlencode(params, safe=':')}"

    def _ask(self, start: int) -> str:
        url = self._page(start)
        self.asked[url] = start
        return url
