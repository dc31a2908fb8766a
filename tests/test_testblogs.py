"""Sanity checks of the generated test blogs themselves (no crawler involved).

They serve every blog over a real RouteServer and check that the ground truth
matches what the pages say, that the quirks each blog promises are really there,
and that every link a crawler could follow leads somewhere on purpose.
"""

import gzip
import html
import http.client
import re
import socket
import warnings
import xml.etree.ElementTree as ET
from collections import deque
from html.parser import HTMLParser
from urllib.parse import quote, urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import feedparser
import pytest
from blogsite import Page, RouteServer, html_page, redirect, route_key
from testblogs import (
    SECRET_PHRASE,
    Blog,
    all_blogs,
    gbk_blog,
    hexo_chinese,
    jekyll_blog,
    trap_blog,
    typecho_blog,
    writing_site,
)

BLOGS = [typecho_blog, writing_site, hexo_chinese, gbk_blog, jekyll_blog, trap_blog]
COUNTS = {"typecho": 12, "essays": 8, "hexo": 9, "gbk": 6, "jekyll": 7, "trap": 5}


@pytest.fixture(params=BLOGS, ids=lambda f: f.__name__)
def blog(request) -> Blog:
    return request.param()


# --- helpers -------------------------------------------------------------------------------


def target_of(path_or_target: str) -> str:
    """A request target with its path percent-encoded as UTF-8 (query left as written)."""
    path, sep, query = path_or_target.partition("?")
    return quote(path, safe="/%") + sep + query


def fetch(server: RouteServer, target: str, method: str = "GET") -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request(method, target_of(target))
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body
    finally:
        conn.close()


def raw_get(server: RouteServer, target: bytes) -> int:
    """Send a request line with raw bytes in it (no encoding at all), return the status."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1])


def charset_of(headers: dict, body: bytes) -> str:
    """The encoding a browser would *like* to use: the page's meta if any, else the header."""
    meta = re.search(rb'charset=["\']?([\w-]+)', body[:1024])
    if meta:
        return meta.group(1).decode()
    m = re.search(r"charset=([\w-]+)", headers.get("content-type", ""))
    return m.group(1) if m else "utf-8"


def text_of(headers: dict, body: bytes) -> str:
    charset = charset_of(headers, body).lower()
    if charset in ("gb2312", "gbk"):
        charset = "gbk"  # what gb2312 labels mean in practice (WHATWG maps them to GBK)
    return html.unescape(body.decode(charset))


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if tag in ("a", "link") and a.get("href"):
            self.links.append(a["href"])
        elif tag in ("img", "script") and a.get("src"):
            self.links.append(a["src"])


def links_of(page_text: str) -> list[str]:
    parser = Links()
    parser.feed(page_text)
    return parser.links


def robots_for(blog: Blog) -> RobotFileParser:
    robots = RobotFileParser()
    page = blog.routes.get("/robots.txt")
    robots.parse(page.body.decode().splitlines() if isinstance(page, Page) else [])
    return robots


def key_of(target: str) -> str:
    """Decoded path, plus ``?query`` if any: how the truth names pages."""
    path, query = route_key(target)
    return path + (f"?{query}" if query else "")


def crawl(blog: Blog, server: RouteServer, limit: int = 400) -> dict[str, tuple[int, str]]:
    """A tiny breadth-first link checker: {key_of(target): (status, page text)} of every
    in-blog URL reachable from the home page (<a>, <link>, <img>, <script>, redirects),
    robots.txt obeyed, ``?sid=`` dropped, one calendar month visited."""
    robots = robots_for(blog)
    seen: dict[str, tuple[int, str]] = {}
    queue = deque([blog.home])
    calendar_done = False
    while queue and len(seen) < limit:
        url = queue.popleft()
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https") or parts.hostname != blog.host:
            continue
        query = "" if parts.query.startswith("sid=") else parts.query
        target = parts.path + (f"?{query}" if query else "")
        key = key_of(target)
        if key in seen or not robots.can_fetch("*", f"http://{blog.host}{parts.path}"):
            continue
        if parts.path == "/calendar/":
            if calendar_done:
                continue
            calendar_done = True
        status, headers, body = fetch(server, target)
        text = ""
        if headers.get("content-type", "").startswith("text/html"):
            text = text_of(headers, body)
            for href in links_of(text):
                queue.append(urljoin(url, href))
        elif 300 <= status < 400:
            queue.append(urljoin(url, headers["location"]))
        seen[key] = (status, text)
    return seen


