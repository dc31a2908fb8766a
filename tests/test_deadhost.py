"""A blog whose 300 images live on a host that does not resolve (``.invalid`` never does, RFC 2606):
the host is given up after a few failures, each image is recorded once as deferred, and the next
run, with the host back, archives them all."""

import re
import socket
import sqlite3
import subprocess

import pytest
from conftest import BLOGARCHIVE, ROOT
from faultserver import FaultServer, answer

from crawler.fetch.hostdown import DOWN_AFTER
from crawler.settings import CONCURRENT_REQUESTS

POSTS, IMAGES = 10, 300
DEAD = "img.invalid"
PNG = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0" + b"\0" * 64


def post(i: int) -> bytes:
    paras = "".join(f"<p>Paragraph {n} of post {i}, an ordinary post long enough to be archived.</p>" for n in range(6))
    per_post = IMAGES // POSTS
    images = "".join(f'<img src="http://{DEAD}/{j}.png" alt="image {j}">' for j in range(i * per_post, (i + 1) * per_post))
    return (f'<html lang="en"><head><title>Post {i}</title><meta property="og:type" content="article">'
            f'<meta property="article:published_time" content="2024-05-01T10:00:00+00:00"></head>'
            f"<body><article><h1>Post {i}</h1>{paras}{images}</article></body></html>").encode()


def blog_routes() -> dict:
    links = "".join(f'<a href="/p/{i}/">post {i}</a>' for i in range(POSTS))
    routes = {"/robots.txt": answer(200, b"User-agent: *\n", {"Content-Type": "text/plain"}),
              "/": answer(200, f"<html><head><title>Blog</title></head><body>{links}</body></html>".encode())}
    return routes | {f"/p/{i}/": answer(200, post(i)) for i in range(POSTS)}


def crawl(db, blog: str, *extra: str) -> tuple[subprocess.CompletedProcess, dict[str, int]]:
    log = db.with_name(f"crawl{len(list(db.parent.glob('crawl*.log')))}.log")
    proc = subprocess.run([BLOGARCHIVE, "crawl", "http://blog.test/", "--db", str(db), "--delay", "0",
                           "--map-host", f"blog.test={blog}", "--log-file", str(log), *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    stats = {key: int(n) for key, n in re.findall(r"'([a-z_]+/[\w./]+)': (\d+)", log.read_text())}
    return proc, stats


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    db = tmp_path_factory.mktemp("deadhost") / "a.db"
    images = {f"/{j}.png": answer(200, PNG, {"Content-Type": "image/png"}) for j in range(IMAGES)}
    with FaultServer(blog_routes()) as blog:
        first, stats = crawl(db, blog.base)
        conn = sqlite3.connect(db)
        errors = conn.execute("select url, kind, message from crawl_errors").fetchall()
        media = conn.execute("select status, count(*) from media group by status").fetchall()
        conn.close()
        with FaultServer(images) as host:  # the host is back
            second, _ = crawl(db, blog.base, "--map-host", f"{DEAD}={host.base}")
            hits = dict(host.hits)
    return first, stats, errors, media, second, hits, db


def test_the_dead_host_costs_a_few_lookups_not_one_per_image(runs):
    first, stats, *_ = runs
    assert first.returncode == 0, first.stderr[-3000:]
    failed = stats.get("downloader/exception_type_count/scrapy.exceptions.CannotResolveHostError", 0)
    # the failures that came back while the lookups already started were in flight: no more than
    # the crawl sends at once (today each image is looked up three times: 900)
    assert DOWN_AFTER <= failed <= CONCURRENT_REQUESTS
    assert stats["hosts/down"] == 1 and stats["hosts/deferred"] >= IMAGES - CONCURRENT_REQUESTS


def test_each_image_is_recorded_once(runs):
    _, _, errors, media, *_ = runs
    assert media == [("deferred", IMAGES)]
    urls = [url for url, _, _ in errors]
    assert len(urls) == len(set(urls))  # no image has two rows
    kinds = [kind for _, kind, _ in errors]
    assert kinds.count("host-down") == 1 and set(kinds) <= {"host-down", "dns"}
    [message] = [m for _, kind, m in errors if kind == "host-down"]
    assert f"{DEAD} is down" in message and "next run" in message


def test_the_next_run_archives_the_deferred_images(runs):
    *_, second, hits, db = runs
    assert second.returncode == 0, second.stderr[-3000:]
    assert sqlite3.connect(db).execute("select status, count(*) from media group by status").fetchall() == [("ok", IMAGES)]
    assert hits.pop("/robots.txt") == 1 and set(hits.values()) == {1} and len(hits) == IMAGES


def test_an_image_host_that_refuses_connections_is_down_too(tmp_path):
    # its name resolves (mapped to a port nothing listens on): its robots.txt is unreachable, which
    # RFC 9309 reads as "nothing may be fetched"; that was one `robots` refusal per image, never retried
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    with FaultServer(blog_routes()) as blog:
        proc, stats = crawl(tmp_path / "a.db", blog.base, "--map-host", f"{DEAD}=http://127.0.0.1:{closed.getsockname()[1]}")
    closed.close()
    assert proc.returncode == 0, proc.stderr[-3000:]
    conn = sqlite3.connect(tmp_path / "a.db")
    assert conn.execute("select status, count(*) from media group by status").fetchall() == [("deferred", IMAGES)]
    [(kind, message)] = conn.execute("select kind, message from crawl_errors").fetchall()
    assert kind == "host-down" and "it refuses connections (refused: " in message
    assert stats["hosts/down"] == 1


def test_a_host_found_down_is_an_error_once_then_a_count(tmp_path):
    db = tmp_path / "a.db"
    with FaultServer(blog_routes()) as blog:
        first, _ = crawl(db, blog.base)
        conn = sqlite3.connect(db)
        [(status,)] = conn.execute("select last_status from sources").fetchall()
        second, _ = crawl(db, blog.base)
        third, _ = crawl(db, blog.base, "--full")
    assert first.returncode == second.returncode == third.returncode == 0, third.stderr[-3000:]
    assert "0 errors on the blogs, 1 on other hosts, " in first.stdout and status == "ok, 1 errors on other hosts"
    [(status,)] = conn.execute("select last_status from sources").fetchall()
    kinds = conn.execute("select run_id, kind from crawl_errors where run_id > 1").fetchall()
    conn.close()
    assert kinds == [(2, "host-down"), (3, "host-down")]  # recorded every run
    for proc in (second, third):
        assert "0 errors on the blogs, 0 on other hosts, 1 on hosts down since an earlier run, " in proc.stdout, proc.stdout
    assert status == "ok, 1 on hosts down since an earlier run"
