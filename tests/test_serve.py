"""`blogarchive serve`: a real Datasette process on a crawled archive."""

import json
import socket
import subprocess
import time
import urllib.request
from urllib.parse import quote

import pytest

from conftest import BLOGARCHIVE, EXPECTED


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def datasette(example_archive):
    port = free_port()
    proc = subprocess.Popen(
        [BLOGARCHIVE, "serve", "--db", str(example_archive), "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(base + "/-/versions.json", timeout=2)
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError("datasette did not start: " + proc.communicate()[1])
            time.sleep(0.2)
    yield base + "/" + example_archive.stem
    proc.terminate()
    proc.communicate(timeout=10)


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        return json.load(response)


def titles(rows):
    return sorted(r["title"] for r in rows)


def test_runs_datasette_065(datasette):
    versions = get_json(datasette.rsplit("/", 1)[0] + "/-/versions.json")
    assert versions["datasette"]["version"].startswith("0.65")


def test_posts_newest_first(datasette):
    rows = get_json(datasette + "/posts.json?_shape=array")
    assert len(rows) == len(EXPECTED["posts"])
    published = [r["published"] for r in rows]
    assert published == sorted(published, reverse=True)


def test_english_search_box(datasette):
    rows = get_json(datasette + "/posts.json?_shape=array&_search=sqlite")
    assert "Notes on SQLite WAL Mode" in titles(rows)
    assert "Being a Polite Crawler with Scrapy" not in titles(rows)


def test_chinese_search_canned_query(datasette):
    rows = get_json(datasette + "/search.json?_shape=array&q=" + quote("内存"))
    assert titles(rows) == ["记一次 Node.js 服务的内存泄漏排查"]
    rows = get_json(datasette + "/search.json?_shape=array&q=" + quote("数据库索引"))
    assert titles(rows) == ["数据库索引的几点笔记"]


def test_facets_and_metadata(datasette):
    data = get_json(datasette + "/posts.json?_facet_size=10")
    facets = data["facet_results"]
    assert {"source_id", "tags", "lang"} <= set(facets)
    langs = {f["value"]: f["count"] for f in facets["lang"]["results"]}
    assert langs == {"en": 5, "zh": 2}
    tags = {f["value"] for f in facets["tags"]["results"]}
    assert {"笔记", "databases", "tools"} <= tags
    with urllib.request.urlopen(datasette + "/posts", timeout=10) as response:
        html = response.read().decode()
    assert "One row per post" in html
