"""The default crawl on changing blogs: every edit and deletion the blog announces, each document once.

Each test crawls a test blog (``tests/blogserver.py``) once, changes it as a
blog does (new posts, edits, deletions), runs the default crawl once, and
asserts the archive (versions, ``gone_at``) and the exact requests of that
run, each path with its status: none is asked twice. A last run, with
nothing changed, makes at most 10 requests.
"""

import contextlib
import json
import sqlite3
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from blogserver import Blog, BlogServer
from conftest import rows, run_cli, serving
from test_incremental import crawl, posts, versions

EDIT = "An edited paragraph, which the blog announces in its feed or its sitemap."
NO_CHANGE_MAX_REQUESTS = 10


@dataclass
class Outcome:
    db: Path
    hits: dict[str, int]  # path -> status of the run after the change (each path once)
    before: dict[str, dict]
    after: dict[str, dict]
    new_versions: list[tuple[str, str]]
    quiet: list[str]  # the paths of a run with nothing changed

    def url(self, path: str) -> str:
        return next(u for u in self.after if u.endswith(path))

    def gone(self) -> set[str]:
        return {u for u, p in self.after.items() if p["gone_at"]}


def changed_run(db: Path, blog: Blog, change: Callable[[Blog], None]) -> Outcome:
    with BlogServer(blog) as server:
        servers = {blog.host: server}
        crawl(db, servers)
        server.take_hits()
        before, old_versions = posts(db), versions(db)
        time.sleep(1)  # an edit comes at least a second after the last check (dates have second precision)
        change(blog)
        crawl(db, servers)
        hits = server.take_hits()
        after = posts(db)
        new_versions = versions(db)[len(old_versions):]
        crawl(db, servers)
        quiet = [h.path for h in server.take_hits()]
    paths = [h.path for h in hits]
    assert len(paths) == len(set(paths)), f"requested twice: {sorted(paths)}"
    assert len(quiet) <= NO_CHANGE_MAX_REQUESTS, quiet
    assert len(quiet) == len(set(quiet)), quiet
    (run,) = rows(db, "select * from crawl_runs order by id desc limit 1")
    assert (run["status"], run["extractions"], run["versions"]) == ("finished", 0, 0)
    return Outcome(db, {h.path: h.status for h in hits}, before, after, new_versions, quiet)


