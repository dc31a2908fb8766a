"""The interface of a platform's listing, and what the archive remembers of one.

A platform's ``Listing`` is a short conversation with the platform's API, driven by
the spider: ``start`` gives the first URLs to request, ``read`` each answer and gives the next
ones, and once nothing is left to ask, ``result`` says what the platform listed. A listing that
cannot be read (the API turned off, 401, 403, 404, not JSON) raises ``Unavailable``: the spider
then discovers the blog from its HTML, feeds and sitemaps, as for any blog.

What a listing says of a post is evidence, in the shape of a feed entry
(``crawler.discover.feeds``) whose ``evidence`` names its origin; each post's page is still
fetched and extracted.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from sqlite_utils import Database

Normalise = Callable[[str], str | None]


class Unavailable(Exception):
    """The platform's listing cannot be read on this site."""


@dataclass
class Listed:
    """What a platform's listing said in one run."""

    entries: dict[str, dict[str, Any]]  # the posts listed (all, or those changed since ``Known.since``): feed entries
    absent: set[str] = field(default_factory=set)  # known posts a complete listing no longer holds
    unchanged: set[str] = field(default_factory=set)  # known posts it vouches did not change since


@dataclass
class Known:
    """What the archive holds of the posts a platform listed before."""

    urls: set[str] = field(default_factory=set)  # live posts with the platform's evidence
    since: str | None = None  # the latest change the platform reported for them (ISO 8601, UTC)


class Listing(Protocol):
    """One run's conversation with a platform's API (see the module's docstring): ``read`` raises
    ``Unavailable``; ``done`` says every answer it asked for is read."""

    def start(self) -> list[str]: ...

    def read(self, url: str, status: int, headers: dict[str, str], body: bytes) -> list[str]: ...

    def done(self) -> bool: ...

    def result(self) -> Listed: ...


class CountedListing:
    """What a listing keeps that pages through a platform's posts and, on later runs, counts them:
    the posts it listed, the count, and every post's URL once the count did not add up (then the
    known posts missing from it are ``absent``). A platform's module says how to ask
    (``start``, ``read``, ``_first_links``); the URLs it asks are kept by what they ask for:
    ``posts``, ``count`` or ``links``."""

    def __init__(self, own: Normalise, known: Known):
        self.own, self.known = own, known
        self.asked: dict[str, str] = {}  # URL -> what it asks: posts, count, links
        self.answered: set[str] = set()
        self.entries: dict[str, dict[str, Any]] = {}
        self.links: set[str] | None = None  # every post's URL, once listed
        self.total: int | None = None

    def done(self) -> bool:
        return self.answered == set(self.asked)

    def result(self) -> Listed:
        absent = self.known.urls - self.links if self.links is not None else set()
        # the count added up, or every URL was listed: the known posts not listed as changed did not change
        unchanged = self.known.urls - set(self.entries) - absent if self.total is not None else set()
        return Listed(dict(self.entries), absent, unchanged)

    def _ask(self, what: str, url: str) -> str:
        self.asked[url] = what
        return url

    def _next(self) -> list[str]:
        """Once the posts and the count are read: every post's URL when the count does not add up."""
        if any(url not in self.answered for url, what in self.asked.items() if what in ("posts", "count")):
            return []
        if self.total is None or "links" in self.asked.values() or self.total == len(self.known.urls | set(self.entries)):
            return []
        return [self._ask("links", self._first_links())]

    def _first_links(self) -> str:
        """The URL of the first page of every post's URL."""
        raise NotImplementedError


def known_posts(db: "Database", source_id: int, evidence: str) -> Known:
    """The source's live posts that ``evidence`` spoke of before, and the latest update it gave."""
    rows = list(db.query(
        """select p.url, max(case when pr.field = 'updated' then pr.value end) as updated
           from posts p join provenance pr on pr.post_id = p.id
           where p.source_id = ? and p.gone_at is null and pr.origin = ? group by p.id""",
        [source_id, evidence],
    ))
    dates = [r["updated"] for r in rows if r["updated"]]
    return Known({r["url"] for r in rows}, max(dates) if dates else None)