def post_body_text(blog: Blog, text: str) -> str:
    """The page text with the comments section cut off (every theme puts it after the body)."""
    marks = {"typecho": '<div id="comments">', "essays": '<div id="comments"', "hexo": '<div class="comments"',
             "gbk": '<div id="comments">', "jekyll": '<div class="page__comments">', "trap": '<section id="comments"'}
    return text.split(marks[blog.name])[0]


# --- the server ----------------------------------------------------------------------------


def test_route_server_matches_raw_and_encoded_paths_and_records_requests():
    routes = {
        "/2024/07/30/内存/": html_page("<p>内存</p>"),
        "/?page=2": html_page("page two"),
        "/": html_page("home"),
        "/dyn/": lambda path, query: html_page(f"{path}|{query}") if query != "x=0" else None,
        "/old": redirect("/2024/07/30/内存/"),
    }
    with RouteServer(routes) as server:
        assert server.base == f"http://127.0.0.1:{server.port}"
        assert raw_get(server, "/2024/07/30/内存/".encode()) == 200
        assert raw_get(server, b"/2024/07/30/%E5%86%85%E5%AD%98/") == 200
        assert raw_get(server, b"/2024/07/30/%e5%86%85%e5%ad%98/") == 200
        assert raw_get(server, b"/2024/07/30/%E5%86%85\xe5\xad\x98/") == 200  # mixed
        assert raw_get(server, b"/2024/07/30/%E5%86%85%E5%AD%98") == 404  # no trailing slash
        assert fetch(server, "/?page=2")[2] == b"page two"
        assert fetch(server, "/?utm_source=x")[2] == b"home"  # a path route ignores unknown queries
        assert fetch(server, "/dyn/?a=%41")[2] == b"/dyn/|a=%41"  # query handed over as sent
        assert fetch(server, "/dyn/?x=0")[0] == 404
        status, headers, _ = fetch(server, "/old")
        assert status == 301 and headers["location"] == "/2024/07/30/%E5%86%85%E5%AD%98/"
        assert fetch(server, "/nope")[0] == 404
        assert fetch(server, "/", "HEAD")[2] == b""
        assert fetch(server, "/", "POST")[0] == 405
        requests = server.requests
    assert [r.method for r in requests].count("HEAD") == 1
    assert requests[0].target == "/2024/07/30/内存/" and requests[0].path == "/2024/07/30/内存/"
    assert requests[1].target == "/2024/07/30/%E5%86%85%E5%AD%98/" and requests[1].path == "/2024/07/30/内存/"
    assert requests[0].headers["Host"] == "x"
    assert {r.query for r in requests if r.path == "/dyn/"} == {"a=%41", "x=0"}


def test_route_keys_that_collide_are_refused():
    with pytest.raises(ValueError):
        RouteServer({"/内存/": html_page("a"), "/%E5%86%85%E5%AD%98/": html_page("b")})


# --- every blog ----------------------------------------------------------------------------


def test_truth_is_complete_and_consistent(blog):
    assert len(blog.posts) == COUNTS[blog.name]
    assert blog.home == f"http://{blog.host}/"
    paths = [p["path"] for p in blog.posts]
    assert len(set(paths)) == len(paths)
    assert len({p["phrase"] for p in blog.posts}) == len(paths)
    assert len({p["comment_phrase"] for p in blog.posts}) == len(paths)
    published = [p["published"] for p in blog.posts if p["published"]]
    assert published == sorted(published, reverse=True)  # newest first
    for p in blog.posts:
        assert p["lang"] == blog.lang
        assert p["url"] == blog.url(p["path"])
        assert p["tags"] and p["title"] and p["author"]
        assert not set(p["tags"]) & set(p["categories"])
        if p["published"]:
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", p["published"])
            assert p["published_day"] == p["published_day_utc"] == p["published"][:10]
        else:
            assert p["published_day"] == p["published_day_local"] != p["published_day_utc"]
        assert p["path"] not in blog.non_posts and p["path"] not in blog.aliases
        for other in blog.posts:  # no comment of any post is prose of any post
            assert p["comment_phrase"] not in other["phrase"]


