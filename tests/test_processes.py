"""``blogarchive crawl --processes N``: the six test blogs crawled by two processes give the
archive one process gives, row by row (times and ids left out), in one run, with one writer.

What is compared is what a crawl's order cannot change: posts, their versions, aliases and
chosen metadata, the sources. Two one-process crawls differ in the rest too: the trap blog
serves new session ids on every request (so its captures differ), which calendar pages are
cut first depends on which answer comes first, and so do the metadata candidates seen before
a blog's time zone is learned."""

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from blogsite import RouteServer
from conftest import rows, run_cli
from testblogs import all_blogs

from crawler.run.processes import host_key, split_by_host

# Columns that hold a time (or a number of seconds): they differ between any two crawls.
TIMES = {"added_at", "last_crawl_at", "started_at", "finished_at", "first_seen", "last_seen", "at", "fetched_at",
         "checked_at", "captured_at", "noted_at", "complete_at", "fresh_until", "not_before", "seconds"}
# Tables compared, and the rows of each.
COMPARED = {"sources": "1", "posts": "1", "post_versions": "1", "post_aliases": "1", "provenance": "chosen = 1"}
# Columns that name a row of another table by its id: compared by that row's URL.
REFERENCES = {"source_id": "sources", "post_id": "posts"}


@contextlib.contextmanager
def six_blogs() -> Iterator[tuple[list[str], list[str]]]:
    """The six test blogs, served: their URLs, and the crawl's options that fetch them from the servers."""
    with six_blog_servers() as (urls, options, _):
        yield urls, options


@contextlib.contextmanager
def six_blog_servers() -> Iterator[tuple[list[str], list[str], list[RouteServer]]]:
    """``six_blogs``, and the servers, which record the process that sent each request."""
    blogs = all_blogs()
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(blog.serve()) for blog in blogs]
        options = ["--concurrency", "8"]
        for blog, server in zip(blogs, servers):
            server.identify_clients = True
            options += ["--map-host", f"{blog.host}={server.base}"]
        yield [blog.home for blog in blogs], options, servers


def archive_rows(db: Path) -> dict[str, list[tuple]]:
    """Every table's rows, sorted, without ids, run ids and times; references as URLs."""
    conn = sqlite3.connect(db)
    urls = {table: dict(conn.execute(f"select id, url from {table}")) for table in set(REFERENCES.values())}
    result = {}
    for table, where in COMPARED.items():
        cursor = conn.execute(f"select * from {table} where {where}")
        columns = [c[0] for c in cursor.description]
        kept = []
        for row in cursor:
            values = []
            for column, value in zip(columns, row):
                if column in TIMES or column in ("id", "run_id", "last_run_id"):
                    continue
                if table == "sources" and column == "delay":
                    continue  # the --delay a crawl of the source was given, kept as its setting: tests slow some down
                if column in REFERENCES:
                    value = urls[REFERENCES[column]].get(value, value)
                if column in ("feeds", "sitemaps"):  # in the order they were found: answers come in any order
                    value = sorted(json.loads(value))
                if column == "map_hosts" and value:  # the hosts mapped, not the ports of the servers of each crawl
                    value = sorted(json.loads(value))
                values.append((column, value))
            kept.append(tuple((c, tuple(v) if isinstance(v, list) else v) for c, v in values))
        result[table] = sorted(kept, key=repr)
    result["posts_fts"] = sorted(conn.execute("select title, text from posts_fts"))
    conn.close()
    return result


def summary_counts(stdout: str) -> str:
    """The summary line without its seconds."""
    line = stdout.strip().splitlines()[-1]
    return re.sub(r", [\d.]+ seconds;", ";", line)


@pytest.fixture(scope="module")
def crawled(tmp_path_factory) -> dict[int, tuple[Path, subprocess.CompletedProcess]]:
    """The six blogs crawled twice, into two archives: by one process, and by two."""
    result = {}
    with six_blogs() as (urls, options):
        for processes in (1, 2):
            db = tmp_path_factory.mktemp(f"processes{processes}") / "archive.db"
            result[processes] = db, run_cli("crawl", *urls, *options, "--delay", "0", "--db", str(db),
                                            "--processes", str(processes))
    return result


def test_two_processes_archive_what_one_process_archives(crawled):
    one, two = archive_rows(crawled[1][0]), archive_rows(crawled[2][0])
    assert len(one["posts"]) == 47
    for table in one:
        assert two[table] == one[table], table


def test_two_processes_make_one_run_whose_summary_adds_up(crawled):
    (db1, one), (db2, two) = crawled[1], crawled[2]
    assert summary_counts(two.stdout) == summary_counts(one.stdout)
    runs = rows(db2, "select * from crawl_runs")
    assert len(runs) == 1 and runs[0]["status"] == "finished" and runs[0]["mode"] == "incremental"
    assert len(json.loads(runs[0]["sources"])) == 6
    assert runs[0]["pages"] == rows(db1, "select pages from crawl_runs")[0]["pages"] > 0


