"""Blogger's feed and Ghost's Content API read as the posts' listing, run after run.

No Blogger server can run here, nor a Ghost one: the listings' answers are responses recorded
from real servers (``tests/platforms/README.md`` says whose, and what was kept), served on
127.0.0.1 with the post pages they point at (minimal pages written here, with no date, author or
tag of their own), each query answered from them as the platform answers it. Each blog is
crawled three times: first, with nothing changed, after a post was deleted. A listing that
cannot be read (no key in the page, 401) leaves the blog to its HTML, with no error.
"""

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import rows, run_cli
from faultserver import FaultServer, Request, Route, answer, send

from archive.core.urls import normalize_url

RECORDED = Path(__file__).parent / "platforms"
BLOGGER_FEED = (RECORDED / "blogger" / "posts.xml").read_bytes()
GHOST_POSTS = json.loads((RECORDED / "ghost" / "posts.json").read_text(encoding="utf-8"))
GHOST_401 = (RECORDED / "ghost" / "unauthorized.json").read_bytes()
GHOST_RECORDED_AT = "http://127.0.0.1:2369"  # where Ghost's tests ran: mapped to the test's host
GHOST_KEY = "8b9c2f3e1d4a5b6c7d8e9f0a1b"
GHOST_HEAD = "<meta name='generator' content='Ghost 5.99'>"


def portal(key: str) -> str:
    """Ghost's Portal script, which shows the Content API's key and root."""
    return ('<script defer src="https://cdn.jsdelivr.net/ghost/portal@~2.50/umd/portal.min.js" data-i18n="true" '
            f'data-ghost="http://ghost.test/" data-key="{key}" data-api="http://ghost.test/ghost/api/content/" '
            'data-locale="en" crossorigin="anonymous"></script>')


def sodo_search(key: str) -> str:
    """Ghost's search script, which shows the key beside the site (its API under ghost/api/content/)."""
    return ('<script defer src="https://cdn.jsdelivr.net/ghost/sodo-search@~1.5/umd/sodo-search.min.js" '
            f'data-key="{key}" data-styles="https://cdn.jsdelivr.net/ghost/sodo-search@~1.5/umd/main.css" '
            'data-sodo-search="http://ghost.test/" crossorigin="anonymous"></script>')


ENTRY = re.compile(rb"\s*<entry>.*?</entry>", re.S)
TEXT = " ".join(["The words of this post, written here so that the page has a body of its own."] * 6)


def page(title: str, head: str = "", links: list[str] = ()) -> bytes:
    """A minimal HTML page: a title, a body, links; no date, author or tag."""
    items = "".join(f'<li><a href="{u}">{u}</a></li>' for u in links)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>{head}</head><body>"
            f"<article><h1>{title}</h1><p>{TEXT}</p></article><ul>{items}</ul></body></html>").encode()


def blogger_feed(gone: set[str]) -> Route:
    """The recorded feed, as Blogger answers a query: the entries updated since ``updated-min``, the
    window ``start-index``, ``max-results``, ``openSearch:totalResults`` counting them; the posts
    whose path is in ``gone`` deleted."""
    def route(conn, request: Request) -> None:
        query = parse_qs(urlsplit(request.path).query)
        start, count = int(query.get("start-index", ["1"])[0]), int(query.get("max-results", ["25"])[0])
        since = query.get("updated-min", [None])[0]
        entries = [e for e in ENTRY.findall(BLOGGER_FEED) if _path(e) not in gone and (
            since is None or _date(re.search(rb"<updated>(.*?)</updated>", e).group(1).decode()) >= _date(since))]
        head = re.sub(rb"<openSearch:totalResults>\d+<", f"<openSearch:totalResults>{len(entries)}<".encode(),
                      ENTRY.sub(b"", BLOGGER_FEED.split(b"<entry>", 1)[0]).rstrip())
        body = head + b"".join(entries[start - 1:start - 1 + count]) + b"\n</feed>\n"
        send(conn, 200, {"Content-Type": "application/atom+xml; charset=UTF-8", "Content-Length": str(len(body))}, body)
    return route