def test_every_route_serves(blog):
    with blog.serve() as server:
        for target, route in blog.routes.items():
            status, headers, body = fetch(server, target)
            if not isinstance(route, Page):  # dynamic: what it answers for no query (None: 404)
                route = route(route_key(target)[0], "") or Page(b"", 404)
            want = route.status
            assert status == want, target
            assert "content-type" in headers, target
            assert int(headers["content-length"]) == len(body)
        assert fetch(server, "/no/such/page/")[0] == 404
        assert len(server.requests) == len(blog.routes) + 1


def test_every_post_answers_200_with_its_title_phrase_and_comment(blog):
    with blog.serve() as server:
        for post in blog.posts:
            status, headers, body = fetch(server, post["path"])
            assert status == 200, post["path"]
            text = text_of(headers, body)
            assert post["title"] in text
            body_part = post_body_text(blog, text)
            assert post["phrase"] in body_part
            assert post["comment_phrase"] not in body_part
            assert text.count(post["comment_phrase"]) == 1  # in the comments, once
            assert post["author"] in text
            for tag in post["tags"]:
                assert tag in body_part
            for category in post["categories"]:
                assert category in body_part


def test_every_link_leads_somewhere_on_purpose_and_every_post_is_reachable(blog):
    with blog.serve() as server:
        seen = crawl(blog, server)
    assert len(seen) < 400
    broken = {k for k, (status, _) in seen.items() if status >= 400}
    assert broken == set(blog.broken)
    reached = {k for k, (status, _) in seen.items() if status == 200}
    reached_paths = {k.split("?")[0] for k in reached}
    assert {p["path"] for p in blog.posts} <= reached
    # non-posts are real pages, linked: /?page=2 by its query, /calendar/ by its path
    for target in blog.non_posts:
        assert target in (reached if "?" in target else reached_paths), target
    # every alias is linked from a page, or from the feed
    feeds = "".join(html.unescape(blog.routes[urlsplit(f).path].body.decode("utf-8", "replace")) for f in blog.feeds)
    for alias in blog.aliases:
        assert key_of(alias) in seen or blog.url(alias) in feeds, alias


def test_never_fetched_paths_are_disallowed_but_linked_from_home(blog):
    robots = robots_for(blog)
    with blog.serve() as server:
        _, headers, body = fetch(server, "/")
    home_paths = [urlsplit(urljoin(blog.home, href)).path for href in links_of(text_of(headers, body))]
    for prefix in blog.never_fetched:
        assert not robots.can_fetch("*", f"http://{blog.host}{prefix}")
        assert any(path.startswith(prefix) for path in home_paths), prefix
    for post in blog.posts:
        assert robots.can_fetch("*", post["url"])


def test_aliases_reach_their_post(blog):
    with blog.serve() as server:
        for alias, canonical in blog.aliases.items():
            status, headers, body = fetch(server, alias)
            if status in (301, 302):
                assert urlsplit(urljoin(blog.url(alias), headers["location"])).path == canonical
                continue
            assert status == 200, alias
            text = text_of(headers, body)
            post = blog.post(canonical)
            if "http-equiv=\"refresh\"" in text:
                assert f"url={blog.url(canonical)}" in text
            else:
                assert post["phrase"] in text
    for url, canonical in blog.alias_urls.items():
        parts = urlsplit(url)
        assert parts.hostname == blog.host and parts.path == canonical


