"""Incremental crawls against test blogs on 127.0.0.1 whose content changes between runs.

Two blogs in one archive: ``good.test`` answers validators honestly (and its
feed says ``max-age``), ``liar.test`` sends an ETag that changes on every
request, a Last-Modified a year ahead and a 304 to any conditional request.
"""

import json
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from blogserver import Blog, BlogServer
from conftest import ROOT, rows, run_cli

from archive import open_archive, search_posts
from archive.search.index import register_functions


def search(db: Path, query: str) -> list[dict]:
    archive = open_archive(db)
    try:
        return search_posts(archive, query)
    finally:
        archive.close()


def posts(db: Path) -> dict[str, dict]:
    return {p["url"]: p for p in rows(db, "select * from posts")}


def versions(db: Path) -> list[tuple[str, str]]:
    return [(r["url"], r["change"]) for r in rows(
        db, "select p.url, v.change from post_versions v join posts p on p.id = v.post_id order by v.id")]


def crawl(db: Path, servers: dict[str, BlogServer], *extra: str, check: bool = True):
    args = ["crawl", *(f"http://{host}/" for host in servers), "--db", str(db), "--delay", "0"]
    for host, server in servers.items():
        args += ["--map-host", f"{host}={server.base}"]
    return run_cli(*args, *extra, check=check)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    """First crawl, a crawl with no change, changes, a crawl, a deleted post back, a crawl."""
    db = tmp_path_factory.mktemp("incremental") / "archive.db"
    good, liar = Blog("good.test", 8), Blog("liar.test", 5)
    out: dict = {"db": db}
    with BlogServer(good, feed_max_age=3600) as g, BlogServer(liar, validators="liar") as li:
        servers = {"good.test": g, "liar.test": li}

        def step(name: str, *extra: str) -> None:
            out[name] = {
                "stdout": crawl(db, servers, *extra).stdout,
                "hits": {host: s.take_hits() for host, s in servers.items()},
                "posts": posts(db),
                "versions": versions(db),
                "run": rows(db, "select * from crawl_runs order by id desc limit 1")[0],
            }

        step("first")
        step("unchanged")
        good.add(9)
        good.add(10)
        good.edit("post-2", "An edited paragraph, about versions and history and what changed.")
        deleted = good.post("post-3")
        good.delete("post-3")
        liar.add(6)
        liar.edit("post-4", "The liar edited this post, and its validators did not say so.")
        step("changed")
        good.posts.append(deleted)
        step("back")
        step("recheck", "--recheck")
    return out


def test_first_crawl_is_complete(scenario):
    first = scenario["first"]
    assert len(first["posts"]) == 13
    assert first["run"]["mode"] == "incremental" and first["run"]["extractions"] == 13
    sources = rows(scenario["db"], "select name, complete_at, run_state from sources order by id")
    assert [s["run_state"] for s in sources] == ["done", "done"]
    assert all(s["complete_at"] for s in sources)


def test_no_change_costs_a_handful_of_conditional_requests(scenario):
    unchanged = scenario["unchanged"]
    good = unchanged["hits"]["good.test"]
    # every request to the honest host is conditional and answered 304; the feed, fresh for an hour, is not asked
    assert good and all(h.conditional and h.status == 304 for h in good)
    assert "/feed.xml" not in {h.path for h in good}
    assert len(good) <= 6
    # the liar's validators are not trusted: full GETs, compared by body hash
    liar = unchanged["hits"]["liar.test"]
    assert liar and not any(h.conditional for h in liar) and len(liar) <= 6
    run = unchanged["run"]
    assert (run["extractions"], run["versions"], run["posts_new"], run["posts_updated"]) == (0, 0, 0, 0)
    assert run["requests"] == len(good) + len(liar)
    assert run["not_modified"] == run["requests"] + 1  # every answer known already, and the fresh feed, not asked
    assert unchanged["posts"] == scenario["first"]["posts"]
    assert unchanged["versions"] == scenario["first"]["versions"]


