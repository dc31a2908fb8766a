"""What one run does for one source: a complete crawl or an incremental one.

- ``complete``: every page in scope, as a first crawl. A source is crawled
  this way until one complete crawl has finished, and with ``--full``.
- ``incremental`` (the default afterwards): robots.txt, feeds and sitemaps
  (conditionally; a sitemap index's children whatever the index answered),
  listing pages from the first one on only while they hold something new,
  every new URL, the posts a feed or sitemap says changed or no longer
  lists, and the known posts the revisit policy says are due.
- ``recheck``: incremental, with every known post due.

A feed says a post changed when its entry's ``updated`` is later than the
post's, when the entry differs from the one the previous version of the feed
held (its title, summary and content), or, for an entry without an update
date, when the feed changed at all. Each such post is revalidated with a
conditional request; a 304 for it is not believed when the entry's
``updated`` or the entry itself says otherwise. A sitemap says a post changed
when its ``lastmod`` is not the one the sitemap's previous version gave
(earlier or later: generators date it from the commit, the deploy comes
later), or, one it did not give before, is not older than the post's last check.

Unchanged documents (a 304, a fresh feed, the same body again) are skipped,
except when the source's last run was interrupted (``resume``): then they
are read again from their captures, so work left undone is found.

A home page that declares no feed has the usual feed paths probed
(``feed_probes``); one that answered 404 or 410 within ``PROBE_AGAIN`` is not
asked again while the home page is unchanged, except by ``--full``.
"""

import gzip
import hashlib
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urljoin, urlsplit

from scrapy.http import Response
from scrapy.utils.sitemap import Sitemap

from archive.core.dates import parse_date
from archive.core.queries import interrupted_run
from archive.core.urls import normalize_url
from archive.tables.captures import latest_capture, load_body
from archive.tables.revisit import due_posts, get_fetch, in_future, parse_policy

from crawler.discover.feeds import FeedError, parse_feed
from crawler.judge.pages import PAGE_PARAMS, PAGINATION, SectionStats, in_scope, url_shape
from crawler.meta import STATE, UNCHANGED

if TYPE_CHECKING:
    from sqlite_utils import Database

Normalise = Callable[[str], str | None]
DAY_ONLY = re.compile(r"\s*\d{4}-\d\d-\d\d\s*")  # a W3C date without its time: 2026-12-05
# from a day's midnight in UTC to its end in the westernmost zone (UTC-12): the latest time it may name
DAY_END_ANYWHERE = timedelta(hours=36)
# Where a blog whose home page declares no feed usually has one, under its scope: where generators put
# a feed by default (WordPress, Hexo, Hugo, Jekyll, Pelican...).
COMMON_FEED_PATHS = ("feed", "rss.xml", "atom.xml", "index.xml", "feed.xml", "feeds/all.atom.xml")
# A usual feed path that answered 404 or 410 is not asked again for this long while the home page is
# unchanged: a feed that appears without a word of its home page changing is found within a week.
PROBE_AGAIN = timedelta(days=7)