def test_static_routes_are_deterministic(blog):
    fresh = {b.name: b for b in all_blogs()}[blog.name]
    assert fresh.posts == blog.posts
    for target, route in blog.routes.items():
        if isinstance(route, Page):
            assert fresh.routes[target] == route, target


# --- blog by blog --------------------------------------------------------------------------


def test_typecho_quirks():
    blog = typecho_blog()
    with blog.serve() as server:
        assert fetch(server, "/p/370/")[0] == 404
        assert fetch(server, "/robots.txt")[0] == 404
        text = fetch(server, "/p/370")[2].decode()
        assert "og:type" not in text and "ld+json" not in text and 'rel="canonical"' not in text
        assert re.search(r'<article class="post">.*<time datetime="2023-09-14T20:10:00\+02:00">', text, re.DOTALL)
        assert "<title>Reading strace Output Without Losing Your Mind - Lowlevel Notes</title>" in text
        assert "<html class=\"no-js\">" in text
        home = fetch(server, "/")[2].decode()
        assert home.count('<article class="post">') == 5 and home.count(">Read More</a>") == 5
        assert 'href="http://typecho.test/page/2/"' in home


def test_hexo_quirks():
    blog = hexo_chinese()
    with blog.serve() as server:
        home = fetch(server, "/")[2].decode()
        assert '<html lang="en-us">' in home
        assert 'href="/2024/10/03/国庆-折腾-NAS/"' in home  # raw UTF-8 in href
        assert home.count("阅读全文 &raquo;") == 5
        assert 'type="application/atom+xml"' in home
        older = [p for p in blog.posts if p["published"] is None]
        assert [p["path"] for p in older] == [p["path"] for p in blog.posts[5:]]
        assert {p["published_day_utc"] for p in older} == {"2024-07-29", "2024-07-01", "2024-06-10", "2024-05-05"}
        for post in blog.posts:
            page = fetch(server, post["path"])[2].decode()
            assert "datetime" not in page and "published_time" not in page and "ld+json" not in page
            assert re.search(r"发表于</span> <span class=\"post-meta-date\">\d{4}年\d{1,2}月\d{1,2}日</span>", page)
            for other in older:  # older posts are linked from listings only
                assert f'href="{other["path"]}' not in page or other is post
        feed = feedparser.parse(fetch(server, "/atom.xml")[2])
        assert not feed.bozo and len(feed.entries) == 5
        assert [e.link for e in feed.entries] == [p["url"] for p in blog.posts[:5]]
        assert feed.entries[0].published == "2024-10-03T09:05:00+08:00"
        for p in older:
            assert p["path"] not in fetch(server, "/atom.xml")[2].decode()
        page2 = fetch(server, "/page/2/")[2].decode()
        for p in older:
            assert f'href="{p["path"]}"' in page2


def test_gbk_pages_are_gbk_not_utf8_nor_gb2312():
    blog = gbk_blog()
    with blog.serve() as server:
        html_targets = [t for t, r in blog.routes.items()
                        if isinstance(r, Page) and r.headers["Content-Type"].startswith("text/html")]
        assert len(html_targets) == 6 + 3 + 3 + 6 + 3  # posts, listing pages, categories, months, about/guestbook/admin
        for target in [*html_targets, *(t for t in blog.non_posts if t.startswith("/tag.php"))]:
            status, headers, body = fetch(server, target)
            assert status == 200, target
            with pytest.raises(UnicodeDecodeError):
                body.decode("utf-8")
            with pytest.raises(UnicodeDecodeError):
                body.decode("gb2312")  # 镕 is GBK only
            text = body.decode("gbk")
            assert "王镕的小站" in text
            assert re.search(r'<meta http-equiv="Content-Type" content="text/html; charset=(gb2312|gbk)" />', text)
        status, headers, body = fetch(server, "/archives/21.html")
        assert headers["content-type"] == "text/html; charset=ISO-8859-1"
        assert b'charset=gbk" />' in body
        assert "记一次硬盘数据恢复" not in body.decode("iso-8859-1")  # what the header would give
        assert fetch(server, "/archives/15.html")[1]["content-type"] == "text/html"
        assert "李堃" in fetch(server, "/archives/15.html")[2].decode("gbk")
        # tag pages accept GBK and UTF-8 percent-encoding
        assert fetch(server, "/tag.php?tag=%C9%FA%BB%EE")[0] == 200
        assert fetch(server, "/tag.php?tag=%E7%94%9F%E6%B4%BB")[0] == 200
        assert fetch(server, "/tag.php?tag=nothing")[0] == 404