def test_broken_validators_are_noted_with_the_reason(scenario):
    hosts = {h["host"]: h for h in rows(scenario["db"], "select * from hosts")}
    assert hosts["liar.test"]["validators"] == "broken"
    assert hosts["liar.test"]["reason"].startswith("Last-Modified in the future")
    assert "good.test" not in hosts


def test_changes_touch_exactly_the_expected_rows(scenario):
    before, after = scenario["unchanged"]["posts"], scenario["changed"]["posts"]
    new = {"http://good.test/p/post-9/", "http://good.test/p/post-10/", "http://liar.test/p/post-6/"}
    edited = {"http://good.test/p/post-2/", "http://liar.test/p/post-4/"}
    gone = "http://good.test/p/post-3/"
    assert set(after) - set(before) == new
    assert {url for url, p in after.items() if p["gone_at"]} == {gone}
    assert {k: v for k, v in after[gone].items() if k != "gone_at"} == {  # its content stays
        k: v for k, v in before[gone].items() if k != "gone_at"}
    for url in set(before) - edited - {gone}:
        assert after[url] == before[url], url
    for url in edited:
        assert after[url]["text"] != before[url]["text"]
        assert "edited" in after[url]["text"]
    added = scenario["changed"]["versions"][len(scenario["unchanged"]["versions"]):]
    assert sorted(added) == sorted([(u, "new") for u in new] + [(u, "text") for u in edited])
    run = scenario["changed"]["run"]
    assert (run["posts_new"], run["posts_updated"], run["extractions"], run["versions"]) == (3, 2, 5, 5)


def test_edit_and_deletion_are_found_without_fetching_every_post(scenario):
    good = {h.path for h in scenario["changed"]["hits"]["good.test"]}
    # post-2 is older than the feed: the sitemap's lastmod tells it changed; post-3 left the sitemap
    assert {"/p/post-2/", "/p/post-3/", "/p/post-9/", "/p/post-10/"} <= good
    assert not good & {"/p/post-1/", "/p/post-4/", "/p/post-5/", "/p/post-6/", "/p/post-7/", "/p/post-8/"}


def test_a_deleted_post_that_comes_back_is_restored(scenario):
    post = scenario["back"]["posts"]["http://good.test/p/post-3/"]
    assert post["gone_at"] is None
    assert scenario["back"]["versions"][-1] == ("http://good.test/p/post-3/", "restored")
    assert len(scenario["back"]["versions"]) == len(scenario["changed"]["versions"]) + 1


def test_recheck_revalidates_every_known_post(scenario):
    hits = scenario["recheck"]["hits"]["good.test"]
    paths = {h.path for h in hits}
    assert {f"/p/post-{n}/" for n in range(1, 11)} <= paths
    assert all(h.conditional and h.status == 304 for h in hits)
    run = scenario["recheck"]["run"]
    assert run["mode"] == "recheck"
    assert (run["extractions"], run["versions"]) == (0, 0)


def test_history_shows_versions_and_a_diff(scenario):
    proc = run_cli("history", "http://good.test/p/post-2/", "--db", str(scenario["db"]))
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("1\t") and "\tnew\t" in lines[0]
    assert lines[1].startswith("2\t") and "\ttext (1 lines)\t" in lines[1]
    assert "+An edited paragraph, about versions and history and what changed." in proc.stdout
    added = [line for line in lines if line.startswith("+") and not line.startswith("+++")]
    assert added == ["+", "+An edited paragraph, about versions and history and what changed."]
    gone = run_cli("history", "http://good.test/p/post-3/", "--db", str(scenario["db"])).stdout
    assert "restored" in gone
    missing = run_cli("history", "http://good.test/nope/", "--db", str(scenario["db"]), check=False)
    assert missing.returncode == 1 and missing.stderr.strip() == "Error: no post at http://good.test/nope/"