@dataclass
class SourcePlan:
    db: "Database"
    mode: str  # complete, incremental or recheck
    resume: bool  # the last run on this source did not finish
    posts: dict[str, dict[str, Any]]  # known posts by URL: published, updated, gone_at, checked
    pages: dict[str, str]  # every page judged before, by URL: its kind
    feeds: list[str]
    due: list[str] = field(default_factory=list)  # known posts to revalidate in this run
    failed: bool = False  # the source's own URL failed
    cached_entries: dict[str, dict[str, Any]] | None = None
    # known posts whose feed entry (title, summary, content) differs from the feed's previous version's
    changed_entries: set[str] = field(default_factory=set)
    # when the interrupted run this one resumes began: what it fetched since is read from the
    # archive, not asked for again (``crawler.fetch.conditional``)
    resumed_since: str | None = None
    # each URL's ``lastmod`` (``sitemap_lastmod``) in the versions of the source's sitemaps read before
    sitemap_lastmods: dict[str, str] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.mode == "complete"

    def known(self, url: str) -> bool:
        """Archived before: a page judged, or a post not marked gone."""
        post = self.posts.get(url)
        return (url in self.pages or post is not None) and not (post and post["gone_at"])

    def skip(self, response: Response) -> bool:
        """Nothing to read in this response: unchanged, nothing left undone, not a post marked gone."""
        post = self.posts.get(normalize_url(response.url))
        if post and post["gone_at"]:
            return False
        return bool(response.meta.get(UNCHANGED)) and not (self.complete or self.resume)

    def done_before(self, response: Response, url: str) -> bool:
        """An unchanged page whose record and post are in the archive already."""
        return bool(response.meta.get(UNCHANGED)) and self.known(url)

    def select_links(self, links: list[str], seen: Callable[[str], bool]) -> list[str]:
        """Links of a listing to follow: all in a complete crawl; else the new ones, and the
        next listing pages when this one held something new that no page of this run showed
        before (a sidebar's newest posts, repeated on every page, lead no further)."""
        if self.complete:
            return links
        new = [u for u in links if u not in self.pages and u not in self.posts and not seen(u)]
        if not new:
            return []
        more = [u for u in links if self.pages.get(u) == "listing" and _paginated(u)]
        return new + more

    def wants_entry(self, url: str, updated: str | None, *, since_check: bool = False) -> bool:
        """Fetch a feed's or sitemap's entry: new, or changed since archived.

        A feed's ``updated`` is compared with the post's (it came from the
        same feed); a sitemap's ``lastmod`` with the one the sitemap said before
        (``since_check``): another one is a change, earlier or later than the
        post's last check, since generators date it from the commit
        (``enableGitInfo``, ``last_modified_at``) and the deploy may come days
        later; a ``lastmod`` the sitemap did not give before is compared with the
        post's last check: both have a second's precision, so a ``lastmod`` in the
        second of the check may be an edit made after it.
        """
        if self.complete:
            return True
        post = self.posts.get(url)
        if post is None:
            return url not in self.pages
        if post["gone_at"]:
            return True
        before = self.sitemap_lastmods.get(url) if since_check else None
        if before is not None and updated is not None and updated != before:
            return True
        if since_check or not post["updated"]:
            return bool(updated and updated >= (post["checked"] or ""))
        return bool(updated and updated > post["updated"])

    def previous_entries(self, response: Response, own: Normalise) -> dict[str, dict[str, Any]] | None:
        """The entries of the version of this feed read before, by URL; None when the feed is
        unchanged, or was never read before."""
        previous = (response.meta.get(STATE) or {}).get("sha256")
        if not previous or response.meta.get(UNCHANGED) or self.complete:
            return None
        entries: dict[str, dict[str, Any]] = {}
        for entry in feed_entries(load_body(self.db, previous), response.url):
            key = own(entry["url"]) if entry["url"] else None
            if key:
                entries.setdefault(key, entry)
        return entries

    def entry_changed(self, url: str, entry: dict[str, Any], before: dict[str, dict[str, Any]] | None) -> bool:
        """The feed changed since it was read, and says the known post ``url`` changed with it:
        its entry is not the one the previous version held, or has no update date to tell."""
        post = self.posts.get(url)
        if before is None or post is None:
            return False
        old = before.get(url)
        differs = entry_hash(entry) != entry_hash(old)
        if old is not None and differs:
            self.changed_entries.add(url)
        return not entry.get("updated") or differs

    def content_edited(self, url: str, entry: dict[str, Any], before: dict[str, dict[str, Any]] | None) -> bool:
        """The known post's full-content entry holds other content than the feed's previous version did."""
        old = (before or {}).get(url)
        return bool(url in self.posts and old and entry.get("content") and entry["content"] != old.get("content"))

    def doubts(self, url: str, entry: dict[str, Any] | None) -> bool:
        """A feed says the post changed, yet the server answered 304: its entry's ``updated`` is later
        than the post's, or the entry is not the one the feed's previous version held."""
        post = self.posts.get(url)
        updated = (entry or {}).get("updated")
        return bool(post and (url in self.changed_entries or (updated and post["updated"] and updated > post["updated"])))

    def cached_entry(self, url: str, own: Normalise, sections: SectionStats, scope: str) -> dict[str, Any] | None:
        """The entry for ``url`` in the captured feeds, for a page judged while its feed was not read
        (unchanged, or not yet). The feeds' URL shapes go to ``sections`` when it has none."""
        if self.cached_entries is None:
            self.cached_entries = {}
            for feed_url in self.feeds:
                capture = latest_capture(self.db, feed_url)
                for entry in feed_entries(capture["body"] if capture else None, feed_url):
                    key = own(entry["url"]) if entry["url"] else None  # an entry with no link is a post of its own
                    if key and in_scope(key, scope):
                        self.cached_entries.setdefault(key, entry)
            if not sections.shapes:
                for key in self.cached_entries:
                    sections.add(url_shape(key, scope))
        return self.cached_entries.get(url)

    def missing(self, response: Response, urls: list[str], own: Normalise, *, feed: dict[str, Any] | None = None,
                before: dict[str, dict[str, Any]] | None = None) -> list[str]:
        """Known live posts the previous version of this feed or sitemap listed and this one does not.

        For a feed (``before``: its ``previous_entries``), only posts published
        since its oldest entry, or listed before an entry it still lists: the
        others have merely scrolled out of it.
        """
        if feed is not None:
            listed_before: list[str | None] = list(before or {})
            dates = [e["published"] for e in feed["entries"] if e.get("published")]
            oldest = min(dates) if dates else None
        else:
            previous = (response.meta.get(STATE) or {}).get("sha256")
            if not previous or response.meta.get(UNCHANGED):
                return []
            listed_before, oldest = [own(e["loc"]) for e in sitemap_entries(load_body(self.db, previous))], None
        current = set(urls)
        # a feed's entries leave it at its end: one listed before an entry that is still there was taken out
        last_kept = max((i for i, url in enumerate(listed_before) if url in current), default=-1)
        gone = []
        for i, url in enumerate(listed_before):
            post = self.posts.get(url or "")
            if not url or url in current or not post or post["gone_at"]:
                continue
            if feed is not None and i > last_kept and not (oldest and post["published"] and post["published"] >= oldest):
                continue
            gone.append(url)
        return gone


