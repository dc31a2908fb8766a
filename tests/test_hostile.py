"""Hostile sites: internal addresses behind redirects, non-http links, robots.txt that fails,
feeds that try XML tricks. Everything is served on 127.0.0.1; nothing else is ever contacted."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from faultserver import FaultServer, answer

HOST = "evil.test"
ARTICLE = "".join(f"<p>Paragraph {i} of an ordinary post that is long enough to be extracted as an article.</p>" for i in range(8))


def page(title: str, extra: str = "") -> bytes:
    return (f'<html lang="en"><head><title>{title}</title><meta property="og:type" content="article">'
            f'<meta property="article:published_time" content="2024-05-01T10:00:00+00:00"></head>'
            f"<body><article><h1>{title}</h1>{ARTICLE}{extra}</article></body></html>").encode()


def crawl(db, base: str, *, url: str = f"http://{HOST}/", log_level: str = "WARNING") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "blog", "-a", f"url={url}",
         "-s", f"ARCHIVE_PATH={db}", "-s", f'ARCHIVE_MAP_HOSTS={{"{HOST}": "{base}"}}',
         "-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=0", "-s", f"LOG_LEVEL={log_level}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )


def rows(db, sql):
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql)]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def ssrf(tmp_path_factory):
    """A blog whose pages redirect to an internal server, by every spelling of its address."""
    with FaultServer({"/secret": answer(200, page("Internal secret"))}) as internal:
        port = internal.base.rsplit(":", 1)[1]
        targets = {
            "decimal": f"http://2130706433:{port}/secret",
            "hex": f"http://0x7f000001:{port}/secret",
            "octal": f"http://0177.0.0.1:{port}/secret",
            "ipv6": f"http://[::1]:{port}/secret",
            "localhost": f"http://localhost:{port}/secret",
            "private": "http://10.20.30.40/secret",
            "metadata": "http://169.254.169.254/latest/meta-data/",
        }
        links = "".join(f'<a href="/go/{name}/">{name}</a>' for name in targets)
        links += '<a href="file:///etc/passwd">f</a><a href="ftp://127.0.0.1/x">ftp</a><a href="data:text/html,hi">d</a>'
        routes = {f"/go/{name}/": answer(302, b"", {"Location": target}, reason="Found") for name, target in targets.items()}
        routes["/p/1/"] = answer(200, page("An honest post"))
        routes["/"] = answer(200, page("Home of the evil blog", links + '<a href="/p/1/">post</a>'))
        db = tmp_path_factory.mktemp("ssrf") / "ssrf.db"
        with FaultServer(routes) as blog:
            proc = crawl(db, blog.base, url=f"http://user:hunter2@{HOST}/", log_level="DEBUG")
        return proc, dict(internal.hits), db, targets


def test_redirects_to_internal_addresses_are_refused(ssrf):
    proc, internal_hits, db, targets = ssrf
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert internal_hits == {}
    refused = {e["url"]: e["message"] for e in rows(db, "select * from crawl_errors where kind = 'refused'")}
    for name, target in targets.items():
        assert any("internal address" in m for u, m in refused.items() if u.startswith(target.split("/secret")[0].split("/latest")[0])), name


def test_only_http_links_are_followed_and_the_honest_post_is_kept(ssrf):
    proc, _, db, _ = ssrf
    assert [p["title"] for p in rows(db, "select title from posts")] == ["An honest post"]
    assert "file:///etc/passwd" not in proc.stderr.split("Crawled")[-1]
    assert not rows(db, "select * from pages where url not like 'http://evil.test/%'")


def test_credentials_in_urls_are_neither_stored_nor_logged(ssrf):
    proc, _, db, _ = ssrf
    assert "hunter2" not in proc.stderr
    assert rows(db, "select url from sources") == [{"url": f"http://{HOST}/"}]


@pytest.mark.parametrize("robots,posts,failed", [
    (answer(503, b"down", reason="Service Unavailable"), 0, True),
    (answer(200, bytes(range(256)) * 8, {"Content-Type": "text/plain"}), 1, False),
    (answer(404, b"none", reason="Not Found"), 1, False),
], ids=["robots-5xx-disallows-all", "robots-garbage-allows", "robots-404-allows"])
def test_robots_policy(tmp_path, robots, posts, failed):
    routes = {"/robots.txt": robots, "/": answer(200, page("Home", '<a href="/p/1/">post</a>')), "/p/1/": answer(200, page("Post"))}
    with FaultServer(routes) as server:
        crawl(tmp_path / "r.db", server.base)
        hits = dict(server.hits)
    assert len(rows(tmp_path / "r.db", "select * from posts")) == posts
    status = rows(tmp_path / "r.db", "select last_status from sources")[0]["last_status"]
    assert (status == "failed") == failed
    if failed:
        assert set(hits) == {"/robots.txt"}
        [error] = rows(tmp_path / "r.db", "select * from crawl_errors where kind = 'seed'")
        assert "RFC 9309" in error["message"] and "503" in error["message"]


def test_robots_disallowing_the_feed(tmp_path):
    routes = {
        "/robots.txt": answer(200, b"User-agent: *\nDisallow: /feed.xml\n", {"Content-Type": "text/plain"}),
        "/": answer(200, page("Home", '<a href="/p/1/">post</a>').replace(
            b"<head>", b'<head><link rel="alternate" type="application/rss+xml" href="/feed.xml">')),
        "/feed.xml": answer(200, b"<rss/>", {"Content-Type": "application/rss+xml"}),
        "/p/1/": answer(200, page("Post")),
    }
    with FaultServer(routes) as server:
        crawl(tmp_path / "f.db", server.base)
        hits = dict(server.hits)
    assert "/feed.xml" not in hits
    assert [p["title"] for p in rows(tmp_path / "f.db", "select title from posts")] == ["Post"]
    [error] = rows(tmp_path / "f.db", "select * from crawl_errors")
    assert (error["kind"], error["url"]) == ("robots", f"http://{HOST}/feed.xml")


LAUGHS = "".join(f'<!ENTITY l{i} "{"&l%d;" % (i - 1) * 10}">' for i in range(1, 10))


@pytest.mark.parametrize("doctype", [
    '<!DOCTYPE rss [<!ENTITY l0 "lol">' + LAUGHS + "]>",
    '<!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/hostname">]>',
    '<!DOCTYPE rss SYSTEM "{internal}/evil.dtd">',
], ids=["billion-laughs", "external-entity", "external-dtd"])
def test_xml_tricks_in_feeds_are_never_resolved(tmp_path, doctype):
    with FaultServer({"/evil.dtd": answer(200, b'<!ENTITY xxe "pwned">')}) as internal:
        head = doctype.format(internal=internal.base)
        entity = "&l9;" if "l9" in head else "&xxe;"
        feed = (f'<?xml version="1.0"?>{head}<rss version="2.0"><channel><title>{entity}</title>'
                f'<item><title>Entity {entity}</title><link>http://{HOST}/p/1/</link><description>{entity}</description></item>'
                "</channel></rss>").encode()
        routes = {
            "/": answer(200, page("Home").replace(b"<head>", b'<head><link rel="alternate" type="application/rss+xml" href="/feed.xml">')),
            "/feed.xml": answer(200, feed, {"Content-Type": "application/rss+xml"}),
            "/p/1/": answer(200, page("Post")),
        }
        with FaultServer(routes) as server:
            proc = crawl(tmp_path / "x.db", server.base)
        assert internal.hits == {}
    assert proc.returncode == 0
    hostname = Path("/etc/hostname").read_text().strip() if Path("/etc/hostname").exists() else "\0"
    for post in rows(tmp_path / "x.db", "select * from posts"):
        assert "lollol" not in (post["summary"] or "") + (post["text"] or "")
        assert hostname not in (post["summary"] or "") + (post["title"] or "")
        assert "pwned" not in (post["summary"] or "") + (post["title"] or "")


def test_dns_rebinding_never_reaches_the_internal_address(tmp_path):
    """rebind.test answers a public address to the first lookup (the check), 127.0.0.1 to the next ones."""
    seen_hosts = []

    def record(route):
        def recorded(conn, request):
            seen_hosts.append(request.headers.get("Host", ""))
            route(conn, request)
        return recorded

    with FaultServer({"/robots.txt": record(answer(404, b"")), "/secret": record(answer(200, page("Internal secret")))}) as internal:
        port = internal.base.rsplit(":", 1)[1]
        routes = {"/": answer(200, page("Home", '<a href="/go/">go</a><a href="/p/1/">post</a>')),
                  "/go/": answer(302, b"", {"Location": f"http://rebind.test:{port}/secret"}, reason="Found"),
                  "/p/1/": answer(200, page("An honest post"))}
        with FaultServer(routes) as blog:
            connects = tmp_path / "connects"
            env = {**os.environ, "CONTROLLED_DNS": json.dumps({"rebind.test": ["93.184.216.34", "127.0.0.1"]}),
                   "CONTROLLED_CONNECTS": str(connects)}
            proc = subprocess.run(
                [sys.executable, str(ROOT / "tests" / "controlled_net.py"), "crawl", "blog", "-a", f"url=http://{HOST}/",
                 "-s", f"ARCHIVE_PATH={tmp_path / 'a.db'}", "-s", f'ARCHIVE_MAP_HOSTS={{"{HOST}": "{blog.base}"}}',
                 "-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=0", "-s", "RETRY_TIMES=0", "-s", "LOG_LEVEL=INFO"],
                cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not [h for h in seen_hosts if h.startswith("rebind.test")]
    assert [p["title"] for p in rows(tmp_path / "a.db", "select title from posts")] == ["An honest post"]
    # the connection went to the address that was checked, and nowhere else outside loopback
    assert set(connects.read_text().split()) == {f"93.184.216.34:{port}"}
