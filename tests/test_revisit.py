"""The revisit policy, validators per URL, hosts; raw captures; the crawl lock."""

import os
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from archive import ensure_source, open_archive, save_post, start_run
from archive.core.lock import (
    CrawlLocked,
    acquire_lock,
    adopt_lock,
    close_stale_runs,
    lock_path,
    release_lock,
)
from archive.tables.captures import latest_capture, load_body, save_capture
from archive.tables.revisit import (
    due_posts,
    parse_duration,
    parse_policy,
    revisit_interval,
    save_fetch,
)


@pytest.fixture
def db(db_path):
    db = open_archive(db_path)
    ensure_source(db, "https://blog.test/")
    yield db
    db.close()


def iso(delta: timedelta) -> str:
    return (datetime.now(timezone.utc) - delta).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_durations_and_policies():
    assert [parse_duration(x) for x in ("90", "30m", "12h", "7d", "2w", "1.5h")] == [90, 1800, 43200, 604800, 1209600, 5400]
    rules = parse_policy("7d:0,90d:1d,*:7d")
    assert rules == [(604800, 0), (7776000, 86400), (float("inf"), 604800)]
    assert [revisit_interval(rules, age) for age in (0, 604799, 604800, 10**9)] == [0, 0, 86400, 604800]
    for bad, message in (("7d", "AGE:INTERVAL"), ("7d:0", "ends with \\*:INTERVAL"), ("*:soon", "not a duration")):
        with pytest.raises(ValueError, match=message):
            parse_policy(bad)


def test_due_posts_follow_the_age_policy(db):
    run = start_run(db, [1])
    ages = {"fresh": timedelta(days=1), "month": timedelta(days=30), "old": timedelta(days=400)}
    for name, age in ages.items():
        save_post(db, {"source_id": 1, "url": f"https://blog.test/{name}", "title": name, "text": name,
                       "published": iso(age)}, run_id=run)
    rules = parse_policy("7d:0,90d:1d,*:7d")
    for name in ages:
        save_fetch(db, f"https://blog.test/{name}", checked_at=iso(timedelta(hours=2)))
    assert due_posts(db, 1, rules) == ["https://blog.test/fresh"]
    save_fetch(db, "https://blog.test/month", checked_at=iso(timedelta(days=2)))
    save_fetch(db, "https://blog.test/old", checked_at=iso(timedelta(days=6)))
    assert sorted(due_posts(db, 1, rules)) == ["https://blog.test/fresh", "https://blog.test/month"]
    save_fetch(db, "https://blog.test/old", checked_at=iso(timedelta(days=8)))
    assert len(due_posts(db, 1, rules)) == 3
    assert len(due_posts(db, 1, parse_policy("*:30d"), everything=True)) == 3


def test_identical_bodies_are_stored_once(db):
    first = save_capture(db, url="https://blog.test/a", status=200, headers={"etag": '"x"'}, body=b"<html>same</html>")
    second = save_capture(db, url="https://blog.test/b", status=200, headers={}, body=b"<html>same</html>", run_id=1)
    assert first == second
    assert db["capture_bodies"].count == 1 and db["captures"].count == 2
    stored = db.execute("select size, length(body) from capture_bodies").fetchone()
    assert stored[0] == len(b"<html>same</html>")
    assert load_body(db, first) == b"<html>same</html>"
    capture = latest_capture(db, "https://blog.test/a")
    assert (capture["body"], capture["headers"], capture["status"]) == (b"<html>same</html>", {"etag": '"x"'}, 200)
    assert latest_capture(db, "https://blog.test/none") is None


def test_the_lock_is_exclusive_and_released_clean(db_path):
    fd, stale = acquire_lock(db_path)
    assert stale is None
    with pytest.raises(CrawlLocked, match=f"another crawl is running on {db_path} \\(pid {os.getpid()}, since "):
        acquire_lock(db_path)
    adopt_lock(fd)  # the holder's own descriptor
    release_lock(fd)
    assert Path(lock_path(db_path)).read_text() == ""
    fd, stale = acquire_lock(db_path)
    release_lock(fd)
    assert stale is None


def test_a_child_holds_an_inherited_lock(db_path):
    fd, _ = acquire_lock(db_path)
    child = subprocess.Popen(["sleep", "30"], pass_fds=(fd,))
    os.close(fd)  # the parent lets go; the child's copy still holds it
    try:
        with pytest.raises(CrawlLocked):
            acquire_lock(db_path)
    finally:
        child.kill()
        child.wait()
    assert Path(lock_path(db_path)).read_text().split()[0] == str(os.getpid())  # not released cleanly
    fd, _ = acquire_lock(db_path)  # the kernel freed it with the child
    release_lock(fd)


def test_runs_left_running_are_marked_interrupted(db):
    run = start_run(db, [1])
    db["sources"].update(1, {"run_state": "running"})
    assert close_stale_runs(db) == 1
    assert db["crawl_runs"].get(run)["status"] == "interrupted"
    assert db["sources"].get(1)["run_state"] == "interrupted"
    assert close_stale_runs(db) == 0