def test_a_second_crawl_in_two_processes_changes_nothing(crawled, tmp_path):
    db = tmp_path / "archive.db"
    db.write_bytes(crawled[2][0].read_bytes())
    with six_blogs() as (_, options):
        proc = run_cli("crawl", *options, "--delay", "0", "--db", str(db), "--processes", "2")
    assert "posts 0 new, 0 updated" in proc.stdout
    assert rows(db, "select count(*) as n from post_versions")[0]["n"] == 47
    assert [r["status"] for r in rows(db, "select status from crawl_runs order by id")] == ["finished", "finished"]


def test_sources_are_split_by_host_and_balanced_by_posts():
    sources = [{"id": 1, "scope": "https://a.test/blog/"}, {"id": 2, "scope": "https://www.a.test/feed/"},
               {"id": 3, "scope": "https://b.test/"}, {"id": 4, "scope": "https://c.test/"},
               {"id": 5, "scope": "http://mirror.test/"}]
    weights = {1: 10, 2: 10, 3: 15, 4: 1}
    groups = split_by_host(sources, 2, {"mirror.test": "http://127.0.0.1:9"}, weights)
    assert groups == [[1, 2], [3, 4, 5]]  # a.test in one process, www or not; 21 posts against 18
    assert split_by_host(sources, 9, {}, weights) == [[1, 2], [3], [4], [5]]
    assert host_key(sources[4], {"mirror.test": "http://127.0.0.1:9"}) == "http://127.0.0.1:9"


def test_processes_must_be_a_number_or_auto(tmp_path):
    proc = run_cli("crawl", "--processes", "0", "--db", str(tmp_path / "archive.db"), check=False)
    assert proc.returncode == 2 and "--processes" in proc.stderr
    assert not (tmp_path / "archive.db").exists()


def start(db: Path, urls: list[str], options: list[str], delay: str) -> subprocess.Popen:
    return subprocess.Popen([str(Path(sys.executable).parent / "blogarchive"), "crawl", *urls, *options,
                             "--delay", delay, "--db", str(db), "--processes", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def posts_saved(db: Path) -> int:
    try:
        return rows(db, "select count(*) as n from posts")[0]["n"] if db.exists() else 0
    except sqlite3.OperationalError:  # no tables yet
        return 0


def wait_for_posts(db: Path, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not posts_saved(db):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)


def crawl_when_unlocked(db: Path, options: list[str]) -> subprocess.CompletedProcess:
    """The next crawl, once the processes of the killed one have seen their writer gone and ended."""
    deadline = time.monotonic() + 60
    while True:
        proc = run_cli("crawl", *options, "--delay", "0", "--db", str(db), "--processes", "2", check=False)
        if proc.returncode != 75 or time.monotonic() > deadline:
            return proc
        time.sleep(0.5)


@pytest.mark.slow
def test_kill_9_of_blogarchive_stops_its_processes_and_the_next_run_completes(tmp_path):
    db = tmp_path / "archive.db"
    with six_blogs() as (urls, options):
        proc = start(db, urls, options, "0.1")
        wait_for_posts(db, proc)
        proc.kill()
        proc.communicate()
        assert 0 < posts_saved(db) < 47
        again = crawl_when_unlocked(db, options)
    assert again.returncode == 0, again.stderr
    assert rows(db, "pragma integrity_check")[0]["integrity_check"] == "ok"
    assert [r["status"] for r in rows(db, "select status from crawl_runs order by id")] == ["interrupted", "finished"]
    assert posts_saved(db) == 47
    assert rows(db, "select count(*) as n from post_versions")[0]["n"] == 47


@pytest.mark.slow
def test_a_crawl_process_killed_interrupts_the_run_and_the_others_finish(tmp_path):
    db = tmp_path / "archive.db"
    with six_blogs() as (urls, options):
        proc = start(db, urls, options, "0.1")
        wait_for_posts(db, proc)
        children = [int(p) for p in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                                    text=True).stdout.split()]
        assert len(children) == 2
        os.kill(children[0], signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=180)
        assert proc.returncode == 1 and " interrupted: " in stdout
        again = crawl_when_unlocked(db, options)
    assert again.returncode == 0, again.stderr
    assert posts_saved(db) == 47
    assert rows(db, "select count(*) as n from post_versions")[0]["n"] == 47


@pytest.mark.slow
def test_sigterm_stops_every_process_and_the_run_resumes(tmp_path):
    db = tmp_path / "archive.db"
    with six_blogs() as (urls, options):
        proc = start(db, urls, options, "0.1")
        wait_for_posts(db, proc)
        proc.send_signal(signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=120)
        assert proc.returncode == 1 and " interrupted: " in stdout
        assert [r["status"] for r in rows(db, "select status from crawl_runs")] == ["interrupted"]
        assert posts_saved(db) < 47
        run_cli("crawl", *options, "--delay", "0", "--db", str(db), "--processes", "2")
    assert posts_saved(db) == 47
    assert rows(db, "select count(*) as n from post_versions")[0]["n"] == 47
