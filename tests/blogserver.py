"""A test blog whose content and HTTP behaviour a test changes between crawls.

``Blog`` is the content (posts with dates and text) rendered as a home page,
listing pages, post pages, a feed of the newest five, a sitemap and
robots.txt. The feed (``feed``) is Atom with ``updated`` dates, RSS with the
full content and ``pubDate``, RSS with a summary and no dates at all, or
none (``atom_too``: and the same posts in Atom at ``/atom.xml``); the
sitemap is one ``urlset``, or (``sitemap_index=N``) an index whose
``lastmod`` never moves over children of N posts each; each post's ``lastmod``
is its time (``lastmod="time"``) or its day alone (``"date"``). An edit can leave the
post's page as it was (a stale cache in front of it) while the feed shows it.
``BlogServer`` serves it on 127.0.0.1 and logs every request
with its conditional headers. Its ``validators`` say how it answers them:

- ``honest``: ETag from the body, Last-Modified from the post's edit time,
  304 when they match;
- ``liar``: an ETag that changes on every request, Last-Modified a year
  ahead, and a 304 to any conditional request whatever changed;
- ``flaky``: an ETag that changes on every request, no Last-Modified;
- ``sticky``: honest, except that post pages keep the same ETag forever and
  answer 304 to it whatever changed (a stale cache in front of them).
"""

import hashlib
import http.server
import itertools
import random
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime, parsedate_to_datetime

WORDS = (
    "archive crawler feed sitemap version history listing page server header cache request "
    "response body hash change delete restore capture extract text markdown title author date "
    "sqlite index search query table schema migration lock signal timer service schedule"
).split()
PER_PAGE = 3
FEED_SIZE = 5
FEEDS = ("atom", "rss-full", "rss-summary", None)
LASTMODS = {"time": "%Y-%m-%dT%H:%M:%S+00:00", "date": "%Y-%m-%d"}
SUMMARY_WORDS = 12


@dataclass
class Post:
    slug: str
    title: str
    published: datetime
    text: str
    updated: datetime | None = None
    modified: datetime = field(default_factory=lambda: datetime(2024, 1, 1, tzinfo=timezone.utc))
    shown: str | None = None  # the text its page shows, when that is not its text (a stale cache)


def words(seed: str, n: int = 180) -> str:
    """Deterministic filler text: three paragraphs of ``n`` words in all."""
    rng = random.Random(seed)
    out = [rng.choice(WORDS) for _ in range(n)]
    third = n // 3
    return "\n\n".join(" ".join(out[i : i + third]).capitalize() + "." for i in range(0, n, third))