def test_gbk_feed_is_refused_by_expat_and_parsed_by_feedparser_with_a_bozo_flag():
    blog = gbk_blog()
    with blog.serve() as server:
        _, headers, body = fetch(server, "/rss.php")
    assert body.startswith(b'<?xml version="1.0" encoding="gbk"?>')
    assert headers["content-type"] == "text/xml"
    with pytest.raises(UnicodeDecodeError):
        body.decode("utf-8")
    with pytest.raises(ValueError, match="multi-byte encodings are not supported"):
        ET.fromstring(body)
    # What is true with feedparser 6.0.14: it transcodes GBK itself and reads every entry,
    # but flags the feed bozo because text/xml without a charset means us-ascii (RFC 3023).
    feed = feedparser.parse(body, response_headers=headers)
    assert feed.bozo and isinstance(feed.bozo_exception, feedparser.CharacterEncodingOverride)
    assert feed.encoding == "gbk"
    assert [e.title for e in feed.entries] == [p["title"] for p in blog.posts]
    assert [e.link for e in feed.entries] == [p["url"] for p in blog.posts]
    assert all(e.get("tags") is None for e in feed.entries)


def test_feeds_parse_and_match_the_truth():
    expected = {"typecho": 10, "essays": 8, "hexo": 5, "trap": 5}
    for make in (typecho_blog, writing_site, hexo_chinese, trap_blog):
        blog = make()
        (feed_url,) = blog.feeds
        with blog.serve() as server:
            status, headers, body = fetch(server, urlsplit(feed_url).path)
            home = fetch(server, "/")[2].decode()
        assert status == 200
        assert urlsplit(feed_url).path in home  # declared in the home page
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            feed = feedparser.parse(body, response_headers=headers)
        assert not feed.bozo, (blog.name, feed.get("bozo_exception"))
        assert len(feed.entries) == expected[blog.name]
        for entry, post in zip(feed.entries, blog.posts):
            assert entry.title == post["title"]
            assert urlsplit(entry.link).path == urlsplit(post["url"]).path
            stamp = entry.published_parsed
            assert f"{stamp.tm_year:04d}-{stamp.tm_mon:02d}-{stamp.tm_mday:02d}T{stamp.tm_hour:02d}:{stamp.tm_min:02d}:00Z" == post["published"]
        if blog.name == "typecho":
            assert all(e.summary.endswith("...") for e in feed.entries)
            assert {p["path"] for p in blog.posts[10:]} == {"/p/371", "/p/370"}
        if blog.name == "essays":
            for entry, post in zip(feed.entries, blog.posts):
                assert post["phrase"] in entry.content[0].value
                assert [t.term for t in entry.tags] == post["categories"] + post["tags"]
                assert 2 <= len(entry.tags) <= 4
                assert entry.author == post["author"]
        if blog.name == "trap":
            assert all("utm_source=rss" in e.link for e in feed.entries)
            assert [e.id for e in feed.entries] == [p["url"] for p in blog.posts]


