"""One crawl of twenty blogs that send what a crawler's memory fears (tests/hostile_blogs.py):
bodies of 11.5 and 19 MB, a 64 GiB brotli bomb, a page of 500,000 links, a feed of 100,000
entries and a real post of 15 MB, each kind from several sources at once. The crawl finishes,
refuses only what the 20 MB cap refuses, cuts what the per-page limits cut (recorded), and
archives each real post whole. Its big pages (over 1 MB) go through the memory budget's one
lane (crawler.fetch.budget) one at a time, none dropped.

The peak of the crawl's whole process tree (summed RSS, sampled from /proc) stays under the
default ARCHIVE_MEMORY_MB; `python tests/hostile_blogs.py` prints the peak of each input alone
and of the six kinds and the twenty sources at once (docs/reliability.md, "The memory budget")."""

import re
import sqlite3
import subprocess

import pytest
from conftest import BLOGARCHIVE, ROOT
from faultserver import FaultServer, answer
from hostile_blogs import POSTS, TWENTY, PeakWatch, big, real_post, routes

from crawler.extract.post import extract_post
from crawler.fetch.budget import COMPRESSION
from crawler.memory import BIG_PAGE_BYTES
from crawler.settings import ARCHIVE_MEMORY_MB
from crawler.spiders.blog import READ_HEAD, READ_TAIL

pytestmark = pytest.mark.slow  # a crawl of twenty blogs, and posts of megabytes


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    blogs = {f"{kind.replace('-', '')}{n}": kind for n, kind in enumerate(TWENTY)}
    db = tmp_path_factory.mktemp("hostile") / "a.db"
    log = db.with_name("crawl.log")
    with FaultServer(routes(blogs)) as server:
        args = [BLOGARCHIVE, "crawl", "--db", str(db), "--delay", "0", "--log-file", str(log)]
        for name in blogs:
            args += [f"http://{name}.test/{name}/", "--map-host", f"{name}.test={server.base}"]
        running = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        with PeakWatch(running.pid) as watch:
            out, err = running.communicate(timeout=600)
        proc = subprocess.CompletedProcess(args, running.returncode, out, err)
    conn = sqlite3.connect(db)
    errors = conn.execute("select url, kind, message from crawl_errors").fetchall()
    posts = dict(conn.execute("select url, text from posts").fetchall())
    pages = {url for url, in conn.execute("select url from pages")}
    conn.close()
    stats = {key: int(n) for key, n in re.findall(r"'((?:memory|extract)/[a-z_]+)': (\d+)", log.read_text())}
    return proc, blogs, errors, posts, pages, stats, watch


def test_the_crawl_finishes_and_the_real_post_is_archived_whole(crawl):
    proc, blogs, _, posts, _, _, _ = crawl
    assert proc.returncode == 0, proc.stderr[-3000:]
    real = [name for name, kind in blogs.items() if kind == "real-15mb"]
    expected = extract_post(f"http://{real[0]}.test/{real[0]}/p/1/", real_post().decode()).text
    assert len(expected) > 14_000_000 and len(real) == 3
    for name in real:
        for i in range(1, POSTS + 1):
            assert posts[f"http://{name}.test/{name}/p/{i}/"] == expected


def test_only_the_size_cap_refuses_and_the_limits_cut_what_they_say(crawl):
    _, blogs, errors, _, _, _, _ = crawl
    kinds = {(url.split("/")[2].split(".")[0], kind) for url, kind, _ in errors}
    refused = {"br-bomb": "too-large", "links": "cut", "feed": "feed"}
    assert kinds == {(name, refused[kind]) for name, kind in blogs.items() if kind in refused}
    messages = {kind: message for _, kind, message in errors}
    assert "more than 10000 links: only the first 10000 read" in messages["cut"]
    assert "more than 5000 entries: only the first 5000 read" in messages["feed"]


def test_big_pages_go_through_one_lane_at_a_time_and_none_is_dropped(crawl):
    _, blogs, _, _, pages, stats, _ = crawl
    # the default ARCHIVE_MEMORY_MB (512) gives one lane; a page found big while it was taken
    # was stopped and fetched again once it was free
    assert stats["memory/big_pages_at_once"] == 1
    assert stats["memory/big_page_waits"] >= 1
    linked = {f"http://{name}.test/{name}/p/{i}/" for name, kind in blogs.items() if kind != "br-bomb"
              for i in range(1, POSTS + 1)}
    assert linked <= pages  # every page judged: none dropped on its way through the lane