class Blog:
    def __init__(self, host: str, count: int, *, sitemap: bool = True, feed: str | None = "atom", sitemap_index: int = 0,
                 lastmod: str = "time", atom_too: bool = False):
        assert feed in FEEDS, feed
        assert lastmod in LASTMODS, lastmod
        self.host = host
        self.sitemap = sitemap
        self.feed = feed
        self.sitemap_index = sitemap_index
        self.lastmod = LASTMODS[lastmod]
        self.atom_too = atom_too  # a second feed of the same posts, Atom at /atom.xml, declared too
        start = datetime(2024, 1, 1, 9, tzinfo=timezone.utc)
        self.posts = [
            Post(f"post-{i}", f"Post number {i} on {host}", start + timedelta(days=10 * i), words(f"{host}-{i}"))
            for i in range(1, count + 1)
        ]

    def add(self, n: int) -> Post:
        post = Post(f"post-{n}", f"Post number {n} on {self.host}", self.posts[-1].published + timedelta(days=10),
                    words(f"{self.host}-{n}"))
        self.posts.append(post)
        return post

    def edit(self, slug: str, extra: str, *, on_page: bool = True) -> None:
        """Add a paragraph to a post; ``on_page=False``: its page goes on showing the old text."""
        post = self.post(slug)
        if not on_page:
            post.shown = post.text
        post.text += "\n\n" + extra
        post.updated = datetime.now(timezone.utc).replace(microsecond=0)
        if on_page:
            post.modified = post.updated

    def delete(self, slug: str) -> None:
        self.posts.remove(self.post(slug))

    def post(self, slug: str) -> Post:
        return next(p for p in self.posts if p.slug == slug)

    def newest(self) -> list[Post]:
        return sorted(self.posts, key=lambda p: p.published, reverse=True)

    # -- rendering -------------------------------------------------------------

    def render(self, path: str) -> tuple[str, bytes, datetime] | None:
        """Content type, body and last modification of ``path``, or None."""
        newest = self.newest()
        latest = max((p.modified for p in newest), default=datetime(2024, 1, 1, tzinfo=timezone.utc))
        if path == "/robots.txt":
            line = f"Sitemap: http://{self.host}/sitemap.xml\n" if self.sitemap else ""
            return "text/plain", f"User-agent: *\nAllow: /\n{line}".encode(), latest
        if (path == "/feed.xml" and self.feed == "atom") or (path == "/atom.xml" and self.atom_too):
            return "application/atom+xml", self._feed(newest[:FEED_SIZE]).encode(), latest
        if path == "/feed.xml" and self.feed:
            return "application/rss+xml", self._rss(newest[:FEED_SIZE]).encode(), latest
        if path == "/sitemap.xml" and self.sitemap and self.sitemap_index:
            return "application/xml", self._index().encode(), datetime(2024, 1, 1, tzinfo=timezone.utc)
        if path == "/sitemap.xml" and self.sitemap:
            return "application/xml", self._sitemap(newest).encode(), latest
        for number, chunk in enumerate(self._children(), 1):
            if path == f"/sitemap-{number}.xml":
                return "application/xml", self._sitemap(chunk).encode(), max(p.modified for p in chunk)
        if path == "/" or (path.startswith("/page/") and path.strip("/").split("/")[-1].isdigit()):
            number = 1 if path == "/" else int(path.strip("/").split("/")[-1])
            chunk = newest[(number - 1) * PER_PAGE : number * PER_PAGE]
            if not chunk:
                return None
            more = len(newest) > number * PER_PAGE
            return "text/html; charset=utf-8", self._listing(chunk, number, more).encode(), latest
        for post in self.posts:
            if path == f"/p/{post.slug}/":
                return "text/html; charset=utf-8", self._post(post).encode(), post.modified
        return None

    def _head(self, title: str, extra: str = "") -> str:
        kind = "atom" if self.feed == "atom" else "rss"
        link = f'<link rel="alternate" type="application/{kind}+xml" href="http://{self.host}/feed.xml">' if self.feed else ""
        if self.atom_too:
            link += f'<link rel="alternate" type="application/atom+xml" href="http://{self.host}/atom.xml">'
        return f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>{link}{extra}</head>'

    def _listing(self, posts: list[Post], number: int, more: bool) -> str:
        items = "".join(f'<li><a href="/p/{p.slug}/">{p.title}</a> {p.published:%Y-%m-%d}</li>' for p in posts)
        older = f'<a href="/page/{number + 1}/">Older posts</a>' if more else ""
        return self._head(f"{self.host}, page {number}") + f"<body><h1>{self.host}</h1><ul>{items}</ul>{older}</body></html>"

    def _post(self, post: Post) -> str:
        meta = (
            f'<meta property="og:type" content="article"><meta property="og:title" content="{post.title}">'
            f'<meta property="article:published_time" content="{post.published.isoformat()}">'
        )
        paragraphs = _paragraphs(post.text if post.shown is None else post.shown)
        return (
            self._head(post.title, meta)
            + f'<body><nav><a href="/">Home</a></nav><article><h1>{post.title}</h1>{paragraphs}</article></body></html>'
        )

    def _feed(self, posts: list[Post]) -> str:
        entries = "".join(
            f"<entry><id>tag:{self.host},{p.slug}</id><title>{p.title}</title>"
            f'<link href="http://{self.host}/p/{p.slug}/"/>'
            f"<published>{p.published.isoformat()}</published>"
            f"<updated>{(p.updated or p.published).isoformat()}</updated></entry>"
            for p in posts
        )
        return (
            '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
            f"<title>{self.host}</title><id>http://{self.host}/</id>"
            f'<link href="http://{self.host}/"/><updated>2024-01-01T00:00:00Z</updated>{entries}</feed>'
        )

    def _rss(self, posts: list[Post]) -> str:
        def item(p: Post) -> str:
            link = f"http://{self.host}/p/{p.slug}/"
            if self.feed == "rss-summary":
                summary = " ".join(p.text.split()[:SUMMARY_WORDS]) + " ..."
                return f"<item><title>{p.title}</title><link>{link}</link><description>{summary}</description></item>"
            return (f"<item><title>{p.title}</title><link>{link}</link><guid>{link}</guid>"
                    f"<pubDate>{format_datetime(p.published, usegmt=True)}</pubDate>"
                    f"<content:encoded><![CDATA[{_paragraphs(p.text)}]]></content:encoded></item>")

        return (
            '<?xml version="1.0" encoding="utf-8"?><rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">'
            f"<channel><title>{self.host}</title><link>http://{self.host}/</link><description>A test blog</description>"
            + "".join(item(p) for p in posts) + "</channel></rss>"
        )

    def _children(self) -> list[list[Post]]:
        """The index's children: the posts, oldest first, ``sitemap_index`` to a child."""
        if not (self.sitemap and self.sitemap_index):
            return []
        posts = sorted(self.posts, key=lambda p: p.published)
        return [posts[i : i + self.sitemap_index] for i in range(0, len(posts), self.sitemap_index)]

    def _index(self) -> str:
        children = "".join(
            f"<sitemap><loc>http://{self.host}/sitemap-{n}.xml</loc><lastmod>2024-01-01</lastmod></sitemap>"
            for n in range(1, len(self._children()) + 1)
        )
        return f'<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{children}</sitemapindex>'

    def _sitemap(self, posts: list[Post]) -> str:
        urls = "".join(
            f"<url><loc>http://{self.host}/p/{p.slug}/</loc><lastmod>{(p.updated or p.published).strftime(self.lastmod)}</lastmod></url>"
            for p in posts
        )
        return f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'


