"""Ghost: its Content API lists every published post, 100 at a time, with its dates, authors and tags.

Found from the home page, when it shows the site's Content API key: the scripts Ghost puts in
every theme's head carry it, Portal's as ``data-key`` beside ``data-api`` (the API's root),
the search's as ``data-key`` beside ``data-sodo-search`` (the site, whose API is under
``ghost/api/content/``). A site that shows no key is read as any blog.

- First run (nothing known): every page of ``posts/`` (``include=tags,authors``, only the fields
  used), newest first.
- Later runs: the posts updated since the latest change the archive holds
  (``filter=updated_at:>'...'``, newest change first), and the count of all posts
  (``meta.pagination.total`` of a one-post page). When the count is not the posts known plus the
  new ones, something left: every post's URL is listed (``fields=url``) and the known ones it
  lacks are ``absent``. A run where nothing changed costs these two requests.

A post for members or paying members only is listed as any other; its page shows what the
site shows a visitor.
"""

import json
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode, urljoin

from parsel import Selector

from crawler.discover.platforms.listing import CountedListing, Known, Normalise, Unavailable

EVIDENCE = "Ghost Content API"
PER_PAGE = 100
FIELDS = "id,url,title,published_at,updated_at"


def content_api(sel: Selector, base: str) -> tuple[str, str] | None:
    """The Content API's root and key the home page shows, or None."""
    for script in sel.xpath("//script[@data-key]"):
        key = (script.attrib.get("data-key") or "").strip()
        api = (script.attrib.get("data-api") or "").strip()
        site = (script.attrib.get("data-sodo-search") or "").strip()
        if key and api:
            return urljoin(base, api).rstrip("/") + "/", key
        if key and site:
            return urljoin(urljoin(base, site).rstrip("/") + "/", "ghost/api/content/"), key
    return None


class GhostListing(CountedListing):
    """One run's listing of a Ghost site's posts (``crawler.discover.platforms.listing.Listing``)."""

    def __init__(self, api: str, key: str, own: Normalise, known: Known):
        super().__init__(own, known)
        self.api, self.key = api, key

    def start(self) -> list[str]:
        if self.known.since is None:
            return [self._ask("posts", self._posts(1))]
        return [self._ask("posts", self._posts(1)), self._ask("count", self._route({"limit": 1, "fields": "id"}))]

    def read(self, url: str, status: int, headers: dict[str, str], body: bytes) -> list[str]:
        what = self.asked[url]
        self.answered.add(url)
        try:
            data = json.loads(body) if status in (200, 304) else None
        except ValueError:
            data = None
        if not isinstance(data, dict) or not isinstance(posts := data.get("posts"), list):
            raise Unavailable(f"{url} answered {status} with no list of posts")
        pagination = (data.get("meta") or {}).get("pagination") or {}
        pages = _int(pagination.get("pages")) or 1
        urls = [(post, link) for post in posts if isinstance(post, dict) and (link := self.own(post.get("url") or ""))]
        more = []
        if what == "posts":
            self.entries.update((link, _entry(post, link)) for post, link in urls)
            if url == self._posts(1):
                more = [self._ask("posts", self._posts(n)) for n in range(2, pages + 1)]
        elif what == "count":
            self.total = _int(pagination.get("total"))
        else:
            self.links = (self.links or set()) | {link for _, link in urls}
            if url == self._links(1):
                more = [self._ask("links", self._links(n)) for n in range(2, pages + 1)]
        return more + self._next()

    def _posts(self, page: int) -> str:
        params: dict[str, Any] = {"limit": PER_PAGE, "page": page, "include": "tags,authors", "fields": FIELDS}
        if self.known.since:
            # from a second before the latest change known: one made in that second is not missed
            since = datetime.fromisoformat(self.known.since.replace("Z", "+00:00")) - timedelta(seconds=1)
            params |= {"filter": f"updated_at:>'{since.strftime('%Y-%m-%d %H:%M:%S')}'", "order": "updated_at desc"}
        return self._route(params)

    def _links(self, page: int) -> str:
        return self._route({"limit": PER_PAGE, "page": page, "fields": "url"})

    def _route(self, params: dict[str, Any]) -> str:
        return f"{self.api}posts/?{urlencode({'key': self.key, **params}, safe=',:')}"

    def _first_links(self) -> str:
        return self._links(1)


def _entry(post: dict[str, Any], url: str) -> dict[str, Any]:
    """The post as a feed entry (``crawler.discover.feeds``) whose evidence is the API."""
    authors = [str(a["name"]) for a in post.get("authors") or [] if isinstance(a, dict) and a.get("name")]
    return {
        "url": url,
        "guid": None,
        "title": (post.get("title") or "").strip() or None,
        "author": ", ".join(authors) or None,
        "published": _utc(post.get("published_at")),
        "published_raw": post.get("published_at") or None,  # with the site's offset: its zone
        "updated": _utc(post.get("updated_at")),
        "tags": [t["name"] for t in post.get("tags") or [] if isinstance(t, dict) and t.get("name")],
        "categories": [],
        "summary": None,
        "content": None,
        "evidence": EVIDENCE,
    }


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _utc(value: Any) -> str | None:
    """``2021-11-10T10:42:07.000+00:00`` (the API's dates) as ISO 8601 UTC."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