def test_a_fresh_worker_waits_for_the_big_post_to_be_written(crawl):
    _, blogs, _, _, _, stats, _ = crawl
    # each real post's worker was replaced (what its parse grew given back), and its replacement
    # started only once the post was written, however long the write took on a busy machine: the
    # write and a warming worker are never both at their largest
    real_posts = POSTS * sum(kind == "real-15mb" for kind in blogs.values())
    assert stats["extract/workers_recycled"] >= real_posts
    assert stats["extract/starts_held"] >= real_posts
    assert stats.get("memory/starts_during_writes", 0) == 0


def test_a_compressed_page_is_known_big_before_its_decompression(tmp_path):
    # 11.5 MB of markup in 99 kB of gzip: its length at the headers says small (eight times 99 kB is
    # under 1 MB); its size measured a chunk at a time, before Scrapy decompresses it, says big
    db, log = tmp_path / "a.db", tmp_path / "crawl.log"
    assert len(big(int(11.5 * 1024 * 1024))) * COMPRESSION < BIG_PAGE_BYTES
    with FaultServer(routes({"big": "big-11mb"})) as server:
        proc = subprocess.run([BLOGARCHIVE, "crawl", "http://big.test/big/", "--db", str(db), "--delay", "0",
                               "--map-host", f"big.test={server.base}", "--log-file", str(log)],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    stats = {key: int(n) for key, n in re.findall(r"'((?:memory|httpcompression)/[a-z_]+)': (\d+)", log.read_text())}
    assert stats["memory/big_page_waits"] >= 1  # the second post came while the first held the one lane
    # each post took the lane once, and was decompressed once: the one that came too early was let go
    # compressed, and fetched again for the lane
    assert stats["memory/big_pages"] == stats["httpcompression/response_count"] == POSTS
    judged = {url for url, in sqlite3.connect(db).execute("select url from pages")}
    assert {f"http://big.test/big/p/{i}/" for i in range(1, POSTS + 1)} <= judged


def test_the_whole_process_tree_stays_under_the_memory_budget(crawl):
    *_, watch = crawl
    # the blogarchive command, the crawl's process and its extraction worker, each page counted in
    # every process that maps it (the summed PSS, which counts it once, is lower still)
    assert 0 < watch.peak_rss_mb < ARCHIVE_MEMORY_MB, (
        f"peak RSS {watch.peak_rss_mb:.0f} MB, PSS {watch.peak_pss_mb:.0f} MB: {watch.at_peak}")


def test_a_huge_post_in_gbk_behind_a_wrong_charset_is_archived_whole_and_readable(tmp_path):
    # a 2.6 MB post in GBK that the server calls UTF-8: the crawl's process judges it from its first
    # 2 MB and last 250 kB alone, and the worker gets its bytes and the encoding the crawl chose
    title = "一篇很长的笔记"
    paras = "".join(f"<p>第{i}段：归档保存每一段文字，从头到尾，一个字也不少。</p>\n" for i in range(45_000))
    page = (f'<html><head><meta charset="gbk"><title>{title}</title>'
            f'<meta property="og:title" content="{title}">'
            '<meta property="article:published_time" content="2024-05-01T10:00:00+08:00"></head>'
            f"<body><article><h1>{title}</h1>{paras}<p>最后一段。</p></article></body></html>").encode("gbk")
    assert len(page) > READ_HEAD + READ_TAIL
    home = '<html><head><meta charset="utf-8"><title>笔记</title></head><body><a href="/n/p/1/">笔记</a></body></html>'
    db = tmp_path / "a.db"
    routes = {"/robots.txt": answer(200, b"User-agent: *\n", {"Content-Type": "text/plain"}),
              "/n/": answer(200, home.encode()), "/n/p/1/": answer(200, page)}  # the header says utf-8
    with FaultServer(routes) as server:
        proc = subprocess.run([BLOGARCHIVE, "crawl", "http://n.test/n/", "--db", str(db), "--delay", "0",
                               "--map-host", f"n.test={server.base}"], cwd=ROOT, capture_output=True, text=True,
                              timeout=300)
    assert proc.returncode == 0, proc.stderr
    row = sqlite3.connect(db).execute("select title, text from posts where url = 'http://n.test/n/p/1/'").fetchone()
    assert row is not None
    expected = extract_post("http://n.test/n/p/1/", page.decode("gbk")).text
    assert row == (title, expected) and expected.endswith("最后一段。") and "第44999段" in expected
