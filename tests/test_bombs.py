"""Every bomb at once, beside ordinary blogs (tests/bomb_blogs.py): compression bombs of each
codec as home pages and as feeds, and entity bombs as feeds, in ONE crawl. The crawl stays
within ARCHIVE_MEMORY_MB (the process tree's summed RSS), records each bomb as what it is
(``too-large``, ``xml-entities``), fetches each URL once, and archives the ordinary blogs whole."""

import re
import sqlite3
import subprocess
import sys

import pytest
from bomb_blogs import BOMBS, ENTITY_BOMBS, POSTS, entity_bomb, post, routes
from conftest import BLOGARCHIVE, ROOT
from faultserver import FaultServer, answer
from hostile_blogs import PeakWatch

from archive.core.xmlsafety import XmlEntitiesError, check_entities
from archive.formats.opml import parse_opml

from crawler.discover.feeds import parse_feed
from crawler.extract.post import extract_post
from crawler.settings import ARCHIVE_MEMORY_MB

ORDINARY = 3


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    blogs = {kind.replace("-", ""): kind for kind in BOMBS} | {f"ordinary{i}": "ordinary" for i in range(ORDINARY)}
    db = tmp_path_factory.mktemp("bombs") / "a.db"
    log = db.with_name("crawl.log")
    with FaultServer(routes(blogs)) as server:
        args = [BLOGARCHIVE, "crawl", "--db", str(db), "--delay", "0", "--log-file", str(log)]
        for name in blogs:
            args += [f"http://{name}.test/{name}/", "--map-host", f"{name}.test={server.base}"]
        running = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        with PeakWatch(running.pid) as watch:
            _, err = running.communicate(timeout=600)
        hits = dict(server.hits)
    conn = sqlite3.connect(db)
    errors = conn.execute("select url, kind, message from crawl_errors").fetchall()
    posts = dict(conn.execute("select url, text from posts").fetchall())
    status = dict(conn.execute("select url, last_status from sources").fetchall())
    conn.close()
    stats = {key: int(n) for key, n in re.findall(r"'(memory/[a-z_]+)': (\d+)", log.read_text())}
    return blogs, errors, posts, status, hits, stats, watch, err


def test_the_whole_process_tree_stays_under_the_memory_budget(crawl):
    *_, watch, _ = crawl
    assert 0 < watch.peak_rss_mb < ARCHIVE_MEMORY_MB, f"peak RSS {watch.peak_rss_mb:.0f} MB, PSS {watch.peak_pss_mb:.0f} MB"


def test_each_bomb_is_recorded_once_as_what_it_is_and_the_rest_is_archived_whole(crawl):
    blogs, errors, posts, status, _, _, _, _ = crawl
    kinds = {}
    for url, kind, message in errors:
        name = url.split("/")[2].split(".")[0]
        assert name not in kinds, (url, kind, message)
        kinds[name] = kind
    expected = {name: "too-large" if kind.split("-")[0] not in ENTITY_BOMBS else "xml-entities"
                for name, kind in blogs.items() if kind != "ordinary"}
    assert kinds == expected
    # a bomb as the home page fails its source, a bomb as its feed does not: its posts are read
    for name, kind in blogs.items():
        assert (status[f"http://{name}.test/{name}/"] == "failed") == kind.endswith("-home"), name
        for i in range(1, POSTS + 1 if not kind.endswith("-home") else 1):
            url = f"http://{name}.test/{name}/p/{i}/"
            assert posts[url] == extract_post(url, post(name, i).decode()).text


def test_every_url_is_fetched_once_and_no_bomb_waits_for_a_lane(crawl):
    blogs, _, _, _, hits, stats, _, _ = crawl
    assert hits.pop("/robots.txt") == len(blogs)
    assert set(hits.values()) == {1}, {path: n for path, n in hits.items() if n > 1}
    # a compression bomb is refused from its first bytes, before it could hold the one lane; the
    # only big page is the entity bomb (9 MB), which is read whole and refused before it is parsed
    assert stats["memory/big_pages"] == 1 and "memory/big_page_waits" not in stats


def test_a_body_past_the_size_cap_without_a_length_is_too_large(tmp_path):
    # no Content-Length: Scrapy cancels the download once its bytes pass the cap, with no message
    def unannounced(conn, request):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n" + b"<p>x</p>" * 300_000)

    home = b'<html><head><title>Home</title></head><body><a href="/p/1/">post</a></body></html>'
    with FaultServer({"/": answer(200, home), "/p/1/": unannounced}) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "scrapy", "crawl", "blog", "-a", "url=http://big.test/", "-s", f"ARCHIVE_PATH={tmp_path / 'a.db'}",
             "-s", f'ARCHIVE_MAP_HOSTS={{"big.test": "{server.base}"}}', "-s", "DOWNLOAD_DELAY=0",
             "-s", "DOWNLOAD_MAXSIZE=1000000", "-s", "RETRY_TIMES=0", "-s", "LOG_LEVEL=WARNING"],
            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [(url, kind, message)] = sqlite3.connect(tmp_path / "a.db").execute("select url, kind, message from crawl_errors")
    assert (url, kind) == ("http://big.test/p/1/", "too-large") and "size cap" in message


@pytest.mark.parametrize("kind", ENTITY_BOMBS)
def test_each_entity_bomb_is_refused_before_it_is_parsed(kind):
    with pytest.raises(XmlEntitiesError):
        parse_feed(entity_bomb(kind, "x"), "http://x.test/feed.xml")
    opml = entity_bomb(kind, "x").replace(b"<rss", b"<opml").replace(b"</rss>", b"</opml>")
    with pytest.raises(XmlEntitiesError):
        parse_opml(opml)


def test_only_entities_that_could_grow_the_document_are_refused():
    # expat stops at the first byte; feedparser's lenient parser would read on and hold every reference
    with pytest.raises(XmlEntitiesError):
        check_entities(b"\0" + entity_bomb("quadratic", "x"))
    # an entity no longer than a reference to it, as hand-written feeds declare &nbsp;, is read
    feed = (b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY nbsp "&#160;"><!ENTITY ndash "&#8211;">]>'
            b'<rss version="2.0"><channel><title>A&nbsp;blog</title><item><title>One&ndash;two</title>'
            b"<link>http://x.test/p/1/</link></item></channel></rss>")
    parsed = parse_feed(feed, "http://x.test/feed.xml")
    assert parsed["title"] == "A\xa0blog" and [e["title"] for e in parsed["entries"]] == ["One\u2013two"]