def test_jekyll_has_no_feed_and_a_gzip_sitemap():
    blog = jekyll_blog()
    with blog.serve() as server:
        home = fetch(server, "/")[2].decode()
        assert 'rel="alternate"' not in home
        for path in ("/feed.xml", "/atom.xml", "/rss.xml", "/feed", "/feed/", "/index.xml", "/sitemap.xml"):
            status, headers, body = fetch(server, path)
            assert status == 404 and b"Page Not Found" in body
        robots = fetch(server, "/robots.txt")[2].decode()
        (sitemap,) = re.findall(r"^Sitemap: (\S+)$", robots, re.MULTILINE)
        assert sitemap == blog.sitemaps[0]
        index = ET.fromstring(fetch(server, urlsplit(sitemap).path)[2])
        ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
        locs = [e.text for e in index.findall("s:sitemap/s:loc", ns)]
        assert locs == ["http://jekyll.test/sitemap-posts.xml.gz", "http://jekyll.test/sitemap-pages.xml"]
        status, headers, body = fetch(server, "/sitemap-posts.xml.gz")
        assert headers["content-type"] == "application/x-gzip" and "content-encoding" not in headers
        urlset = ET.fromstring(gzip.decompress(body))
        assert [e.text for e in urlset.findall("s:url/s:loc", ns)] == [p["url"] for p in blog.posts]
        pages = ET.fromstring(fetch(server, "/sitemap-pages.xml")[2])
        assert "http://jekyll.test/about/" in [e.text for e in pages.findall("s:url/s:loc", ns)]
        post = fetch(server, blog.posts[0]["path"])[2].decode()
        (ld,) = re.findall(r'<script type="application/ld\+json">(\{"@context": "https://schema.org", "@type": "BlogPosting".*?)</script>', post)
        assert '"datePublished": "2024-08-18T16:20:00-04:00"' in ld and '"keywords": "electronics, raspberry-pi"' in ld
        assert 'og:type" content="article"' in post
        assert 'og:type" content="website"' in fetch(server, "/about/")[2].decode()
        assert fetch(server, "/page2/")[0] == fetch(server, "/page3/")[0] == 200


def test_trap_calendar_never_ends_and_session_ids_change():
    blog = trap_blog()
    with blog.serve() as server:
        for direction, steps in (("next", 60), ("prev", 60)):
            month, months = "2024-06", set()
            for _ in range(steps):
                status, _, body = fetch(server, f"/calendar/?month={month}")
                assert status == 200
                months.add(month)
                (month,) = re.findall(rf'href="/calendar/\?month=([-\d]+)" rel="{direction}"', body.decode())
            assert len(months) == steps and month not in months
        for month, follow, expect in (("9999-12", "next", "10000-01"), ("0001-01", "prev", "0000-12"), ("0000-01", "prev", "-001-12")):
            body = fetch(server, f"/calendar/?month={month}")[2].decode()
            assert f'href="/calendar/?month={expect}" rel="{follow}"' in body
            assert fetch(server, f"/calendar/?month={expect}")[0] == 200
        assert fetch(server, "/calendar/?month=2024-13")[0] == 404
        assert fetch(server, "/calendar/?month=june")[0] == 404
        sids = [set(re.findall(r"\?sid=([0-9a-f]{16})", fetch(server, "/")[2].decode())) for _ in range(2)]
        assert len(sids[0]) == 4 and not sids[0] & sids[1]
        status, headers, body = fetch(server, "/files/paper.pdf")
        assert headers["content-type"] == "application/pdf" and body.startswith(b"%PDF-1.4") and body.rstrip().endswith(b"%%EOF")
        assert fetch(server, "/images/diagram.png")[2].startswith(b"\x89PNG")
        assert fetch(server, "/post/link-rot")[1]["location"] == "/post/link-rot/"
        assert fetch(server, "/2019/01/old-slug.html")[1]["location"] == "http://trap.test/post/small-web/"
        home = fetch(server, "/")[2].decode()
        for needle in ('href="/private/secret-post/"', 'href="mailto:', 'href="tel:', 'href="javascript:',
                       'href="HTTP://TRAP.TEST:80/post/link-rot/"', "utm_source=twitter&amp;utm_medium=social"):
            assert needle in home
        secret = fetch(server, "/private/secret-post/")[2].decode()
        assert 'og:type" content="article"' in secret and SECRET_PHRASE in secret
        assert server.requested("/private/")  # what the check below looks for
    # the link checker obeys robots.txt: the secret post is never requested
    with blog.serve() as server:
        crawl(blog, server)
        assert not server.requested("/private/")
