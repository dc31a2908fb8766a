"""End to end: the CLI crawls the example blog on 127.0.0.1 into a real archive."""

import json
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from conftest import EXPECTED, ROOT, crawl_args, rows, run_cli


def posts_by_path(db: Path) -> dict[str, dict]:
    return {urlsplit(p["url"]).path: p for p in rows(db, "select * from posts")}


def test_every_post_archived_once_with_its_metadata(example_archive):
    posts = posts_by_path(example_archive)
    expected = {p["path"]: p for p in EXPECTED["posts"]}
    assert set(posts) == set(expected)
    for path, want in expected.items():
        got = posts[path]
        assert got["url"] == f"http://{EXPECTED['host']}{path}"
        assert got["title"] == want["title"]
        assert got["author"] == want["author"]
        assert got["published"] == want["published"]
        assert json.loads(got["tags"]) == want["tags"]
        assert got["lang"] == want["lang"]
        assert got["word_count"] > 100


def test_no_listing_tag_or_about_page_is_a_post(example_archive):
    posts = posts_by_path(example_archive)
    assert not set(EXPECTED["non_posts"]) & set(posts)
    kinds = {urlsplit(r["url"]).path: r["kind"] for r in rows(example_archive, "select * from pages")}
    for path in EXPECTED["non_posts"]:
        assert kinds[path] in ("listing", "page"), path


def test_feed_fills_guid_and_pages_beyond_the_feed_are_found(example_archive):
    posts = posts_by_path(example_archive)
    # The feed lists the five newest posts only; the two oldest come from the listing pages.
    assert posts["/p/107/"]["guid"] == "example-notes-107"
    assert posts["/p/101/"]["guid"] is None
    assert "Great post, thanks" not in posts["/p/101/"]["text"]
    assert posts["/p/101/"]["markdown"].startswith("# Writing Posts in Plain Markdown")


def test_source_and_run_are_recorded(example_archive):
    (source,) = rows(example_archive, "select * from sources")
    assert source["kind"] == "home"
    assert json.loads(source["feeds"]) == [f"http://{EXPECTED['host']}/feed.xml"]
    assert json.loads(source["sitemaps"]) == [f"http://{EXPECTED['host']}/sitemap.xml"]
    assert source["last_status"] == "ok"
    (run,) = rows(example_archive, "select * from crawl_runs")
    assert run["status"] == "finished"
    assert run["posts_new"] == len(EXPECTED["posts"])
    assert run["pages"] > len(EXPECTED["posts"])
    # robots.txt forbids /search/: never fetched, never archived
    assert not rows(example_archive, "select * from pages where url like '%/search/%'")


def test_second_crawl_duplicates_nothing(example_archive, site_server, tmp_path):
    db = tmp_path / "twice.db"
    args = crawl_args(f"http://{EXPECTED['host']}/", db, {EXPECTED["host"]: site_server.base})
    run_cli(*args)
    first = {p["url"]: p["content_hash"] for p in rows(db, "select * from posts")}
    proc = run_cli(*args)
    # incremental: nothing changed, so no post was fetched again
    assert "posts 0 new, 0 updated, 0 unchanged" in proc.stdout
    assert {p["url"]: p["content_hash"] for p in rows(db, "select * from posts")} == first
    # --full fetches every page again, without validators; the same bodies need no extraction;
    # robots.txt is asked for once: the spider's reading of it gets that first answer
    proc = run_cli(*args, "--full")
    assert "posts 0 new, 0 updated, 0 unchanged; 20 pages, 0 files, 0 errors on the blogs, 0 on other hosts" in proc.stdout
    assert "; 19 requests, " in proc.stdout
    assert ", 0 extractions, 0 new versions" in proc.stdout
    assert {p["url"]: p["content_hash"] for p in rows(db, "select * from posts")} == first


def test_crawl_without_url_crawls_the_sources(site_server, tmp_path):
    db = tmp_path / "sources.db"
    run_cli("add", f"http://{EXPECTED['host']}/", "--name", "notes", "--db", str(db))
    run_cli("crawl", "--db", str(db), "--delay", "0", "--map-host", f"{EXPECTED['host']}={site_server.base}")
    assert len(rows(db, "select * from posts")) == len(EXPECTED["posts"])
    assert "notes\thttp://example-notes.test/" in run_cli("sources", "--db", str(db)).stdout


def test_feed_url_as_source_archives_the_whole_blog(site_server, tmp_path):
    db = tmp_path / "feed.db"
    run_cli(*crawl_args(f"http://{EXPECTED['host']}/feed.xml", db, {EXPECTED["host"]: site_server.base}))
    (source,) = rows(db, "select * from sources")
    assert source["kind"] == "feed"
    # A feed holds the newest posts only: the pages they link to lead to the rest.
    posts = posts_by_path(db)
    assert set(posts) == {p["path"] for p in EXPECTED["posts"]}
    assert {path for path, p in posts.items() if p["guid"]} == {f"/p/{n}/" for n in range(103, 108)}


def test_sitemap_url_as_source_archives_its_posts(site_server, tmp_path):
    db = tmp_path / "sitemap.db"
    run_cli(*crawl_args(f"http://{EXPECTED['host']}/sitemap.xml", db, {EXPECTED["host"]: site_server.base}))
    assert set(posts_by_path(db)) == {p["path"] for p in EXPECTED["posts"]}


def test_scrapy_crawl_runs_the_same_crawl_and_shows_progress(site_server, tmp_path):
    db = tmp_path / "scrapy.db"
    host_map = json.dumps({EXPECTED["host"]: site_server.base})
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "blog", "-a", f"url=http://{EXPECTED['host']}/",
         "-s", f"ARCHIVE_PATH={db}", "-s", f"ARCHIVE_MAP_HOSTS={host_map}", "-s", "DOWNLOAD_DELAY=0.05",
         "-s", "AUTOTHROTTLE_ENABLED=0", "-s", "ARCHIVE_PROGRESS_INTERVAL=0.2", "-s", "LOG_LEVEL=WARNING"],
        cwd=ROOT, check=True, timeout=300, capture_output=True, text=True,
    )
    assert set(posts_by_path(db)) == {p["path"] for p in EXPECTED["posts"]}
    assert re.search(r"progress: \d+ pages and 0 files fetched, \d+ posts saved, \d+ errors", proc.stderr)


def test_unreachable_blog_is_a_recorded_failure(tmp_path):
    db = tmp_path / "down.db"
    # Port 9 (discard) on loopback: nothing listens, the connection is refused.
    proc = run_cli("crawl", "http://127.0.0.1:9/", "--db", str(db), "--delay", "0", check=False)
    assert proc.returncode == 1
    (error,) = rows(db, "select * from crawl_errors")
    assert error["kind"] == "seed" and "refused" in error["message"].lower()
    assert rows(db, "select last_status from sources") == [{"last_status": "failed"}]


def test_a_crawl_without_map_host_says_nothing_about_its_own_wiring(site_server, tmp_path):
    proc = run_cli("crawl", site_server.base + "/", "--db", str(tmp_path / "a.db"), "--delay", "0")
    assert [line for line in proc.stderr.splitlines() if "WARNING" in line] == []
    assert "Disabled" not in proc.stderr and "Traceback" not in proc.stderr
