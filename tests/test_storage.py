"""The archive file under faults: corrupt, read-only, disk full, stale WAL, read while written,
killed twenty times, a bug in one source. Nothing archived is lost; errors are one clear line."""

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from blogserver import Blog, BlogServer, words
from conftest import BLOGARCHIVE, EXPECTED, ROOT, proc_stat, run_cli, wait_ended
from test_interruptions import children, integrity, snapshot

from crawler import settings

HOST = "storage.test"


@pytest.fixture(scope="module")
def slow_blog():
    with BlogServer(Blog(HOST, 24), delay=0.05) as server:
        yield server


def blog_crawl(db: Path, server: BlogServer) -> list[str]:
    return ["crawl", f"http://{HOST}/", "--db", str(db), "--delay", "0", "--map-host", f"{HOST}={server.base}"]


def chattr(flag: str, path: Path) -> None:
    if shutil.which("chattr") is None or subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode:
        pytest.skip("chattr +i is not available here (needs root on a file system that supports it)")


@pytest.fixture
def tmpfs(tmp_path):
    """A small file system of its own, to fill up."""
    mount = tmp_path / "small"
    mount.mkdir()

    def make(size: str) -> Path:
        if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], capture_output=True).returncode:
            pytest.skip("cannot mount a tmpfs here (needs root)")
        return mount
    yield make
    subprocess.run(["umount", str(mount)], capture_output=True)


def test_corrupt_archive_is_refused_before_any_fetch_and_left_as_it_is(slow_blog, tmp_path):
    db = tmp_path / "junk.db"
    db.write_bytes(b"not a database at all" * 500)
    slow_blog.take_hits()
    proc = run_cli(*blog_crawl(db, slow_blog), check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"Error: {db} is not an SQLite database; it is left as it is"]
    assert db.read_bytes() == b"not a database at all" * 500
    assert slow_blog.take_hits() == []


def test_read_only_archive_file(slow_blog, tmp_path):
    db = tmp_path / "archive.db"
    run_cli("add", f"http://{HOST}/", "--db", str(db))
    before = db.read_bytes()
    chattr("+i", db)
    try:
        proc = run_cli(*blog_crawl(db, slow_blog), check=False)
    finally:
        subprocess.run(["chattr", "-i", str(db)])
    assert proc.returncode == 2
    assert "cannot write the archive" in proc.stderr and "Traceback" not in proc.stderr
    assert db.read_bytes() == before