def _path(entry: bytes) -> str:
    return urlsplit(re.search(rb'rel="alternate" type="text/html" href="([^"]+)"', entry).group(1).decode()).path


def ghost_posts(gone: set[str]) -> Route:
    """The recorded posts, as Ghost answers a query: 401 without the key, those updated after the
    ``filter``'s date, the page asked for; the posts whose path is in ``gone`` deleted."""
    def route(conn, request: Request) -> None:
        query = parse_qs(urlsplit(request.path).query)
        if query.get("key") != [GHOST_KEY]:
            send(conn, 401, {"Content-Type": "application/json; charset=utf-8",
                             "Content-Length": str(len(GHOST_401))}, GHOST_401)
            return
        posts = [p for p in GHOST_POSTS["posts"] if urlsplit(p["url"]).path not in gone]
        if match := re.fullmatch(r"updated_at:>'(.+)'", query.get("filter", [""])[0]):
            posts = [p for p in posts if _date(p["updated_at"]) > _date(match.group(1))]
        limit, n = int(query["limit"][0]), int(query["page"][0]) if "page" in query else 1
        fields = query["fields"][0].split(",")
        shown = [{k: v for k, v in p.items() if k in fields or k in query.get("include", [""])[0].split(",")}
                 for p in posts[(n - 1) * limit:n * limit]]
        pages = {"page": n, "limit": limit, "pages": max(1, -(-len(posts) // limit)), "total": len(posts)}
        body = json.dumps({"posts": shown, "meta": {"pagination": {**GHOST_POSTS["meta"]["pagination"], **pages}}})
        body_bytes = body.replace(GHOST_RECORDED_AT, "http://ghost.test").encode()
        send(conn, 200, {"Content-Type": "application/json; charset=utf-8",
                         "Content-Length": str(len(body_bytes))}, body_bytes)
    return route


def post_page(title: str, head: str, path: str, gone: set[str]) -> Route:
    """A post's page, 404 once its path is in ``gone``."""
    def route(conn, request: Request) -> None:
        (answer(404, b"not found") if path in gone else answer(body=page(title, head)))(conn, request)
    return route


def _date(value: str) -> datetime:
    """A date of the feed, the API or a query (Ghost's filter has no zone: UTC)."""
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _utc(value: str) -> str:
    return _date(value).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def blogger_routes(gone: set[str]) -> dict[str, Route]:
    """The blog: its home page, its feed, its posts' pages; the posts whose path is in ``gone`` deleted."""
    links = [m.decode() for m in re.findall(rb'rel="alternate" type="text/html" href="(http://blog\.jgc\.org/20[^"]+)"',
                                            BLOGGER_FEED)]
    titles = [t.decode() for t in re.findall(rb'<title type="text">(.*?)</title>', BLOGGER_FEED)[1:]]
    head = ("<meta content='blogger' name='generator'/>"
            "<link rel='alternate' type='application/atom+xml' href='http://blog.jgc.org/feeds/posts/default'/>")
    routes: dict[str, Route] = {"/": answer(body=page("John Graham-Cumming's blog", head, links)),
                                "/feeds/posts/default": blogger_feed(gone)}
    routes |= {urlsplit(u).path: post_page(t, "", urlsplit(u).path, gone) for u, t in zip(links, titles, strict=True)}
    return routes


def ghost_routes(head: str, gone: set[str] = frozenset(), *, dated: bool = False) -> dict[str, Route]:
    """The site; ``dated``: its pages with the dates Ghost's head gives (``article:published_time``);
    the posts whose path is in ``gone`` deleted."""
    links = [p["url"].replace(GHOST_RECORDED_AT, "http://ghost.test") for p in GHOST_POSTS["posts"]]
    routes: dict[str, Route] = {"/": answer(body=page("A Ghost site", GHOST_HEAD + head, links)),
                                "/ghost/api/content/posts/": ghost_posts(gone)}
    routes |= {urlsplit(u).path: post_page(p["title"], _ghost_dates(p) if dated else "", urlsplit(u).path, gone)
               for u, p in zip(links, GHOST_POSTS["posts"], strict=True)}
    return routes


def _ghost_dates(post: dict) -> str:
    return ('<meta property="og:type" content="article">'
            f'<meta property="article:published_time" content="{post["published_at"]}">'
            f'<meta property="article:modified_time" content="{post["updated_at"]}">')


def crawl(server: FaultServer, host: str, db: Path, *urls: str) -> dict[str, int]:
    """One run of the crawl; the requests it made, by path."""
    server.hits.clear()
    run_cli("crawl", *urls, "--db", str(db), "--delay", "0", "--map-host", f"{host}={server.base}")
    return dict(server.hits)


def archived(db: Path) -> dict[str, dict]:
    return {p["url"]: {"title": p["title"], "published": p["published"], "updated": p["updated"],
                       "author": p["author"], "tags": sorted(json.loads(p["tags"]))}
            for p in rows(db, "select * from posts where gone_at is null")}


@pytest.fixture(scope="module")
def blogger(tmp_path_factory):
    """A Blogger blog's first crawl, a run with nothing changed, a run after a post was deleted (the
    feed recorded from Blogger)."""
    db = tmp_path_factory.mktemp("blogger") / "archive.db"
    gone: set[str] = set()
    with FaultServer(blogger_routes(gone)) as server:
        first = crawl(server, "blog.jgc.org", db, "http://blog.jgc.org/")
        posts = archived(db)
        same = crawl(server, "blog.jgc.org", db)
        gone.add(_path(ENTRY.findall(BLOGGER_FEED)[-1]))
        deleted = crawl(server, "blog.jgc.org", db)
    return {"db": db, "first": first, "posts": posts, "same": same, "deleted": deleted, "gone": gone}


@pytest.fixture(scope="module")
def ghost(tmp_path_factory):
    """A Ghost site's first crawl, a run with nothing changed, a run after a post was deleted (the
    API's answers recorded from Ghost)."""
    db = tmp_path_factory.mktemp("ghost") / "archive.db"
    gone: set[str] = set()
    with FaultServer(ghost_routes(portal(GHOST_KEY), gone)) as server:
        first = crawl(server, "ghost.test", db, "http://ghost.test/")
        posts = archived(db)
        same = crawl(server, "ghost.test", db)
        gone.add(urlsplit(GHOST_POSTS["posts"][-1]["url"]).path)
        deleted = crawl(server, "ghost.test", db)
    return {"db": db, "first": first, "posts": posts, "same": same, "deleted": deleted, "gone": gone}


def gone_posts(db: Path) -> set[str]:
    return {urlsplit(r["url"]).path for r in rows(db, "select url from posts where gone_at is not null")}


def test_blogger_every_listed_post_is_archived_with_the_feeds_title_dates_author_and_labels(blogger):
    """The feed is a real Blogger's first page (blog.jgc.org, recorded; no Blogger server can run here)."""
    want = {}
    for entry in ENTRY.findall(BLOGGER_FEED):
        text = entry.decode()
        url = re.search(r'rel="alternate" type="text/html" href="([^"]+)"', text).group(1)
        want[normalize_url(url)] = {
            "title": " ".join(re.search(r'<title type="text">(.*?)</title>', text).group(1).split()),
            "published": _utc(re.search(r"<published>(.*?)</published>", text).group(1)),
            "updated": _utc(re.search(r"<updated>(.*?)</updated>", text).group(1)),
            "author": "Unknown",  # what Blogger writes for a profile it does not show
            "tags": sorted(re.findall(r'scheme="http://www.blogger.com/atom/ns#" term="([^"]+)"', text)),
        }
    assert len(want) == 3
    assert {u: blogger["posts"].get(u) for u in want} == want
    chosen = rows(blogger["db"], "select distinct field from provenance where origin = 'Blogger feed' and chosen")
    assert {r["field"] for r in chosen} >= {"published", "updated", "title"}
    listing = [p for p in blogger["first"] if p.startswith("/feeds/posts/default?")]
    assert len(listing) == 1, blogger["first"]  # a page not full is the last
    assert all(blogger["first"].get(urlsplit(u).path) for u in want)  # each post's page is still fetched
    assert not rows(blogger["db"], "select * from crawl_errors")


def test_blogger_a_run_with_nothing_changed_asks_the_feed_for_what_changed_since_and_the_count(blogger):
    """The feed recorded from a real Blogger, answered as Blogger answers ``updated-min``."""
    same = blogger["same"]
    listing = sorted(p for p in same if p.startswith("/feeds/posts/default?"))
    assert len(listing) == 2 and "updated-min=2024-06-20T12:38:30Z" in listing[1], same
    assert "max-results=1" in listing[0]  # the count of all posts
    assert sum(same.values()) <= 5, same  # robots.txt, the home page, the two listing requests
    assert not [p for p in same if p.startswith("/2024/")], same


def test_blogger_a_deleted_post_is_seen_by_the_default_run(blogger):
    """The feed recorded from a real Blogger, one of its posts deleted: the count does not add up."""
    assert gone_posts(blogger["db"]) == blogger["gone"]
    assert blogger["deleted"][next(iter(blogger["gone"]))] == 1  # fetched: 404


def test_ghost_every_listed_post_is_archived_with_the_apis_title_dates_author_and_tags(ghost):
    """The API's answers are recorded from a real Ghost (Ghost's own e2e tests; no Ghost server
    can run here), with the dates the recording masks filled in (tests/platforms/README.md)."""
    want = {normalize_url(p["url"].replace(GHOST_RECORDED_AT, "http://ghost.test")): {
        "title": p["title"], "published": _utc(p["published_at"]), "updated": _utc(p["updated_at"]),
        "author": "Joe Bloggs", "tags": sorted(t["name"] for t in p["tags"])} for p in GHOST_POSTS["posts"]}
    assert {u: ghost["posts"].get(u) for u in want} == want
    chosen = rows(ghost["db"], "select distinct field from provenance where origin = 'Ghost Content API' and chosen")
    assert {r["field"] for r in chosen} >= {"published", "updated", "author", "title"}
    api = [p for p in ghost["first"] if p.startswith("/ghost/api/content/posts/")]
    assert len(api) == 1, ghost["first"]
    assert all(ghost["first"].get(urlsplit(u).path) for u in want)  # each post's page is still fetched
    assert not rows(ghost["db"], "select * from crawl_errors")


def test_ghost_a_run_with_nothing_changed_asks_the_api_for_what_changed_since_and_the_count(ghost):
    """The API's answers recorded from a real Ghost, filtered as Ghost filters ``updated_at``."""
    same = ghost["same"]
    api = [p for p in same if p.startswith("/ghost/api/content/posts/")]
    assert len(api) == 2 and any("filter=updated_at" in p for p in api), same
    assert any("limit=1&" in p for p in api)  # the count of all posts
    assert sum(same.values()) <= 5, same  # robots.txt, the home page, the two API requests
    assert not [p for p in same if p.rstrip("/").count("/") == 1 and p != "/" and "." not in p], same


def test_ghost_a_deleted_post_is_seen_by_the_default_run(ghost):
    """The API's answers recorded from a real Ghost, one of its posts deleted: the count does not add up."""
    assert gone_posts(ghost["db"]) == ghost["gone"]
    assert ghost["deleted"][next(iter(ghost["gone"]))] == 1  # fetched: 404


@pytest.mark.parametrize("head", ["", sodo_search("0" * 26)], ids=["no key in the page", "the API answers 401"])
def test_ghost_without_its_api_is_read_from_its_html_with_no_error(tmp_path, head):
    """Recorded from a real Ghost: its 401 to a request without a valid key (no Ghost server can
    run here). A page that shows no key costs no API request; either way the posts are read from
    the HTML, with the dates their pages give."""
    db = tmp_path / "archive.db"
    with FaultServer(ghost_routes(head, dated=True)) as server:
        hits = crawl(server, "ghost.test", db, "http://ghost.test/")
    api = [p for p in hits if p.startswith("/ghost/api/")]
    assert len(api) == (1 if head else 0), hits
    posts = archived(db)
    assert {(p["title"], p["published"]) for p in posts.values()} == {
        (p["title"], _utc(p["published_at"])) for p in GHOST_POSTS["posts"]}
    assert not rows(db, "select * from crawl_errors")
    assert not rows(db, "select * from provenance where origin = 'Ghost Content API'")