def test_captures_hold_every_body_once(scenario):
    db = scenario["db"]
    urls = {r["url"] for r in rows(db, "select distinct url from captures")}
    for path in ("/feed.xml", "/sitemap.xml", "/robots.txt", "/page/2/", "/p/post-1/"):
        assert f"http://good.test{path}" in urls and f"http://liar.test{path}" in urls, path
    (dupes,) = rows(db, "select count(*) - count(distinct sha256) as n from capture_bodies")
    assert dupes["n"] == 0
    (shared,) = rows(db, "select count(*) as n from captures group by sha256 order by n desc limit 1")
    assert shared["n"] > 1  # the liar's unchanged pages, fetched in full each run, are stored once
    capture = rows(db, "select * from captures where url = 'http://good.test/feed.xml'")[0]
    assert capture["status"] == 200
    assert json.loads(capture["headers"])["content-type"] == "application/atom+xml"


def test_reextract_works_offline_and_reports_changes(scenario, tmp_path):
    db = tmp_path / "copy.db"
    src = sqlite3.connect(scenario["db"])
    dst = sqlite3.connect(db)
    src.backup(dst)
    src.close()
    register_functions(dst)  # the triggers that keep posts_grams call post_grams()
    # an archive made by older code: one post's stored text differs from what extraction now gives
    dst.execute("update posts set text = 'old extraction 旧文' where url = 'http://liar.test/p/post-1/'")
    dst.commit()
    dst.close()
    assert [p["url"] for p in search(db, "旧文")] == ["http://liar.test/p/post-1/"]  # through posts_grams
    # the test blogs are down: everything comes from the captures
    dry = run_cli("reextract", "--db", str(db), "--dry-run")
    assert dry.stdout.splitlines() == [
        "http://liar.test/p/post-1/\ttext",
        "16 posts re-extracted offline, 1 would change",
    ]
    proc = run_cli("reextract", "--source", "liar.test", "--db", str(db))
    assert proc.stdout.splitlines()[-1] == "6 posts re-extracted offline, 1 changed"
    assert posts(db)["http://liar.test/p/post-1/"]["text"] == scenario["recheck"]["posts"]["http://liar.test/p/post-1/"]["text"]
    assert search(db, "旧文") == []  # the index follows the re-extracted text
    again = run_cli("reextract", "--db", str(db))
    assert again.stdout.splitlines() == ["16 posts re-extracted offline, 0 changed"]
    unknown = run_cli("reextract", "--source", "nope", "--db", str(db), check=False)
    assert unknown.returncode == 2 and unknown.stderr.strip() == "Error: no source named 'nope' (see blogarchive sources)"


def test_a_304_the_feed_contradicts_marks_the_host_and_gets_the_change(tmp_path):
    db = tmp_path / "sticky.db"
    blog = Blog("sticky.test", 4)
    with BlogServer(blog, validators="sticky") as server:
        servers = {"sticky.test": server}
        crawl(db, servers)
        blog.edit("post-4", "A change the ETag does not show.")
        crawl(db, servers)
        hits = server.take_hits()
    post_hits = [h for h in hits if h.path == "/p/post-4/"][-2:]
    assert [(h.status, h.conditional) for h in post_hits] == [(304, True), (200, False)]
    (host,) = rows(db, "select * from hosts")
    assert host["validators"] == "broken"
    assert host["reason"].startswith("the same ETag for a changed body")
    assert "A change the ETag does not show." in posts(db)["http://sticky.test/p/post-4/"]["text"]
    assert versions(db)[-1] == ("http://sticky.test/p/post-4/", "text")


def test_retry_after_is_waited_for(tmp_path):
    db = tmp_path / "retry.db"
    with BlogServer(Blog("busy.test", 3)) as server:
        server.retry_after["/p/post-2/"] = ["2"]
        crawl(db, {"busy.test": server})
        hits = [h for h in server.take_hits() if h.path == "/p/post-2/"]
    assert [h.status for h in hits] == [429, 200]
    assert hits[1].at - hits[0].at >= 2.0  # never sooner than asked
    assert len(posts(db)) == 3
    assert rows(db, "select * from crawl_errors") == []


