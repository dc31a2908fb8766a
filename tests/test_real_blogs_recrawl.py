"""The three real blogs in ../shared, crawled again with nothing changed: almost free.

Served by Python's http.server, which answers If-Modified-Since with 304 (it
sends no ETag). Times are measured by the closing report, never asserted.
"""

import sqlite3
from pathlib import Path

import pytest
from conftest import StaticServer, crawl_args, run_cli
from truth import REAL_BLOGS, blog_info, blog_names

pytestmark = pytest.mark.skipif(not REAL_BLOGS.is_dir(), reason=f"no real blogs at {REAL_BLOGS}")


def table(db: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="module", params=blog_names() if REAL_BLOGS.is_dir() else [])
def recrawled(request, tmp_path_factory, real_blog_archive) -> dict:
    name = request.param
    info = blog_info(name)
    db = real_blog_archive(name, tmp_path_factory.mktemp(name) / "archive.db")  # the first crawl
    with StaticServer(REAL_BLOGS / name / "site") as server:
        args = crawl_args(info["original_site"], db, {h: server.base for h in info["internal_hosts"]})
        first = table(db, "select * from posts order by id")
        run_cli(*args)
        second = table(db, "select * from posts order by id")
        run_cli(*args, "--recheck")
    runs = table(db, "select requests, not_modified, extractions, versions, status from crawl_runs order by id")
    return {"name": name, "db": db, "first": first, "second": second, "runs": runs}


def test_no_change_recrawl_fetches_a_handful_and_extracts_nothing(recrawled):
    first, second, _ = recrawled["runs"]
    assert first[2] > 10  # the first crawl extracted every post
    requests, not_modified, extractions, versions, status = second
    assert (extractions, versions, status) == (0, 0, "finished")
    assert 0 < requests <= 6
    assert not_modified >= 2  # at least the home page and the feed answered 304
    assert recrawled["second"] == recrawled["first"]


def test_recheck_revalidates_every_post_without_extracting(recrawled):
    *_, (_, not_modified, extractions, versions, status) = recrawled["runs"]
    posts = len(recrawled["first"])
    assert (extractions, versions, status) == (0, 0, "finished")
    assert not_modified >= posts
    assert table(recrawled["db"], "select count(*) from post_versions") == [(posts,)]
