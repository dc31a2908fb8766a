"""WordPress: its REST API lists every published post, 100 at a time, with its dates, author and terms.

Found from the home page: ``<link rel="https://api.w.org/">`` or the same relation in its
``Link`` header, whose target is the API's root: ``/wp-json/`` with pretty permalinks,
``/?rest_route=/`` with plain ones. Without authentication the API lists only published posts
(no private post, draft or scheduled one); a post behind a password is listed with its content
withheld (``content.protected``), and its entry carries none.

- First run (nothing known): every page of ``/wp/v2/posts``, ordered by date.
- Later runs: the posts modified since the latest change the archive holds
  (``modified_after``, newest change first), and the count of all posts (``X-WP-Total`` of a
  one-post page). When the count is not the posts known plus the new ones, something left:
  every post's link is listed (``_fields=id,link``) and the known ones it lacks are ``absent``.
  A run where nothing changed costs these two requests.
- The names of the categories, tags and authors the listed posts use, once per run
  (``include=`` up to 100 ids a request); a blog that hides its users keeps the pages' authors.
"""

import html
import json
import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode, urljoin, urlsplit

from parsel import Selector

from crawler.discover.platforms.listing import CountedListing, Known, Listed, Normalise, Unavailable

EVIDENCE = "WordPress REST API"
API_REL = "https://api.w.org/"
PER_PAGE = 100
POST_FIELDS = "id,link,title,date,date_gmt,modified_gmt,author,categories,tags,content"
NAMES = {"categories": "categories", "tags": "tags", "author": "users"}  # a post's field -> the route of its names
LINK_HEADER = re.compile(r'<([^>]+)>\s*;\s*rel="?https://api\.w\.org/"?')
TAG = re.compile(r"<[^>]+>")


def api_root(headers: Mapping[str, str], sel: Selector, base: str) -> str | None:
    """The REST API's root the home page declares (its ``Link`` header or ``<link>``), or None."""
    match = LINK_HEADER.search(headers.get("link") or "")
    href = match.group(1) if match else sel.xpath(f'//link[@rel="{API_REL}"]/@href').get()
    return urljoin(base, href.strip()) if href and href.strip() else None


def api_resource(url: str) -> bool:
    """A REST API resource (``<link rel="alternate" type="application/json">`` on every post and page)."""
    parts = urlsplit(url)
    return "/wp-json/" in parts.path or "rest_route=" in parts.query


def route(root: str, path: str, params: dict[str, Any]) -> str:
    """The URL of ``path`` (``/wp/v2/posts``) under the API's ``root``, pretty or plain."""
    query = urlencode(params, safe=",:")
    if "rest_route=" in root:
        return f"{root.split('?')[0]}?rest_route={quote(path)}&{query}"
    return f"{root.rstrip('/')}{path}?{query}"


