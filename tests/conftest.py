"""Shared fixtures: real HTTP servers on 127.0.0.1 and real archives on disk.

Crawls run the ``blogarchive`` command in a subprocess, so no reactor lives
in the test process. ``make test`` runs the tests on several pytest-xdist workers
(``--dist loadgroup``): the tests that share a module-scoped fixture run on one
worker, which sets that fixture up once (``pytest_collection_modifyitems``). Every process a
test starts ends with the pytest process it runs in: at its end, on Ctrl-C or SIGTERM, and at its
exit (tests/reaper.py).
"""

import contextlib
import functools
import hashlib
import http.server
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import reaper
from _pytest.nodeid import NodeId
from filelock import FileLock
from forked_cli import ForkedCommands

import archive
from archive.tables.history import mark_gone

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "tests" / "site"
EXPECTED = json.loads((SITE / "EXPECTED.json").read_text(encoding="utf-8"))
BLOGARCHIVE = str(Path(sys.executable).with_name("blogarchive"))
# the commands' output decoded as the tests read it; set before any fixture runs, so that the forking
# process of tests/forked_cli.py starts with the environment every test has (a variable set later made
# every command fall back to a fresh process)
os.environ.setdefault("PYTHONIOENCODING", "utf-8")
# in the controller and in each xdist worker, before any test starts a process
REAPER = reaper.install()


@pytest.hookimpl(trylast=True)  # after the session's fixtures, and the controller's workers, have ended
def pytest_unconfigure(config: pytest.Config) -> None:
    """What the tests left running ends with the session (the forking process of tests/forked_cli.py
    first, as it ends: its stdin closed)."""
    if forked_commands.cache_info().currsize:
        forked_commands().close()
    REAPER.end_tree()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class ShuffledHandler(QuietHandler):
    """Answers each path after 0 to 0.35 s, drawn from the path and ``seed``: another seed, another
    order of answers (tests/test_same_archive.py, tests/test_blog_structure.py)."""

    seed = ""

    def do_GET(self) -> None:
        time.sleep(int(hashlib.sha1((self.seed + self.path).encode()).hexdigest(), 16) % 8 * 0.05)
        super().do_GET()


class StaticServer:
    """A directory served over HTTP on 127.0.0.1, on a free port, in a thread."""

    def __init__(self, directory: Path, handler: type[http.server.SimpleHTTPRequestHandler] = QuietHandler):
        handler = functools.partial(handler, directory=str(directory))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "StaticServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@functools.cache
def forked_commands() -> ForkedCommands:
    """This pytest process's forking process for commands (tests/forked_cli.py)."""
    return ForkedCommands(Path(tempfile.mkdtemp(prefix="forked-cli-")))


