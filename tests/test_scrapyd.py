"""scrapy.cfg deploys the project to a real Scrapyd, which runs the ``blog`` spider.

Scrapyd listens on 127.0.0.1 on a free port; the project (``crawler``,
``archive`` and ``scrapy.cfg``, its deploy URL pointed at that port) is
copied to a temporary folder, since ``scrapyd-deploy`` writes a setup.py.
"""

import json
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from conftest import EXPECTED, ROOT

BIN = Path(sys.executable).parent
DEFAULT_DEPLOY_URL = "http://127.0.0.1:6800/"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url: str, data: list[tuple[str, str]] | None = None) -> dict:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    with urllib.request.urlopen(url, body, timeout=10) as response:
        return json.load(response)


@pytest.fixture
def scrapyd(tmp_path):
    port = free_port()
    home = tmp_path / "scrapyd"
    home.mkdir()
    (home / "scrapyd.conf").write_text(
        f"[scrapyd]\nbind_address = 127.0.0.1\nhttp_port = {port}\neggs_dir = {home}/eggs\n"
        f"logs_dir = {home}/logs\ndbs_dir = {home}/dbs\nitems_dir =\npoll_interval = 0.5\n"
    )
    proc = subprocess.Popen([str(BIN / "scrapyd")], cwd=home, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            assert get_json(base + "/daemonstatus.json")["status"] == "ok"
            break
        except OSError as e:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError("scrapyd did not start: " + proc.communicate()[1]) from e
            time.sleep(0.2)
    yield base
    proc.terminate()
    proc.communicate(timeout=30)


def test_deploy_schedule_and_find_the_posts(scrapyd, site_server, tmp_path):
    config = (ROOT / "scrapy.cfg").read_text()
    assert DEFAULT_DEPLOY_URL in config and "project = blogarchive" in config
    project = tmp_path / "project"
    for package in ("crawler", "archive"):
        shutil.copytree(ROOT / package, project / package, ignore=shutil.ignore_patterns("__pycache__"))
    (project / "scrapy.cfg").write_text(config.replace(DEFAULT_DEPLOY_URL, scrapyd + "/"))
    deploy = subprocess.run([str(BIN / "scrapyd-deploy")], cwd=project, capture_output=True, text=True, timeout=120)
    assert deploy.returncode == 0, deploy.stderr
    assert get_json(scrapyd + "/listspiders.json?project=blogarchive")["spiders"] == ["blog"]

    db = tmp_path / "archive.db"
    job = get_json(scrapyd + "/schedule.json", [
        ("project", "blogarchive"), ("spider", "blog"), ("url", f"http://{EXPECTED['host']}/"),
        ("setting", f"ARCHIVE_PATH={db}"),
        ("setting", "ARCHIVE_MAP_HOSTS=" + json.dumps({EXPECTED["host"]: site_server.base})),
        ("setting", "DOWNLOAD_DELAY=0"), ("setting", "AUTOTHROTTLE_ENABLED=0"),
    ])
    assert job["status"] == "ok"
    deadline = time.monotonic() + 120
    while not any(j["id"] == job["jobid"] for j in get_json(scrapyd + "/listjobs.json?project=blogarchive")["finished"]):
        assert time.monotonic() < deadline, "the scrapyd job did not finish"
        time.sleep(0.3)

    conn = sqlite3.connect(db)
    try:
        paths = {urlsplit(url).path for (url,) in conn.execute("select url from posts")}
        runs = conn.execute("select status, posts_new from crawl_runs").fetchall()
    finally:
        conn.close()
    assert paths == {p["path"] for p in EXPECTED["posts"]}
    assert runs == [("finished", len(EXPECTED["posts"]))]
