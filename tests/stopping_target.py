"""Not part of the suite: the tests tests/test_stopping.py runs under ``pytest -n 2`` and then stops with
Ctrl-C. They start, through the suite's own helpers and fixtures, the processes the suite starts (a
redis-server, a Scrapyd node in a session of its own and a crawl job it runs, a crawl of a slow blog,
a real WordPress's MariaDB and PHP server, Chromium and chromedriver, a command forked by
tests/forked_cli.py; or a process that ignores SIGINT and SIGTERM), say so in the folder that
``BLOGARCHIVE_STOPPING_READY`` names, and wait to be stopped. Skipped anywhere else (the file's name is
not a test module's: pytest reads it only when it is named on the command line)."""

import contextlib
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
from blogserver import Blog, BlogServer
from conftest import BLOGARCHIVE, ROOT, free_port, run_cli
from test_browser import browser  # noqa: F401  (the fixture: chromedriver and Chromium)

READY = os.environ.get("BLOGARCHIVE_STOPPING_READY")
pytestmark = [pytest.mark.skipif(not READY, reason="run by tests/test_stopping.py"), pytest.mark.timeout(120)]
HOST = "slow.test"


def crawl_args(db: Path, server: BlogServer) -> list[str]:
    return ["crawl", f"http://{HOST}/", "--db", str(db), "--delay", "1", "--map-host", f"{HOST}={server.base}"]


def ready_then_wait(name: str) -> None:
    """Say that ``name``'s processes run, then wait (for Ctrl-C)."""
    (Path(str(READY)) / name).touch()
    while True:
        time.sleep(0.1)


@pytest.fixture
def slow_blog():
    with BlogServer(Blog(HOST, 40), delay=0.5) as server:
        yield server


@pytest.fixture
def cluster(tmp_path):
    """A redis-server and a Scrapyd node with the project deployed, as test_cluster's ``engines``."""
    from test_cluster import Node, Redis

    project = tmp_path / "project"
    for package in ("crawler", "archive"):
        shutil.copytree(ROOT / package, project / package, ignore=shutil.ignore_patterns("__pycache__"))
    (project / "scrapy.cfg.in").write_text((ROOT / "scrapy.cfg").read_text())
    redis = Redis(tmp_path)
    redis.start()
    node = Node(tmp_path / "node", project)
    yield node
    node.stop()
    redis.stop()


def test_cluster(cluster, slow_blog, tmp_path):
    """A Scrapyd node running a crawl job, and a crawl of a slow blog started as test_interruptions does."""
    from test_scrapyd import get_json

    job = get_json(cluster.url + "/schedule.json", [
        ("project", "blogarchive"), ("spider", "blog"), ("url", f"http://{HOST}/"),
        ("setting", f"ARCHIVE_PATH={tmp_path / 'job.db'}"), ("setting", "DOWNLOAD_DELAY=1"),
        ("setting", f'ARCHIVE_MAP_HOSTS={{"{HOST}": "{slow_blog.base}"}}')])
    assert job["status"] == "ok"
    proc = subprocess.Popen([BLOGARCHIVE, *crawl_args(tmp_path / "a.db", slow_blog)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not cluster.jobs():
        assert time.monotonic() < deadline, "the Scrapyd job did not start"
        time.sleep(0.2)
    try:
        ready_then_wait("cluster")
    finally:
        proc.terminate()
        proc.wait(30)


def test_stubborn():
    """A process in a session of its own that ignores SIGINT and SIGTERM, and its child."""
    subprocess.Popen(["sh", "-c", "trap '' INT TERM; while :; do sleep 1; done"], start_new_session=True)
    ready_then_wait("stubborn")


def test_wordpress_and_browser(browser, slow_blog, tmp_path):  # noqa: F811
    """A real WordPress, Chromium, and a crawl run as the suite's commands run (tests/forked_cli.py)."""
    from wordpress import WordPress

    def crawl() -> None:
        with contextlib.suppress(Exception):  # its forking process is stopped with the rest
            run_cli(*crawl_args(tmp_path / "b.db", slow_blog))

    threading.Thread(target=crawl, daemon=True).start()
    (tmp_path / "wp").mkdir()
    with WordPress(tmp_path / "wp", free_port()) as wp:
        browser.get(wp.home)
        ready_then_wait("wordpress")