def load_plan(db: "Database", source: dict[str, Any], *, mode: str, policy: str) -> SourcePlan:
    """The plan for one source, from what the archive knows of it."""
    sid = source["id"]
    posts = {
        r["url"]: r
        for r in db.query(
            """select p.url, p.published, p.updated, p.gone_at, coalesce(f.checked_at, p.last_seen) as checked
               from posts p left join fetches f on f.url = p.url where p.source_id = ?""",
            [sid],
        )
    }
    pages = {r["url"]: r["kind"] for r in db.query("select url, kind from pages where source_id = ?", [sid])}
    if mode == "full" or not source.get("complete_at"):
        mode = "complete"
    resume = source.get("run_state") in ("running", "interrupted")
    interrupted = interrupted_run(db) if resume and mode != "full" else None
    plan = SourcePlan(
        db=db,
        mode=mode,
        resume=resume,
        posts=posts,
        pages=pages,
        feeds=_json_list(source.get("feeds")),
        resumed_since=interrupted["started_at"] if interrupted else None,
        sitemap_lastmods=previous_lastmods(db, _json_list(source.get("sitemaps"))) if mode != "complete" else {},
    )
    if not plan.complete:
        rules = parse_policy(source.get("revisit") or policy)
        plan.due = due_posts(db, sid, rules, everything=mode == "recheck")
    return plan


