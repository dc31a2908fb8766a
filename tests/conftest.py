"""Shared fixtures: real HTTP servers on 127.0.0.1 and real archives on disk.

Crawls run the ``blogarchive`` command in a subprocess, so no reactor lives
in the test process.
"""

import functools
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "tests" / "site"
EXPECTED = json.loads((SITE / "EXPECTED.json").read_text(encoding="utf-8"))
BLOGARCHIVE = str(Path(sys.executable).with_name("blogarchive"))


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class StaticServer:
    """A directory served over HTTP on 127.0.0.1, on a free port, in a thread."""

    def __init__(self, directory: Path):
        handler = functools.partial(QuietHandler, directory=str(directory))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "StaticServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def run_cli(*args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``blogarchive ARGS`` and return the finished process."""
    proc = subprocess.run(
        [BLOGARCHIVE, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"blogarchive {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    return proc


def crawl_args(url: str, db: Path, host_map: dict[str, str]) -> list[str]:
    args = ["crawl", url, "--db", str(db), "--delay", "0", "--concurrency", "8"]
    for host, base in host_map.items():
        args += ["--map-host", f"{host}={base}"]
    return args


@pytest.fixture(scope="session")
def site_server() -> Iterator[StaticServer]:
    with StaticServer(SITE) as server:
        yield server


@pytest.fixture(scope="session")
def example_archive(site_server: StaticServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example blog crawled once into a fresh archive."""
    db = tmp_path_factory.mktemp("example") / "archive.db"
    run_cli(*crawl_args(f"http://{EXPECTED['host']}/", db, {EXPECTED["host"]: site_server.base}))
    return db


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "archive.db"


@pytest.fixture(autouse=True)
def _no_archive_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLOGARCHIVE_DB", raising=False)
    os.environ.setdefault("PYTHONIOENCODING", "utf-8")