def test_a_long_retry_after_leaves_the_host_alone_until_then(tmp_path):
    db = tmp_path / "later.db"
    with BlogServer(Blog("busy.test", 3)) as server:
        servers = {"busy.test": server}
        crawl(db, servers)
        server.take_hits()
        server.retry_after["/"] = ["7200"]
        refused = crawl(db, servers, check=False)
        # robots.txt (revalidated, once) is read before the home page; nothing is asked after the 429
        assert [(h.path, h.status) for h in server.take_hits()] == [("/robots.txt", 304), ("/", 429)]
        later = crawl(db, servers)
        assert server.take_hits() == []
    assert refused.returncode == 1  # the blog could not be crawled
    (host,) = rows(db, "select * from hosts where host = 'busy.test'")
    assert host["not_before"] > rows(db, "select max(started_at) as t from crawl_runs")[0]["t"]
    (deferred,) = rows(db, "select * from crawl_errors where kind = 'deferred'")
    assert deferred["message"] == f"the host asked to be left alone until {host['not_before']} (Retry-After)"
    assert "0 requests" in later.stdout


def test_recent_changes_canned_query(scenario):
    datasette = Path(sys.executable).with_name("datasette")
    proc = subprocess.run(
        [str(datasette), str(scenario["db"]), "-m", str(ROOT / "archive" / "datasette" / "metadata.yml"),
         "--get", "/archive/changes.json?_shape=array"],
        capture_output=True, text=True, check=True,
    )
    got = sorted((r["change"], r["url"]) for r in json.loads(proc.stdout))
    assert got == [("restored", "http://good.test/p/post-3/"), ("text", "http://good.test/p/post-2/"),
                   ("text", "http://liar.test/p/post-4/")]


def test_an_etag_that_changes_on_every_request_is_not_trusted(tmp_path):
    db = tmp_path / "flaky.db"
    with BlogServer(Blog("flaky.test", 3), validators="flaky") as server:
        servers = {"flaky.test": server}
        crawl(db, servers)
        crawl(db, servers)
        second = server.take_hits()
        crawl(db, servers)
        third = server.take_hits()
    (host,) = rows(db, "select * from hosts where host = 'flaky.test'")
    assert host["validators"] == "broken"
    assert host["reason"].startswith("ETag changes although the body does not, at http://flaky.test/")
    assert any(h.conditional for h in second)
    assert third and not any(h.conditional for h in third)
    assert [r["extractions"] for r in rows(db, "select extractions from crawl_runs order by id")] == [3, 0, 0]


def test_recent_posts_are_revalidated_every_run_and_old_ones_are_not(tmp_path):
    db = tmp_path / "recent.db"
    blog = Blog("recent.test", 4)
    blog.post("post-4").published = datetime.now(timezone.utc) - timedelta(days=1)
    with BlogServer(blog) as server:
        crawl(db, {"recent.test": server})
        server.take_hits()
        crawl(db, {"recent.test": server})
        paths = [h.path for h in server.take_hits()]
    assert paths.count("/p/post-4/") == 1
    assert not {"/p/post-1/", "/p/post-2/", "/p/post-3/"} & set(paths)


def test_a_post_gone_from_the_feed_window_is_checked_and_marked(tmp_path):
    db = tmp_path / "window.db"
    blog = Blog("window.test", 8, sitemap=False)  # the feed lists post-4 to post-8
    with BlogServer(blog) as server:
        servers = {"window.test": server}
        crawl(db, servers)
        server.take_hits()
        blog.delete("post-6")  # inside the feed's window: post-3 now fills it
        blog.add(9)  # and post-4 scrolls out of it, still online
        crawl(db, servers)
        paths = [h.path for h in server.take_hits()]
    assert "/p/post-6/" in paths and "/p/post-4/" not in paths
    gone = {p["url"] for p in posts(db).values() if p["gone_at"]}
    assert gone == {"http://window.test/p/post-6/"}