def run_cli(*args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``blogarchive ARGS`` and return the finished process: forked from a process that has
    imported the command line, or started afresh while another command runs (tests/forked_cli.py)."""
    proc = forked_commands().run(list(args), timeout) or subprocess.run(
        [BLOGARCHIVE, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"blogarchive {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    return proc


def rows(db: Path, sql: str, params: tuple = ()) -> list[dict]:
    """The rows of a query on an archive file, as dicts."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def crawl_args(url: str, db: Path, host_map: dict[str, str]) -> list[str]:
    args = ["crawl", url, "--db", str(db), "--delay", "0", "--concurrency", "8"]
    for host, base in host_map.items():
        args += ["--map-host", f"{host}={base}"]
    return args


# Module-scoped fixtures cheaper to set up on each worker than to keep their tests on one:
# a test blog's server thread, a copy of the project's folders.
SET_UP_ON_EACH_WORKER = {"test_storage.slow_blog", "test_pool.slow_server", "test_interruptions.server",
                         "test_cluster.project"}


def _shared_fixtures(item: pytest.Item) -> list[str]:
    """The module-scoped fixtures ``item`` uses, each with its parameter: one name per set-up."""
    names = []
    for name, defs in item._fixtureinfo.name2fixturedefs.items():
        if defs and defs[-1].scope == "module" and f"{item.module.__name__}.{name}" not in SET_UP_ON_EACH_WORKER:
            index = item.callspec.indices.get(name) if hasattr(item, "callspec") else None
            names.append(f"{item.module.__name__}.{name}" + ("" if index is None else f"-{index}"))
    return names


@pytest.hookimpl(tryfirst=True)  # before xdist reads the marks (--dist loadgroup)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that share a module-scoped fixture (a crawl, a server, a browser) go to one xdist
    worker together: the fixture is set up once, as in a run without workers. The modules that
    hold a test marked ``slow`` come first, each whole, so that no worker is left with one of
    them at the end while the others have finished."""
    slow = {item.module.__name__ for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.module.__name__ not in slow)  # stable: the order within kept
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            name = parent[name]
        return name

    shared = {item.nodeid: _shared_fixtures(item) for item in items}
    for names in shared.values():
        for name in names[1:]:
            parent[root(name)] = root(names[0])
    for item in items:
        if shared[item.nodeid]:
            group = root(shared[item.nodeid][0])
            item.add_marker(pytest.mark.xdist_group(group))
            if os.environ.get("PYTEST_XDIST_WORKER") and isinstance(getattr(item, "_id", None), NodeId):
                # xdist 3.8 names the group in the test's nodeid (test@group), which pytest 9.2 keeps in
                # a structured id that xdist does not write yet (pytest-xdist issue 1386)
                item._id = NodeId.parse(f"{item.nodeid}@{group}")


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


def copy_archive(db: Path, to: Path) -> Path:
    """A copy of the archive ``db`` (its committed state, WAL included) at ``to``."""
    source, target = sqlite3.connect(db), sqlite3.connect(to)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()
    return to


def crawled_once(folder: Path, crawl: Callable[[Path], object]) -> Path:
    """``folder/archive.db``, made by ``crawl(db)`` unless a worker of this session made it already
    (the others wait for it): a copy of it is what each test gets."""
    db, done = folder / "archive.db", folder / "crawled"
    with FileLock(f"{folder}.lock"):
        if not done.exists():  # not crawled yet, or the crawl of a worker before failed
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            crawl(db)
            done.touch()
    return db


@pytest.fixture(scope="session")
def shared_folder(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The folder all the pytest-xdist workers of this session share (each has a base folder of its own in it)."""
    return tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent


@pytest.fixture(scope="session")
def real_blog_archive(shared_folder: Path):
    """``real_blog_archive(NAME, TO)``: a copy at ``TO`` of the real blog NAME of ../shared crawled
    with ``--media metadata``, from its own copy served on 127.0.0.1; each blog is crawled once
    in a session (test_real_blogs reads it; test_real_blogs_recrawl and test_warc_roundtrip start from it),
    by the first pytest-xdist worker that asks for it."""
    from truth import REAL_BLOGS, blog_info

    def copy(name: str, to: Path) -> Path:
        def crawl(db: Path) -> None:
            info = blog_info(name)
            with StaticServer(REAL_BLOGS / name / "site") as server:
                # their images' URLs only: many are on other hosts, which a test never asks the internet for
                run_cli(*crawl_args(info["original_site"], db, {h: server.base for h in info["internal_hosts"]}),
                        "--media", "metadata")

        return copy_archive(crawled_once(shared_folder / f"real-{name}", crawl), to)

    return copy


@pytest.fixture(scope="session")
def test_blog_archive(shared_folder: Path):
    """``test_blog_archive(NAME, TO)``: a copy at ``TO`` of the test blog NAME (tests/testblogs.py)
    crawled with ``crawl_args``' options, and the paths the crawl asked its server for, oldest
    first; each blog is crawled once in a session (test_discovery and test_warc_roundtrip read
    the same crawl), by the first pytest-xdist worker that asks for it."""
    from testblogs import all_blogs

    blogs = {blog.name: blog for blog in all_blogs()}

    def copy(name: str, to: Path) -> tuple[Path, list[str]]:
        blog, folder = blogs[name], shared_folder / f"testblog-{name}"

        def crawl(db: Path) -> None:
            with blog.serve() as server:
                run_cli(*crawl_args(blog.home, db, {blog.host: server.base}))
                (folder / "requested.json").write_text(json.dumps(server.paths()))

        db = crawled_once(folder, crawl)
        return copy_archive(db, to), json.loads((folder / "requested.json").read_text())

    return copy


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "archive.db"


@pytest.fixture(autouse=True)
def _no_archive_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLOGARCHIVE_DB", raising=False)


def proc_stat(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command's name: its state first, then its parent,
    ..., its start time at [19]. OSError when there is no such process."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def running(pid: int, started: str) -> bool:
    """Whether the process ``pid`` that started at ``started`` still runs: not ended, not a zombie (its files
    closed) its parent has yet to reap, and not another process that took its pid since (a run of the suite
    takes some 15,000 pids, threads included, and the kernel's pid_max may be 32768)."""
    try:
        fields = proc_stat(pid)
    except OSError:
        return False
    return fields[19] == started and fields[0] not in "ZX"


def wait_ended(pid: int, started: str) -> None:
    """Wait until the process ``pid`` that started at ``started`` has ended (``running``)."""
    deadline = time.monotonic() + 30
    while running(pid, started):
        if time.monotonic() > deadline:
            raise AssertionError(f"process {pid} did not end")
        time.sleep(0.005)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(db: Path, *args: str) -> Iterator[str]:
    """``blogarchive serve`` on ``db`` (a real Datasette process) on a free port; yields its base URL."""
    port = free_port()
    proc = subprocess.Popen(
        [BLOGARCHIVE, "serve", "--db", str(db), "--port", str(port), *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(base + "/-/versions.json", timeout=2)
            break
        except OSError as e:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError("datasette did not start: " + proc.communicate()[1]) from e
            time.sleep(0.2)
    try:
        yield base
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


@pytest.fixture(scope="session")
def example_datasette(example_archive: Path) -> Iterator[str]:
    """``blogarchive serve`` on the crawled example blog; its base URL."""
    with serving(example_archive) as base:
        yield base


# Archived content that must stay text: each payload, were it markup, would set
# window.__xss and the page's title.
SCRIPT_PAYLOAD = "<script>window.__xss = 1; document.title = 'pwned'</script>"
IMG_PAYLOAD = "<img src=x onerror=\"window.__xss = 2; document.title = 'pwned'\">"
HOSTILE = {
    "url": "https://hostile.test/p/1",
    "title": f"Hostile {SCRIPT_PAYLOAD}",
    "author": f"Mallory {IMG_PAYLOAD}",
    "published": "2024-01-01T00:00:00Z",
    "updated": "2024-02-01T00:00:00Z",
    "summary": f"Summary {SCRIPT_PAYLOAD}",
    "text": f"Text with {SCRIPT_PAYLOAD} and {IMG_PAYLOAD} inside.",
    "markdown": (
        f"# Hostile\n\nMarkdown with {SCRIPT_PAYLOAD} inside.\n\n{IMG_PAYLOAD}\n\n"
        "[a link](javascript:window.__xss=3)\n\n<div onmouseover=\"window.__xss = 4\">hover me</div>\n"
    ),
    "lang": "en",
    "tags": [SCRIPT_PAYLOAD, IMG_PAYLOAD, "plain"],
}
GONE = {"url": "https://hostile.test/p/2", "title": "A post that went away", "text": "Gone but archived.",
        "published": "2023-01-01T00:00:00Z", "tags": ["plain"]}


@pytest.fixture(scope="session")
def hostile_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An archive made with the library: a post full of script payloads, and a post
    that the second crawl did not find again (its URL answered 404)."""
    path = tmp_path_factory.mktemp("hostile") / "hostile.db"
    db = archive.open_archive(path)
    source = archive.ensure_source(db, "https://hostile.test/")
    first = archive.start_run(db, [source["id"]])
    for post in (HOSTILE, GONE):
        archive.save_post(db, {**post, "source_id": source["id"]}, run_id=first)
    archive.finish_run(db, first, status="finished", seconds=1, pages=2)
    with db.atomic():  # last seen before the second crawl
        db.execute("update posts set last_seen = '2024-03-01T00:00:00Z' where url = ?", [GONE["url"]])
    second = archive.start_run(db, [source["id"]])
    archive.save_post(db, {**HOSTILE, "source_id": source["id"]}, run_id=second)
    archive.save_error(db, run_id=second, source_id=source["id"], url=GONE["url"], kind="http", message="404 Not Found")
    mark_gone(db, GONE["url"])
    archive.finish_run(db, second, status="finished", seconds=1, pages=2)
    archive.update_source(db, source["id"], last_crawl_at=archive.get_run(db, second)["finished_at"],
                          last_status="ok, 1 errors")
    db.close()
    return path


@pytest.fixture(scope="session")
def hostile_datasette(hostile_archive: Path) -> Iterator[str]:
    """``blogarchive serve`` on the hostile archive; the URL of its database."""
    with serving(hostile_archive) as base:
        yield base + "/" + hostile_archive.stem
