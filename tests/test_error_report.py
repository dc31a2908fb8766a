"""What a crawl's errors tell: the blog's own pages and posts apart from resources on other hosts
(images on a host that does not resolve), in the summary, in the source's status and on the front page."""

import re
import sqlite3
import subprocess
import urllib.request

import pytest
from conftest import BLOGARCHIVE, ROOT, serving
from faultserver import FaultServer, answer

POSTS, IMAGES_PER_POST = 4, 3
BROKEN = 3  # the post that answers 500


def post(i: int) -> bytes:
    paras = "".join(f"<p>Paragraph {n} of post {i}, an ordinary post long enough to be archived.</p>" for n in range(6))
    images = "".join(f'<img src="http://img.invalid/{i}-{j}.png" alt="image {j}">' for j in range(IMAGES_PER_POST))
    return (f'<html lang="en"><head><title>Post {i}</title><meta property="og:type" content="article">'
            f'<meta property="article:published_time" content="2024-05-0{i + 1}T10:00:00+00:00"></head>'
            f"<body><article><h1>Post {i}</h1>{paras}{images}</article></body></html>").encode()


def routes(broken: bool) -> dict:
    links = "".join(f'<a href="/p/{i}/">post {i}</a>' for i in range(POSTS))
    pages = {"/robots.txt": answer(200, b"User-agent: *\n", {"Content-Type": "text/plain"}),
             "/": answer(200, f"<html><head><title>Blog</title></head><body>{links}</body></html>".encode())}
    pages |= {f"/p/{i}/": answer(200, post(i)) for i in range(POSTS)}
    if broken:
        pages[f"/p/{BROKEN}/"] = answer(500, b"oops")
    return pages


@pytest.fixture(scope="module", params=[False, True], ids=["images-elsewhere", "and-a-broken-post"])
def crawled(request, tmp_path_factory):
    db = tmp_path_factory.mktemp("errors") / "a.db"
    with FaultServer(routes(request.param)) as blog:
        proc = subprocess.run([BLOGARCHIVE, "crawl", "http://blog.test/", "--db", str(db), "--delay", "0",
                               "--map-host", f"blog.test={blog.base}"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    conn = sqlite3.connect(db)
    errors = conn.execute("select url from crawl_errors").fetchall()
    [status] = conn.execute("select last_status from sources").fetchone()
    conn.close()
    return request.param, proc, [url for url, in errors], status, db


def test_the_summary_tells_the_blogs_errors_from_other_hosts(crawled):
    broken, proc, errors, _, _ = crawled
    elsewhere = [u for u in errors if u.startswith("http://img.invalid/")]
    assert elsewhere and len(errors) == len(elsewhere) + broken, errors
    assert f"{int(broken)} errors on the blogs, {len(elsewhere)} on other hosts" in proc.stdout, proc.stdout


def test_the_status_is_ok_only_when_the_blogs_own_pages_had_no_error(crawled):
    broken, _, errors, status, _ = crawled
    elsewhere = len(errors) - broken
    assert status == (f"1 errors, {elsewhere} more on other hosts" if broken else f"ok, {elsewhere} errors on other hosts")


def test_the_front_page_never_says_ok_beside_a_blog_whose_pages_failed(crawled):
    broken, _, errors, status, db = crawled
    with serving(db) as base:
        front = urllib.request.urlopen(base + "/", timeout=10).read().decode()
    [row] = re.findall(r'<tr class="(health-\w+)">(.*?)</tr>', front, re.S)
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", row[1], re.S)]
    blog, posts, _, shown, own, other, latest = cells
    assert shown == status and shown.startswith("ok") != broken
    assert row[0] == ("health-warn" if broken else "health-ok")
    assert (own, other) == (str(int(broken)), str(len(errors) - broken))
    assert latest.endswith("http: HTTP 500") if broken else latest == ""  # the image host, not the latest