def test_read_only_directory(slow_blog, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    chattr("+i", folder)
    try:
        proc = run_cli(*blog_crawl(folder / "archive.db", slow_blog), check=False)
    finally:
        subprocess.run(["chattr", "-i", str(folder)])
    assert proc.returncode == 2
    assert "cannot create files in" in proc.stderr and "Traceback" not in proc.stderr
    assert list(folder.iterdir()) == []


def test_disk_full_before_the_crawl(slow_blog, tmpfs):
    mount = tmpfs("8m")
    db = mount / "archive.db"
    run_cli("add", f"http://{HOST}/", "--db", str(db))
    (mount / "filler").write_bytes(b"\0" * (shutil.disk_usage(mount).free - 1024 * 1024))
    before = db.read_bytes()
    proc = run_cli(*blog_crawl(db, slow_blog), check=False)
    assert proc.returncode == 2
    assert "disk full" in proc.stderr and "Traceback" not in proc.stderr
    assert db.read_bytes() == before


def test_disk_full_during_the_crawl_keeps_what_was_saved(tmpfs, tmp_path):
    mount = tmpfs("7m")
    db = mount / "archive.db"
    # big posts, so the archive (posts, versions, captures) outgrows the disk halfway
    blog = Blog("big.test", 40)
    for n, post in enumerate(blog.posts):
        post.text = words(f"big-{n}", 9000)
    with BlogServer(blog, delay=0) as server:
        proc = run_cli("crawl", "http://big.test/", "--db", str(db), "--delay", "0",
                       "--map-host", f"big.test={server.base}", check=False)
    assert proc.returncode != 0
    assert "database or disk is full" in proc.stderr
    assert integrity(db) == "ok"
    conn = sqlite3.connect(db)
    posts = conn.execute("select url, title, text, content_hash from posts").fetchall()
    conn.close()
    assert 0 < len(posts) < 40
    assert all(title and text and content_hash for _, title, text, content_hash in posts)


def test_stale_wal_is_recovered_by_sqlite(tmp_path):
    db = tmp_path / "archive.db"
    code = (
        "import os, sys; from archive import *\n"
        f"db = open_archive({str(db)!r}); ensure_source(db, 'https://wal.test/'); r = start_run(db, [1])\n"
        "save_post(db, {'source_id': 1, 'url': 'https://wal.test/p/1', 'title': 'In the WAL', 'text': 'x'}, run_id=r)\n"
        "os._exit(0)  # no close, no checkpoint: the post lives only in the -wal file\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
    assert Path(f"{db}-wal").stat().st_size > 0
    proc = run_cli("sources", "--db", str(db))
    assert "posts: 1" in proc.stdout
    assert integrity(db) == "ok"


@pytest.mark.slow
def test_datasette_reads_while_the_crawler_writes(slow_blog, example_archive, tmp_path):
    db = tmp_path / "live.db"
    shutil.copy(example_archive, db)
    port = _free_port()
    serve = subprocess.Popen([BLOGARCHIVE, "serve", "--db", str(db), "--port", str(port)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}/live/posts.json?_shape=array&_size=100"
        _wait(base)
        crawl = subprocess.Popen([BLOGARCHIVE, *blog_crawl(db, slow_blog)], cwd=ROOT,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        statuses, counts = [], []
        while crawl.poll() is None:
            with urllib.request.urlopen(base, timeout=10) as response:
                statuses.append(response.status)
                counts.append(len(json.load(response)))
            time.sleep(0.05)
        _, err = crawl.communicate(timeout=60)
        assert crawl.returncode == 0, err
    finally:
        serve.terminate()
        serve.wait(timeout=10)
    assert len(statuses) > 5 and set(statuses) == {200}
    assert counts == sorted(counts) and counts[-1] > len(EXPECTED["posts"])


@pytest.mark.slow
def test_killed_twenty_times_then_one_normal_run(slow_blog, tmp_path):
    reference = tmp_path / "reference.db"
    run_cli(*blog_crawl(reference, slow_blog))
    db = tmp_path / "archive.db"
    rng = random.Random(20)
    kills = 0
    for _ in range(20):
        saved = _post_urls(db)
        proc = subprocess.Popen([BLOGARCHIVE, *blog_crawl(db, slow_blog)], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 2.0))
        # stopped first, so that it starts no crawl process between the listing of its own and its
        # kill: one started then would live on, holding the archive's lock. SIGSTOP takes effect
        # when the command next runs (a command inside vfork, after its child's exec)
        os.kill(proc.pid, signal.SIGSTOP)
        _stopped(proc.pid)
        killed = []
        for pid in [*children(proc.pid), proc.pid]:
            try:
                started = proc_stat(pid)[19]
                os.kill(pid, signal.SIGKILL)
                killed.append((pid, started))
                kills += 1
            except (ProcessLookupError, FileNotFoundError):
                pass  # that run had already finished
        proc.wait(timeout=30)
        # kill() returns before its process has ended; the crawl process, whose parent was the command, holds
        # the archive's lock until its end, which no one here waits for
        for pid, started in killed:
            wait_ended(pid, started)
        assert integrity(db) == "ok"
        assert saved <= _post_urls(db)  # nothing committed before the kill is gone
    assert kills >= 20
    run_cli(*blog_crawl(db, slow_blog))
    assert integrity(db) == "ok"
    assert snapshot(db)["posts"] == snapshot(reference)["posts"]


def _stopped(pid: int) -> None:
    """Wait until ``pid`` is stopped, or has ended."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            state = proc_stat(pid)[0]
        except OSError:
            return
        if state in "TtZX":
            return
        time.sleep(0.005)
    raise AssertionError(f"process {pid} did not stop")


def test_a_bug_in_one_source_fails_that_source_only(site_server, tmp_path):
    db = tmp_path / "two.db"
    # -s replaces the project's dict: keep its middlewares and add the fault next to the spider
    middlewares = {**settings.SPIDER_MIDDLEWARES, "faultinject.RaiseForHost": 1000}
    with BlogServer(Blog("other.test", 5), delay=0) as other:
        host_map = json.dumps({EXPECTED["host"]: site_server.base, "other.test": other.base})
        proc = subprocess.run(
            [sys.executable, "-m", "scrapy", "crawl", "blog", "-a", f"url=http://{EXPECTED['host']}/ http://other.test/",
             "-s", f"ARCHIVE_PATH={db}", "-s", f"ARCHIVE_MAP_HOSTS={host_map}", "-s", "DOWNLOAD_DELAY=0",
             "-s", f"SPIDER_MIDDLEWARES={json.dumps(middlewares)}", "-s", "FAULTINJECT_HOST=other.test",
             "-s", "LOG_LEVEL=ERROR"],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
            env={**os.environ, "PYTHONPATH": str(ROOT / "tests")},
        )
    assert proc.returncode == 0
    conn = sqlite3.connect(db)
    status = dict(conn.execute("select name, last_status from sources"))
    posts = dict(conn.execute("select s.name, count(p.id) from sources s left join posts p on p.source_id = s.id group by s.name"))
    bugs = conn.execute("select message from crawl_errors where kind = 'bug'").fetchall()
    conn.close()
    assert status == {EXPECTED["host"]: "ok", "other.test": "failed"}
    assert posts == {EXPECTED["host"]: len(EXPECTED["posts"]), "other.test": 0}
    assert bugs and all(m == "RuntimeError: injected fault for other.test" for (m,) in bugs)


def _post_urls(db: Path) -> set[str]:
    if not db.exists():
        return set()
    conn = sqlite3.connect(db)
    try:
        return {u for (u,) in conn.execute("select url from posts")}
    except sqlite3.OperationalError:
        return set()
    finally:
        conn.close()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(url: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"no answer from {url}"
            time.sleep(0.2)
