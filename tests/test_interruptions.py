"""Crawls under cron: one at a time, killed or stopped midway, resumed.

A slow test blog (each answer takes 0.1 s) gives a crawl long enough to be
interrupted while it writes.
"""

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from blogserver import Blog, BlogServer
from conftest import BLOGARCHIVE, ROOT, proc_stat, run_cli, wait_ended

HOST = "slow.test"
POSTS = 48  # more than a crawl holds in flight (downloads queued, pages awaiting extraction)


def crawl_args(db: Path, server: BlogServer, url: str = f"http://{HOST}/") -> list[str]:
    return ["crawl", url, "--db", str(db), "--delay", "0", "--map-host", f"{HOST}={server.base}"]


def start_crawl(db: Path, server: BlogServer) -> subprocess.Popen:
    return subprocess.Popen([BLOGARCHIVE, *crawl_args(db, server)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def count(db: Path, sql: str) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute(sql).fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0  # not created yet


def wait_for(db: Path, sql: str, at_least: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while count(db, sql) < at_least:
        assert proc.poll() is None, "the crawl ended before it could be interrupted"
        assert time.monotonic() < deadline, "the crawl made no progress"
        time.sleep(0.05)


def children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if int(proc_stat(int(entry))[1]) == pid:
                    out.append(int(entry))
            except OSError:
                continue
    return out


def snapshot(db: Path) -> dict:
    """The archive's content, without ids and times."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return {
            "posts": sorted(
                tuple(v for k, v in dict(r).items() if k not in ("id", "first_seen", "last_seen"))
                for r in conn.execute("select * from posts")
            ),
            "pages": sorted(tuple(r) for r in conn.execute("select url, source_id, kind, reason from pages")),
            "versions": sorted(tuple(r) for r in conn.execute(
                "select p.url, v.change, v.sha256 from post_versions v join posts p on p.id = v.post_id")),
            "sources": [tuple(r) for r in conn.execute(
                "select name, kind, feeds, sitemaps, run_state, complete_at is not null, last_status from sources")],
        }
    finally:
        conn.close()


def integrity(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("pragma integrity_check").fetchone()[0]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def server():
    with BlogServer(Blog(HOST, POSTS), delay=0.1) as server:
        yield server


@pytest.fixture(scope="module")
def reference(server, tmp_path_factory) -> dict:
    db = tmp_path_factory.mktemp("reference") / "archive.db"
    run_cli(*crawl_args(db, server))
    return snapshot(db)


@pytest.mark.slow
def test_kill_9_midway_then_a_normal_run_ends_as_an_uninterrupted_one(server, reference, tmp_path):
    db = tmp_path / "archive.db"
    proc = start_crawl(db, server)
    wait_for(db, "select count(*) from posts", 6, proc)
    victims = [proc.pid, *children(proc.pid)]
    started = [proc_stat(pid)[19] for pid in victims]
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    for pid, start in zip(victims, started):  # the scrapy process holds the archive's lock until its end
        wait_ended(pid, start)
    assert len(victims) == 2  # blogarchive and its scrapy process
    assert count(db, "select count(*) from posts") < POSTS
    assert integrity(db) == "ok"
    proc = run_cli(*crawl_args(db, server))
    assert integrity(db) == "ok"
    assert snapshot(db) == reference
    statuses = [r[0] for r in sqlite3.connect(db).execute("select status from crawl_runs order by id")]
    assert statuses == ["interrupted", "finished"]


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_or_sigint_stops_cleanly_and_the_next_run_resumes(server, reference, tmp_path, signum):
    db = tmp_path / "archive.db"
    proc = start_crawl(db, server)
    wait_for(db, "select count(*) from posts", 4, proc)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert out.startswith("run 1 interrupted: ")
    assert count(db, "select count(*) from posts") < POSTS
    assert count(db, "select count(*) from sources where run_state = 'interrupted' and complete_at is null") == 1
    assert integrity(db) == "ok"
    run_cli(*crawl_args(db, server))
    assert snapshot(db) == reference


def test_a_second_crawl_while_one_runs_exits_75_and_writes_nothing(server, tmp_path):
    db = tmp_path / "archive.db"
    proc = start_crawl(db, server)
    wait_for(db, "select count(*) from posts", 1, proc)
    second = run_cli(*crawl_args(db, server, url="http://another.test/"), check=False)
    _, first_err = proc.communicate(timeout=120)
    assert second.returncode == 75
    assert second.stdout == ""
    assert second.stderr.startswith(f"Error: another crawl is running on {db} (pid {proc.pid}, since ")
    assert len(second.stderr.strip().splitlines()) == 1
    assert proc.returncode == 0, first_err
    assert count(db, "select count(*) from crawl_runs") == 1
    assert count(db, "select count(*) from sources where url like '%another.test%'") == 0


def test_the_lock_of_a_dead_crawl_is_taken_over(server, tmp_path):
    db = tmp_path / "archive.db"
    dead = subprocess.Popen(["true"])
    dead.wait()
    Path(f"{db}.lock").write_text(f"{dead.pid} 2026-01-01T00:00:00Z\n")
    proc = run_cli(*crawl_args(db, server))
    assert f"took over the lock of pid {dead.pid}, which is no longer running" in proc.stderr
    assert Path(f"{db}.lock").read_text() == ""  # released cleanly
    assert count(db, "select count(*) from posts") == POSTS


def test_ctrl_c_stops_fetching_at_once_says_so_and_the_next_run_asks_nothing_twice(server, reference, tmp_path):
    """With a delay between requests, the downloader holds requests waiting for their turn (16 at
    most); they went out one a second after Ctrl-C. Now only those on the wire finish."""
    db = tmp_path / "archive.db"
    server.take_hits()
    proc = subprocess.Popen([BLOGARCHIVE, *crawl_args(db, server), "--delay", "1"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(db, "select count(*) from posts", 2, proc)
    interrupted = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    stopped = time.monotonic()
    first = server.take_hits()
    assert proc.returncode == 1 and out.startswith("run 1 interrupted: "), err
    assert [line for line in err.splitlines() if line.startswith("stopping")] == [
        "stopping: the pages in flight are finished and saved (Ctrl-C again stops at once)"]
    # one request on the wire at most (one a second): the ones waiting were not sent
    assert len([h for h in first if h.at > interrupted]) <= 1, [(h.path, h.at - interrupted) for h in first]
    assert stopped - interrupted < 10  # they were sent one a second before, well over 10 s
    assert integrity(db) == "ok"
    again = run_cli(*crawl_args(db, server))
    assert "resuming run 1, which was interrupted: the pages it fetched are read from the archive" in again.stderr
    fetched = {h.path for h in first if h.status == 200} - {"/robots.txt"}
    asked_again = {h.path for h in server.take_hits()} & fetched
    assert fetched and not asked_again
    assert snapshot(db) == reference


def test_a_second_ctrl_c_stops_at_once_and_the_next_run_completes(server, reference, tmp_path):
    db = tmp_path / "archive.db"
    proc = start_crawl(db, server)
    wait_for(db, "select count(*) from posts", 2, proc)
    crawl = children(proc.pid)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1 and out.startswith("run 1 interrupted: "), err
    assert not any(Path(f"/proc/{pid}").exists() for pid in crawl)  # the crawl's process, killed
    assert integrity(db) == "ok"
    run_cli(*crawl_args(db, server))
    assert snapshot(db) == reference
    statuses = [r[0] for r in sqlite3.connect(db).execute("select status from crawl_runs order by id")]
    assert statuses == ["interrupted", "finished"]
