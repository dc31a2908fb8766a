"""The exported WARC replayed by a real pywb on 127.0.0.1: each post's original URL answers with
its archived text, a Chinese post, a GBK one and each version of an edited post included."""

import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path

import lxml.html
import pytest
from blogserver import Blog, BlogServer
from conftest import EXPECTED, crawl_args, free_port, rows, run_cli
from testblogs import gbk_blog
from w3lib.encoding import html_to_unicode

# pywb's own venv (make install builds it: pywb's brotlipy would shadow the brotli Scrapy needs)
PYWB = Path(os.environ.get("BLOGARCHIVE_PYWB", Path(__file__).resolve().parents[1] / ".venv-pywb" / "bin")).resolve()
EDIT = "A paragraph added after the first crawl, which only the second version holds."


@pytest.fixture(scope="module")
def archive(site_server, tmp_path_factory) -> Path:
    """The example blog (Chinese posts), the GBK blog, and a blog whose post is edited between two crawls."""
    db = tmp_path_factory.mktemp("replay") / "archive.db"
    run_cli(*crawl_args(f"http://{EXPECTED['host']}/", db, {EXPECTED["host"]: site_server.base}))
    gbk = gbk_blog()
    with gbk.serve() as server:
        run_cli(*crawl_args(gbk.home, db, {gbk.host: server.base}))
    blog = Blog("versions.test", 3)
    with BlogServer(blog) as server:
        run_cli(*crawl_args("http://versions.test/", db, {"versions.test": server.base}))
        time.sleep(1.1)  # the second capture a second later at least: timestamps have second precision
        blog.edit("post-1", EDIT)
        run_cli(*crawl_args("http://versions.test/", db, {"versions.test": server.base}))
    return db


@pytest.fixture(scope="module")
def pywb(archive, tmp_path_factory) -> Iterator[str]:
    """pywb's ``wayback`` serving the exported WARC as the collection ``blogs``; yields its base URL."""
    root = tmp_path_factory.mktemp("pywb")
    warc = root / "blogs.warc.gz"
    run_cli("export", "warc", "-o", str(warc), "--db", str(archive))
    subprocess.run([PYWB / "wb-manager", "init", "blogs"], cwd=root, check=True, capture_output=True)
    subprocess.run([PYWB / "wb-manager", "add", "blogs", str(warc)], cwd=root, check=True, capture_output=True)
    port = free_port()
    log = (root / "wayback.log").open("w")
    proc = subprocess.Popen([PYWB / "wayback", "-p", str(port), "-b", "127.0.0.1"], cwd=root,
                            stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/blogs"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None:
                    raise AssertionError(f"pywb exited: {(root / 'wayback.log').read_text()}") from None
                time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


def replay(base: str, url: str, when: str, mode: str) -> tuple[int, bytes]:
    ts = re.sub(r"\D", "", when)
    try:
        with urllib.request.urlopen(f"{base}/{ts}{mode}/{url}", timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def page_text(body: bytes, content_type: str | None) -> tuple[str, str]:
    """The page's text, whitespace collapsed, and the encoding it was read in (as a browser would)."""
    encoding, html = html_to_unicode(content_type, body)
    return " ".join(lxml.html.fromstring(html).text_content().split()), encoding


def longest_paragraph(text: str) -> str:
    return " ".join(max(text.split("\n"), key=len).split())


def capture(db: Path, url: str) -> dict:
    return rows(db, "select * from captures where url = ? and status = 200 order by id desc limit 1", (url,))[0]


def body_of(db: Path, sha: str) -> bytes:
    return zlib.decompress(rows(db, "select body from capture_bodies where sha256 = ?", (sha,))[0]["body"])


@pytest.mark.parametrize("which", ["chinese", "gbk"])
def test_a_posts_original_url_replays_with_its_text(which, archive, pywb):
    sql = ("select p.*, s.name source from posts p join sources s on s.id = p.source_id "
           "where p.lang = 'zh' and s.url " + ("=" if which == "chinese" else "!=") + " ? order by p.id limit 1")
    post = rows(archive, sql, (f"http://{EXPECTED['host']}/",))[0]
    if which == "gbk":
        assert post["source"] == gbk_blog().host
    shot = capture(archive, post["url"])
    status, body = replay(pywb, post["url"], shot["fetched_at"], "mp_")  # pywb's rewritten replay
    assert status == 200 and post["title"].encode("utf-8" if which == "chinese" else "gbk") in body
    status, raw = replay(pywb, post["url"], shot["fetched_at"], "id_")  # the body as archived
    assert status == 200 and raw == body_of(archive, shot["sha256"])
    text, encoding = page_text(raw, json.loads(shot["headers"]).get("content-type"))
    assert encoding == ("utf-8" if which == "chinese" else "gb18030")
    assert longest_paragraph(post["text"]) in text


def test_each_timestamp_replays_its_version(archive, pywb):
    url = "http://versions.test/p/post-1/"
    shots = rows(archive, "select * from captures where url = ? and status = 200 order by fetched_at", (url,))
    versions = rows(archive, "select v.text from post_versions v join posts p on p.id = v.post_id "
                             "where p.url = ? order by v.id", (url,))
    assert len(shots) == len(versions) == 2 and shots[0]["fetched_at"] < shots[1]["fetched_at"]
    for shot, version in zip(shots, versions):
        status, raw = replay(pywb, url, shot["fetched_at"], "id_")
        assert status == 200 and raw == body_of(archive, shot["sha256"])
        text, _ = page_text(raw, "text/html; charset=utf-8")
        assert longest_paragraph(version["text"]) in text
        assert (EDIT in text) == (EDIT in version["text"])
    assert EDIT in versions[1]["text"] and EDIT not in versions[0]["text"]


def test_a_url_never_archived_is_not_found(pywb):
    assert replay(pywb, f"http://{EXPECTED['host']}/never/archived/", "2024", "id_")[0] == 404