def entry_hash(entry: dict[str, Any] | None) -> str:
    """What a reader of a feed entry sees: its title, summary and content."""
    data = json.dumps([(entry or {}).get(k) for k in ("title", "summary", "content")], ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def sitemap_lastmod(entry: dict[str, Any]) -> str | None:
    """A sitemap entry's ``lastmod``, ISO 8601 UTC. A day alone (``2026-12-05``) is taken as the
    latest time it may name, the end of that day at UTC-12: an edit on the day of a check may
    come after it."""
    lastmod = parse_date(entry.get("lastmod"))
    if lastmod is None or not DAY_ONLY.fullmatch(entry["lastmod"]):
        return lastmod
    return (datetime.fromisoformat(lastmod.replace("Z", "+00:00")) + DAY_END_ANYWHERE).strftime("%Y-%m-%dT%H:%M:%SZ")


def previous_lastmods(db: "Database", sitemaps: list[str]) -> dict[str, str]:
    """Each URL's ``lastmod`` in the versions of ``sitemaps`` the archive read last (their stored
    bodies, before this run fetches them again), by normalised URL."""
    out: dict[str, str] = {}
    for sitemap in sitemaps:
        fetch = get_fetch(db, sitemap)
        for entry in sitemap_entries(load_body(db, fetch["sha256"]) if fetch and fetch["sha256"] else None):
            lastmod = sitemap_lastmod(entry)
            if lastmod:
                out.setdefault(normalize_url(entry["loc"]), lastmod)
    return out


def _paginated(url: str) -> bool:
    """``/page/2/``, ``?page=2``, ``/page-2``, ``/index2.html``: a listing's next pages."""
    parts = urlsplit(url)
    if PAGE_PARAMS & set(parse_qs(parts.query)):
        return True
    segments = [s for s in parts.path.lower().split("/") if s]
    return bool(segments) and (
        PAGINATION.match(segments[-1]) is not None or (len(segments) > 1 and segments[-2] == "page" and segments[-1].isdigit())
    )


def feed_entries(body: bytes | None, url: str) -> list[dict[str, Any]]:
    """The entries of a feed's stored body; none when it cannot be read."""
    if not body:
        return []
    try:
        return list(parse_feed(body, url)["entries"])
    except FeedError:
        return []


def sitemap_entries(body: bytes | None) -> list[dict[str, Any]]:
    """The ``<url>`` entries (``loc``, ``lastmod`` ...) of a sitemap's stored body; none for an index or garbage."""
    if not body:
        return []
    if body[:2] == b"\x1f\x8b":
        with gzip.GzipFile(fileobj=io.BytesIO(body)) as f:
            body = f.read()
    try:
        sitemap = Sitemap(body)
    except Exception:  # lxml raises several kinds on garbage
        return []
    return [e for e in sitemap if e.get("loc")] if sitemap.type == "urlset" else []


def _json_list(value: str | None) -> list[str]:
    return list(json.loads(value or "[]"))


def feed_probes(db: "Database", scope: str, *, home_unchanged: bool, full: bool = False) -> list[str]:
    """The usual feed URLs under ``scope`` that a run asks for, its home page declaring no feed: every one,
    but those that answered 404 or 410 less than ``PROBE_AGAIN`` ago when the home page is unchanged
    (a 304, or the same body: nothing on it says a feed appeared) and the run is not ``--full``."""
    urls = [urljoin(scope, path) for path in COMMON_FEED_PATHS]
    if full or not home_unchanged:
        return urls
    return [url for url in urls if not _missing_lately(get_fetch(db, url))]


def _missing_lately(fetch: dict[str, Any] | None) -> bool:
    if fetch is None or fetch["status"] not in (404, 410):
        return False
    return in_future(fetch["checked_at"], slack=-PROBE_AGAIN.total_seconds())