def _paragraphs(text: str) -> str:
    return "".join(f"<p>{p}</p>" for p in text.split("\n\n"))


@dataclass
class Hit:
    path: str
    status: int
    conditional: bool  # the request carried If-None-Match or If-Modified-Since
    at: float


class Handler(http.server.BaseHTTPRequestHandler):
    server: "_HTTPServer"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        srv = self.server.owner
        path = self.path.split("?", 1)[0]
        conditional = bool(self.headers.get("If-None-Match") or self.headers.get("If-Modified-Since"))
        status, headers, body = srv.answer(path, self.headers)
        with srv.lock:
            srv.hits.append(Hit(path, status, conditional, time.monotonic()))
        if srv.delay:
            time.sleep(srv.delay)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _HTTPServer(http.server.ThreadingHTTPServer):
    owner: "BlogServer"


class BlogServer:
    """A ``Blog`` on 127.0.0.1, on a free port, in a thread."""

    def __init__(self, blog: Blog, *, validators: str = "honest", feed_max_age: int | None = None, delay: float = 0):
        self.blog = blog
        self.validators = validators
        self.feed_max_age = feed_max_age
        self.delay = delay
        self.hits: list[Hit] = []
        self.retry_after: dict[str, list[str]] = {}  # path -> Retry-After values to answer 429 with, in turn
        self.lock = threading.Lock()
        self.counter = itertools.count(1)
        self.httpd = _HTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.owner = self
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "BlogServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def take_hits(self) -> list[Hit]:
        with self.lock:
            hits, self.hits = self.hits, []
        return hits

    def answer(self, path: str, request_headers: object) -> tuple[int, dict[str, str], bytes]:
        with self.lock:
            pending = self.retry_after.get(path)
            if pending:
                return 429, {"Retry-After": pending.pop(0), "Content-Type": "text/plain"}, b"slow down"
        rendered = self.blog.render(path)
        if rendered is None:
            return 404, {"Content-Type": "text/html"}, b"<html><body>Not found</body></html>"
        ctype, body, modified = rendered
        headers = {"Content-Type": ctype, "Date": format_datetime(datetime.now(timezone.utc), usegmt=True)}
        if self.feed_max_age is not None and path == "/feed.xml":
            headers["Cache-Control"] = f"max-age={self.feed_max_age}"
        inm = request_headers.get("If-None-Match")  # type: ignore[attr-defined]
        ims = request_headers.get("If-Modified-Since")  # type: ignore[attr-defined]
        if self.validators == "sticky" and path.startswith("/p/"):
            headers["ETag"] = '"v1"'
            if inm == '"v1"':
                return 304, headers, b""
        elif self.validators in ("honest", "sticky"):
            headers["ETag"] = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
            headers["Last-Modified"] = format_datetime(modified, usegmt=True)
            if inm == headers["ETag"] or (inm is None and ims and parsedate_to_datetime(ims) >= modified.replace(microsecond=0)):
                return 304, headers, b""
        elif self.validators == "flaky":
            headers["ETag"] = f'"{next(self.counter)}"'
        elif self.validators == "liar":
            headers["ETag"] = f'"{next(self.counter)}"'
            headers["Last-Modified"] = format_datetime(datetime.now(timezone.utc) + timedelta(days=365), usegmt=True)
            if inm or ims:
                return 304, headers, b""
        return 200, headers, body