class WordPressListing(CountedListing):
    """One run's listing of a WordPress blog's posts (``crawler.discover.platforms.listing.Listing``);
    besides posts, count and links, it asks for the names of categories, tags and users."""

    def __init__(self, root: str, own: Normalise, known: Known):
        super().__init__(own, known)
        self.root = root
        self.items: dict[int, dict[str, Any]] = {}
        self.names: dict[str, dict[int, str]] = {route: {} for route in NAMES.values()}
        self.named = False

    def start(self) -> list[str]:
        if self.known.since is None:
            return [self._ask("posts", self._posts(1))]
        return [self._ask("posts", self._posts(1)),
                self._ask("count", route(self.root, "/wp/v2/posts", {"per_page": 1, "_fields": "id"}))]

    def read(self, url: str, status: int, headers: dict[str, str], body: bytes) -> list[str]:
        what = self.asked[url]
        self.answered.add(url)
        data = _json(body) if status in (200, 304) else None
        if what in self.names:
            for item in data if isinstance(data, list) else []:  # a blog may hide its users: no names, no error
                self.names[what][item["id"]] = html.unescape(str(item.get("name") or "")).strip()
            return self._next()
        if not isinstance(data, list):
            raise Unavailable(f"{url} answered {status} with no list of posts")
        pages = _int(headers.get("x-wp-totalpages"))
        more = []
        if what == "posts":
            self.items.update((item["id"], item) for item in data if item.get("link"))
            if url == self._posts(1):
                more = [self._ask("posts", self._posts(n)) for n in range(2, (pages or 1) + 1)]
        elif what == "count":
            self.total = _int(headers.get("x-wp-total"))
        elif what == "links":
            self.links = (self.links or set()) | {u for item in data if (u := self.own(item.get("link") or ""))}
            if url == self._links(1):
                more = [self._ask("links", self._links(n)) for n in range(2, (pages or 1) + 1)]
        return more + self._next()

    def result(self) -> Listed:
        self.entries = {url: self._entry(item, url) for item in self.items.values() if (url := self.own(item["link"]))}
        return super().result()

    def _posts(self, page: int) -> str:
        params: dict[str, Any] = {"per_page": PER_PAGE, "page": page, "_fields": POST_FIELDS}
        if self.known.since:
            # from a second before the latest change known: one made in that second is not missed
            since = datetime.fromisoformat(self.known.since.replace("Z", "+00:00")) - timedelta(seconds=1)
            params |= {"modified_after": since.strftime("%Y-%m-%dT%H:%M:%SZ"), "orderby": "modified", "order": "desc"}
        return route(self.root, "/wp/v2/posts", params)

    def _links(self, page: int) -> str:
        return route(self.root, "/wp/v2/posts", {"per_page": PER_PAGE, "page": page, "_fields": "id,link"})

    def _next(self) -> list[str]:
        """Once the posts and the count are read: every link when the count does not add up, and the names."""
        if any(url not in self.answered for url, what in self.asked.items() if what in ("posts", "count")):
            return []
        more = []
        listed = {u for item in self.items.values() if (u := self.own(item["link"]))}
        if self.total is not None and self.links is None and "links" not in self.asked.values() \
                and self.total != len(self.known.urls | listed):
            more.append(self._ask("links", self._links(1)))
        if not self.named:
            self.named = True
            # the posts new or changed: the one listed again for its change in the second before is neither
            fresh = [item for item in self.items.values() if self.own(item["link"]) not in self.known.urls
                     or (_utc(item.get("modified_gmt")) or "") > (self.known.since or "")]
            for field, name_route in NAMES.items():
                ids = sorted({i for item in fresh for i in _ids(item.get(field))})
                for start in range(0, len(ids), PER_PAGE):
                    chunk = ",".join(map(str, ids[start:start + PER_PAGE]))
                    more.append(self._ask(name_route, route(self.root, f"/wp/v2/{name_route}",
                                                            {"include": chunk, "per_page": PER_PAGE, "_fields": "id,name"})))
        return more

    def _entry(self, item: dict[str, Any], url: str) -> dict[str, Any]:
        """The post as a feed entry (``crawler.discover.feeds``) whose evidence is the API."""
        content = item.get("content") or {}
        published, updated = _utc(item.get("date_gmt")), _utc(item.get("modified_gmt"))
        return {
            "url": url,
            "guid": None,
            "title": html.unescape(TAG.sub("", (item.get("title") or {}).get("rendered") or "")).strip() or None,
            "author": self.names["users"].get(item.get("author") or 0),
            "published": published,
            # the local time with its offset: the blog's zone, as a feed's dates teach it
            "published_raw": _local(item.get("date"), item.get("date_gmt")) or published,
            "updated": updated,
            "tags": [n for i in _ids(item.get("tags")) if (n := self.names["tags"].get(i))],
            "categories": [n for i in _ids(item.get("categories")) if (n := self.names["categories"].get(i))],
            "summary": None,
            # withheld behind a password: no text at all, never the words the page hides
            "content": None if content.get("protected") else content.get("rendered") or None,
            "evidence": EVIDENCE,
        }


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _int(value: str | None) -> int | None:
    return int(value) if value and value.strip().isdigit() else None


def _ids(value: Any) -> list[int]:
    values = value if isinstance(value, list) else [value]
    return [v for v in values if isinstance(v, int) and v > 0]


def _utc(value: Any) -> str | None:
    """``2024-05-01T08:30:00`` (the API's ``*_gmt``, without a zone) as ISO 8601 UTC."""
    if not isinstance(value, str) or not value or value.startswith("0000"):
        return None
    try:
        return datetime.fromisoformat(value).strftime("%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None


def _local(local: Any, gmt: Any) -> str | None:
    """The local time with the offset the two times differ by: ``2024-05-01T16:30:00+08:00``."""
    try:
        offset = datetime.fromisoformat(local) - datetime.fromisoformat(gmt)
    except (TypeError, ValueError):
        return None
    minutes = round(offset.total_seconds() / 60)
    sign = "-" if minutes < 0 else "+"
    return f"{local}{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
