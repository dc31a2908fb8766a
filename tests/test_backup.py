"""``blogarchive backup``: a consistent, checked copy of the archive, even while a crawl writes to it."""

import hashlib
import os
import sqlite3
import stat
import subprocess
import time
from pathlib import Path

import pytest
from conftest import BLOGARCHIVE, ROOT, StaticServer, copy_archive, crawl_args, rows, run_cli

from archive.notify import load_targets

from bench.blogs import write_site

HOST = "bench.test"
POSTS = 3_000  # ten times what the crawl has archived when the backup is taken


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def committed_urls(db) -> set[str]:
    """The URLs of the posts committed in ``db``: none while the crawl has not made its tables yet."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {url for (url,) in conn.execute("select url from posts")}
    except sqlite3.OperationalError as e:
        if "no such table" not in str(e):
            raise
        return set()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def bench_blog(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench")
    write_site(root, POSTS, f"http://{HOST}")
    with StaticServer(root) as server:
        yield server


@pytest.mark.slow
def test_a_backup_during_a_crawl_holds_every_post_committed_before_it(bench_blog, tmp_path):
    db, copy = tmp_path / "archive.db", tmp_path / "copy.db"
    log = tmp_path / "crawl.log"
    crawl = subprocess.Popen([BLOGARCHIVE, *crawl_args(f"http://{HOST}/", db, {HOST: bench_blog.base}), "-q",
                              "--log-file", str(log)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        before: set[str] = set()
        while len(before) < 300 and time.monotonic() < deadline and crawl.poll() is None:
            time.sleep(0.5)
            before = committed_urls(db) if db.exists() else set()
        assert len(before) >= 300, log.read_text()[-3000:]
        proc = run_cli("backup", "-o", str(copy), "--db", str(db))
        assert crawl.poll() is None, "the crawl ended before the backup did: nothing was tested"
        assert proc.stdout.startswith(f"backup of {db} in {copy}: ")
        conn = sqlite3.connect(copy)
        assert conn.execute("pragma integrity_check").fetchall() == [("ok",)]
        assert conn.execute("pragma journal_mode").fetchone() == ("delete",)  # one file, no -wal beside it
        got = {url for (url,) in conn.execute("select url from posts")}
        conn.close()
        assert before <= got
        assert len(got) < POSTS  # taken mid-crawl
    finally:
        crawl.terminate()
        crawl.wait(120)
    assert len(committed_urls(db)) >= len(got)  # the crawl wrote on, unharmed


def test_a_backup_of_a_quiet_archive_has_every_row(example_archive, tmp_path):
    copy = tmp_path / "copy.db"
    run_cli("backup", "-o", str(copy), "--db", str(example_archive))
    for table in ("posts", "post_versions", "captures", "sources", "crawl_runs"):
        assert rows(copy, f"select * from {table}") == rows(example_archive, f"select * from {table}"), table
    assert rows(copy, "select rowid from posts_fts where posts_fts match 'the'")


def test_a_backup_copies_the_notification_targets_beside_the_copy_for_their_owner_only(example_archive, tmp_path):
    db = copy_archive(example_archive, tmp_path / "archive.db")
    hook = "json://127.0.0.1:9/hook?token=s3cret"
    run_cli("notify", "add", hook, "--digest", "run", "--db", str(db))
    (tmp_path / "backups").mkdir()
    copy = tmp_path / "backups" / "copy.db"
    proc = run_cli("backup", "-o", str(copy), "--db", str(db))
    targets = Path(f"{copy}.notify.json")
    assert proc.stdout.rstrip().endswith(f"; notification targets in {targets}")
    assert targets.read_bytes() == Path(f"{db}.notify.json").read_bytes()
    assert stat.S_IMODE(targets.stat().st_mode) == 0o600
    # the copy, put back in place of an archive, tells the same target from the same delivery state
    assert [(t.url, t.digest) for t in load_targets(copy)] == [(hook, "run")]
    assert rows(copy, "select * from notify_state") == rows(db, "select * from notify_state")
    # a backup of an archive without targets leaves none of an older backup's beside its copy
    proc = run_cli("backup", "-o", str(copy), "--db", str(example_archive))
    assert "notification targets" not in proc.stdout
    assert not targets.exists() and load_targets(copy) == []


@pytest.mark.parametrize("target", ["{db}", "{db}-wal", "{link}", "{dot}"])
def test_a_backup_never_overwrites_the_archive_itself(example_archive, tmp_path, target):
    db = tmp_path / "archive.db"
    db.write_bytes(example_archive.read_bytes())
    (tmp_path / "link.db").symlink_to(db)
    before = digest(db)
    target = target.format(db=db, link=tmp_path / "link.db", dot=f"{tmp_path}/./archive.db")
    proc = run_cli("backup", "-o", target, "--db", str(db), check=False)
    assert proc.returncode == 2
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith(f"Error: refusing to back up {db} onto itself")
    assert digest(db) == before


def test_a_backup_of_no_archive_is_a_one_line_error(tmp_path):
    proc = run_cli("backup", "-o", str(tmp_path / "copy.db"), "--db", str(tmp_path / "none.db"), check=False)
    assert proc.returncode == 2 and proc.stderr == f"Error: no archive at {tmp_path / 'none.db'}\n"
    assert not os.path.exists(tmp_path / "none.db") and not os.path.exists(tmp_path / "copy.db")