@contextlib.contextmanager
def edit_archive(db: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(db)
    try:
        with conn:
            yield conn
    finally:
        conn.close()


def get_json(url: str) -> list[dict]:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def assert_edited(outcome: Outcome, *paths: str) -> None:
    """Exactly these posts changed, each with one new ``text`` version holding the edit."""
    edited = {outcome.url(p) for p in paths}
    assert sorted(v for v in outcome.new_versions if v[1] != "new") == sorted((u, "text") for u in edited)
    for url in edited:
        assert EDIT in outcome.after[url]["text"], url
        assert EDIT not in outcome.before[url]["text"], url
    for url in set(outcome.before) - edited:
        assert outcome.after[url]["text"] == outcome.before[url]["text"], url


def test_a_sitemap_index_with_a_constant_lastmod_over_changed_children(tmp_path):
    blog = Blog("index.test", 12, sitemap_index=5)  # the feed lists post-8 to post-12

    def change(b: Blog) -> None:
        b.edit("post-2", EDIT)  # in sitemap-1.xml
        b.edit("post-7", EDIT)  # in sitemap-2.xml

    out = changed_run(tmp_path / "archive.db", blog, change)
    assert out.hits == {
        "/robots.txt": 304, "/": 304, "/feed.xml": 304,
        "/sitemap.xml": 304,  # the index did not change, nor did its lastmod
        "/sitemap-1.xml": 200, "/sitemap-2.xml": 200, "/sitemap-3.xml": 304,
        "/p/post-2/": 200, "/p/post-7/": 200,
    }
    assert_edited(out, "/p/post-2/", "/p/post-7/")
    assert out.gone() == set()


def test_an_edit_in_the_second_of_the_post_s_last_check_is_seen(tmp_path):
    """A sitemap's ``lastmod`` and a check's time both have a second's precision: an edit stamped
    with the second of the check may have come after it."""
    db = tmp_path / "archive.db"
    blog = Blog("second.test", 12)  # the feed lists post-8 to post-12: post-2 only the sitemap
    with BlogServer(blog) as server:
        servers = {blog.host: server}
        crawl(db, servers)
        (checked,) = rows(db, "select checked_at from fetches where url = 'http://second.test/p/post-2/'")
        blog.edit("post-2", EDIT)
        post = blog.post("post-2")
        post.updated = post.modified = datetime.fromisoformat(checked["checked_at"].replace("Z", "+00:00"))
        server.take_hits()
        crawl(db, servers)
        hits = {h.path: h.status for h in server.take_hits()}
    assert hits["/sitemap.xml"] == 200 and hits["/p/post-2/"] == 200
    assert EDIT in posts(db)["http://second.test/p/post-2/"]["text"]


def test_a_full_content_rss_feed_with_an_edited_entry(tmp_path):
    blog = Blog("full.test", 8, feed="rss-full", sitemap=False)  # RSS: pubDate, no update dates

    def change(b: Blog) -> None:
        b.edit("post-6", EDIT)
        b.edit("post-5", EDIT, on_page=False)  # a stale cache in front of its page: only the feed shows it

    out = changed_run(tmp_path / "archive.db", blog, change)
    # the feed changed and its entries carry no update date: every post it lists is revalidated
    assert out.hits == {
        "/robots.txt": 304, "/": 304, "/feed.xml": 200, "/sitemap.xml": 404,
        "/p/post-4/": 304, "/p/post-5/": 304, "/p/post-6/": 200, "/p/post-7/": 304, "/p/post-8/": 304,
    }
    assert_edited(out, "/p/post-5/", "/p/post-6/")
    (chosen,) = rows(out.db, "select v.origin, v.value from provenance v join posts p on p.id = v.post_id "
                             "where p.url = ? and v.field = 'text' and v.chosen = 1", (out.url("/p/post-5/"),))
    assert chosen == {"origin": "feed", "value": "the feed's content changed, the page did not"}
    assert out.gone() == set()


def test_a_summary_only_rss_feed_without_dates_that_changed(tmp_path):
    blog = Blog("summary.test", 8, feed="rss-summary", sitemap=False)

    def change(b: Blog) -> None:
        b.add(9)
        b.edit("post-7", EDIT)  # its summary, the first words, stays the same

    out = changed_run(tmp_path / "archive.db", blog, change)
    assert out.hits == {
        "/robots.txt": 304, "/": 200, "/page/2/": 200, "/feed.xml": 200, "/sitemap.xml": 404,
        "/p/post-9/": 200,
        "/p/post-5/": 304, "/p/post-6/": 304, "/p/post-7/": 200, "/p/post-8/": 304,
    }
    assert_edited(out, "/p/post-7/")
    assert (out.url("/p/post-9/"), "new") in out.new_versions
    assert out.gone() == set()


def test_an_atom_feed_with_updated_dates(tmp_path):
    blog = Blog("atom.test", 8, sitemap=False)

    def change(b: Blog) -> None:
        b.edit("post-6", EDIT)

    out = changed_run(tmp_path / "archive.db", blog, change)
    # only the entry whose updated moved is revalidated; the others said they did not change
    assert out.hits == {"/robots.txt": 304, "/": 304, "/feed.xml": 200, "/sitemap.xml": 404, "/p/post-6/": 200}
    assert_edited(out, "/p/post-6/")
    assert out.gone() == set()


def test_a_deleted_post_inside_the_feed_window_and_one_outside_it(tmp_path):
    blog = Blog("gone.test", 10)  # the feed lists post-6 to post-10; the sitemap every post

    def change(b: Blog) -> None:
        b.delete("post-8")  # inside the feed's window: post-5 comes into it
        b.delete("post-2")  # outside it: only the sitemap tells

    out = changed_run(tmp_path / "archive.db", blog, change)
    assert out.hits == {
        "/robots.txt": 304, "/": 200, "/feed.xml": 200, "/sitemap.xml": 200,
        "/p/post-8/": 404, "/p/post-2/": 404,
        "/p/post-5/": 304,  # new to the feed: revalidated
    }
    assert out.gone() == {out.url("/p/post-8/"), out.url("/p/post-2/")}
    assert out.new_versions == []
    for url in out.gone():  # the content stays
        assert {k: v for k, v in out.after[url].items() if k != "gone_at"} == {
            k: v for k, v in out.before[url].items() if k != "gone_at"}


def test_a_post_that_left_the_feed_window_but_is_still_online(tmp_path):
    blog = Blog("window.test", 8, sitemap=False)  # the feed lists post-4 to post-8

    def change(b: Blog) -> None:
        b.add(9)
        b.add(10)  # post-4 and post-5 scroll out of the feed

    out = changed_run(tmp_path / "archive.db", blog, change)
    assert out.hits == {
        "/robots.txt": 304, "/": 200, "/page/2/": 200, "/feed.xml": 200, "/sitemap.xml": 404,
        "/p/post-9/": 200, "/p/post-10/": 200,
    }
    assert out.gone() == set()
    assert sorted(out.new_versions) == sorted([(out.url("/p/post-10/"), "new"), (out.url("/p/post-9/"), "new")])


def test_a_blog_without_a_feed_is_followed_through_its_sitemap(tmp_path):
    blog = Blog("nofeed.test", 8, feed=None)

    def change(b: Blog) -> None:
        b.edit("post-3", EDIT)
        b.delete("post-5")

    out = changed_run(tmp_path / "archive.db", blog, change)
    # the usual feed paths answered 404 in the first run, and the home page is unchanged: not asked again
    assert out.hits == {"/robots.txt": 304, "/": 304, "/sitemap.xml": 200, "/p/post-3/": 200, "/p/post-5/": 404}
    assert_edited(out, "/p/post-3/")
    assert out.gone() == {out.url("/p/post-5/")}


PROBES = ("/feed", "/rss.xml", "/atom.xml", "/index.xml", "/feed.xml", "/feeds/all.atom.xml")


def test_the_usual_feed_paths_of_a_blog_without_a_feed_wait_while_its_home_page_is_unchanged(tmp_path):
    db, blog = tmp_path / "archive.db", Blog("probes.test", 6, feed=None)

    def probed(server: BlogServer) -> dict[str, int]:
        return {h.path: h.status for h in server.take_hits() if h.path in PROBES}

    def dry_run() -> set[str]:
        lines = run_cli("crawl", "--dry-run", "--db", str(db)).stdout.splitlines()
        fields = [line.split("\t") for line in lines]  # source, why, URL; and a summary line
        return {urlsplit(f[2]).path for f in fields if len(f) == 3} & set(PROBES)

    with BlogServer(blog) as server:
        servers = {blog.host: server}
        crawl(db, servers)
        assert probed(server) == dict.fromkeys(PROBES, 404)  # the first run asks for each
        crawl(db, servers)
        assert probed(server) == {}  # nothing changed: none
        assert dry_run() == set()
        blog.add(7)  # the home page lists it: what it declares may have changed too
        crawl(db, servers)
        assert probed(server) == dict.fromkeys(PROBES, 404)
        with edit_archive(db) as conn:  # their 404s a week and a day old
            conn.execute("update fetches set checked_at = ? where url like '%probes.test/%' and status = 404",
                         [(datetime.now(timezone.utc) - timedelta(days=8)).strftime("%Y-%m-%dT%H:%M:%SZ")])
        assert dry_run() == set(PROBES)
        crawl(db, servers)
        assert probed(server) == dict.fromkeys(PROBES, 404)  # asked again, though the home page is unchanged
        crawl(db, servers)
        assert probed(server) == {}


def test_a_document_two_sources_name_is_fetched_once(tmp_path):
    db = tmp_path / "archive.db"
    blog = Blog("twice.test", 6)
    with BlogServer(blog) as server:
        # the blog, and its sitemap as a source of its own
        run_cli("add", "http://twice.test/sitemap.xml", "--name", "twice.test sitemap", "--db", str(db))
        run_cli("crawl", "http://twice.test/", "http://twice.test/sitemap.xml", "--db", str(db), "--delay", "0",
                "--map-host", f"twice.test={server.base}")
        server.take_hits()
        crawl_every_source = ["crawl", "--db", str(db), "--delay", "0", "--map-host", f"twice.test={server.base}"]
        run_cli(*crawl_every_source)
        hits = sorted((h.path, h.status) for h in server.take_hits())
    assert sorted(s["kind"] for s in rows(db, "select kind from sources")) == ["home", "sitemap"]
    # robots.txt once for the host, the sitemap once for both sources
    assert hits == [("/", 304), ("/feed.xml", 304), ("/robots.txt", 304), ("/sitemap.xml", 304)]


@pytest.mark.parametrize("feed", ["atom", "rss-full", "rss-summary"])
def test_recheck_still_sees_every_edit_and_deletion(tmp_path, feed):
    blog = Blog("recheck.test", 8, feed=feed, sitemap=False)
    db = tmp_path / "archive.db"
    with BlogServer(blog) as server:
        servers = {blog.host: server}
        crawl(db, servers)
        server.take_hits()
        time.sleep(1)
        blog.edit("post-2", EDIT)  # outside the feed's window: nothing announces it
        blog.delete("post-1")
        crawl(db, servers, "--recheck")
        paths = [h.path for h in server.take_hits()]
    assert len(paths) == len(set(paths))
    after = posts(db)
    assert {u for u, p in after.items() if p["gone_at"]} == {"http://recheck.test/p/post-1/"}
    assert EDIT in after["http://recheck.test/p/post-2/"]["text"]


def test_a_complete_crawl_checks_at_once_a_post_that_left_every_listing(tmp_path):
    blog = Blog("unlisted.test", 8, feed=None, sitemap=False)  # found through its listing pages only
    db = tmp_path / "archive.db"
    with BlogServer(blog) as server:
        servers = {blog.host: server}
        crawl(db, servers)
        server.take_hits()
        blog.delete("post-2")
        crawl(db, servers)  # incremental: nothing announces the deletion, and post-2 is not due
        assert "/p/post-2/" not in [h.path for h in server.take_hits()]
        crawl(db, servers, "--full")  # every listing walked: post-2 is in none, so it is checked at once
        hits = [(h.path, h.status) for h in server.take_hits()]
    assert hits.count(("/p/post-2/", 404)) == 1
    assert len(hits) == len(set(hits))
    assert {u for u, p in posts(db).items() if p["gone_at"]} == {"http://unlisted.test/p/post-2/"}


def test_the_revisit_policy_is_visible_and_the_dry_run_lists_what_a_run_requests(tmp_path):
    db = tmp_path / "archive.db"
    blog = Blog("plan.test", 6)
    with BlogServer(blog) as server:
        servers = {blog.host: server}
        crawl(db, servers)
        server.take_hits()
        policy = "(7d:0,90d:1d,*:7d)"
        assert f"posts: 6\tdue next run: 0 {policy}\tchecked: " in run_cli("sources", "--db", str(db)).stdout
        documents = ["http://plan.test/robots.txt", "http://plan.test/", "http://plan.test/feed.xml",
                     "http://plan.test/sitemap.xml"]

        def dry_run(*extra: str) -> list[list[str]]:
            lines = run_cli("crawl", "--dry-run", *extra, "--db", str(db)).stdout.splitlines()
            return [line.split("\t") for line in lines]

        assert dry_run() == [*(["plan.test", "discovery", u] for u in documents),
                             ["4 requests at least for 1 sources (and the posts their feeds and sitemaps announce)"]]
        assert server.take_hits() == []  # a dry run fetches nothing
        recheck = dry_run("--recheck")
        assert [line[1] for line in recheck[4:-1]] == ["recheck"] * 6
        # a dry run neither fetches nor adds a source
        assert dry_run("http://other.test/")[0] == ["http://other.test/", "complete", "http://other.test/"]
        assert len(rows(db, "select * from sources")) == 1

        run_cli("source", "set", "plan.test", "revisit=*:0", "--db", str(db))
        listing = run_cli("sources", "--db", str(db)).stdout
        checks = rows(db, "select min(checked_at) as oldest, max(checked_at) as latest from fetches "
                          "where url in (select url from posts)")[0]
        assert f"posts: 6\tdue next run: 6 (*:0)\tchecked: {checks['oldest']} to {checks['latest']}\t" in listing
        with edit_archive(db) as conn:  # the archive thinks it holds an older post-6 than the feed
            conn.execute("update posts set updated = '2000-01-01T00:00:00Z' where url = 'http://plan.test/p/post-6/'")
        planned = dry_run()
        assert planned[4] == ["plan.test", "announced by http://plan.test/feed.xml", "http://plan.test/p/post-6/"]
        assert [line[1].split(" (")[0] for line in planned[5:-1]] == ["due by policy"] * 5
        assert planned[-1][0].startswith("10 requests at least for 1 sources")
        with serving(db) as base:
            (summary,) = get_json(f"{base}/{db.stem}/revisit_plan.json?_shape=array")
            each = get_json(f"{base}/{db.stem}/revisit_posts.json?_shape=array&source=plan.test")
        assert (summary["source"], summary["policy"], summary["posts"], summary["due_next_run"]) == ("plan.test", "*:0", 6, 6)
        assert (summary["oldest_check"], summary["latest_check"]) == (checks["oldest"], checks["latest"])
        assert sorted(r["url"] for r in each) == sorted(p for _, _, p in planned[4:-1])
        assert all(r["due_next_run"] == 1 and r["last_checked"] for r in each)
        crawl(db, servers)  # the run requests what the dry run listed, each once
        requested = sorted(f"http://plan.test{h.path}" for h in server.take_hits())
    assert requested == sorted([*documents, *(p for _, _, p in planned[4:-1])])
