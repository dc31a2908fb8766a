"""Extraction in worker processes: same results as inline, time limit, back-pressure, no orphans.

The pool is driven directly in an asyncio loop (its workers are real
processes; a stuck one is made with SIGSTOP), and through real crawls of
test blogs served on 127.0.0.1, run in a subprocess. Every process of a
crawl carries a tag in its environment, so /proc tells whether any of them
outlived it.
"""

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from datetime import timedelta, timezone
from pathlib import Path

import pytest
from blogserver import Blog, BlogServer, words
from conftest import BLOGARCHIVE, ROOT, SITE, proc_stat

from crawler.extract.pool import ExtractionFailed, ExtractionPool
from crawler.extract.post import extract_post
from crawler.judge.site import SiteParts
from crawler.memory import extract_workers, lanes

HOST = "pool.test"
TAG = "BLOGARCHIVE_TEST_TAG"
POOL_LOG = "extraction pool closed: "


def run(coro):
    return asyncio.run(coro)


async def started(**kwargs) -> ExtractionPool:
    pool = ExtractionPool(**{"workers": 1, "timeout": 30.0, "queue": 4, **kwargs})
    pool.start()
    await warm(pool)
    return pool


async def warm(pool: ExtractionPool) -> None:
    """Return once each of the pool's workers has said it is ready (a fresh one warms up first)."""
    deadline = time.monotonic() + 60
    while len(pool.idle) < pool.workers:
        assert time.monotonic() < deadline, "the workers did not get ready"
        await asyncio.sleep(0.02)


def pages() -> list[tuple[str, str]]:
    """The example blog's pages, and one without any text."""
    return [(f"http://example-notes.test/{p.relative_to(SITE).as_posix()}", p.read_text(encoding="utf-8"))
            for p in sorted(SITE.rglob("*.html"))] + [("http://example-notes.test/x/", "<html><body></body></html>")]


def test_a_page_extracted_in_a_worker_equals_inline_extraction():
    entry = {"url": "http://example-notes.test/p/101/index.html", "guid": "urn:101", "title": "From the feed",
             "published": "2024-05-01T08:00:00Z", "tags": ["feed-tag"], "summary": "Feed summary",
             "content": "<p>" + "Feed text. " * 400 + "</p>"}
    tz = timezone(timedelta(hours=8))
    options = [{"feed_entry": entry if url == entry["url"] else None, "site": SiteParts(frozenset({"example notes"})),
                "default_tz": tz}
               for url, _ in pages()]

    async def extract_all() -> list:
        pool = await started(workers=2)
        try:
            return await asyncio.gather(*(pool.extract(url, html, **o) for (url, html), o in zip(pages(), options)))
        finally:
            pool.close()

    results = run(extract_all())
    expected = [extract_post(url, html, **o) for (url, html), o in zip(pages(), options)]
    assert len(results) > 5
    assert any(r is None for r in results) and any(r and r.provenance[0]["origin"] == "feed" for r in results)
    assert results == expected


def test_a_worker_that_does_not_answer_is_killed_its_page_fails_and_the_next_page_is_extracted():
    url, html = pages()[0]

    async def scenario():
        pool = await started(timeout=0.5)
        try:
            stuck = pool.idle[0].process
            os.kill(stuck.pid, signal.SIGSTOP)  # as good as a loop in C code that never returns
            with pytest.raises(ExtractionFailed, match="did not stop: killed"):
                await pool.extract(url, html)
            await warm(pool)
            replacement = pool.idle[0].process
            return stuck, replacement, await pool.extract(url, html), dict(pool.counts)
        finally:
            pool.close()

    stuck, replacement, post, counts = run(scenario())
    assert stuck.returncode == -signal.SIGKILL
    assert replacement.pid != stuck.pid
    assert post == extract_post(url, html)
    assert counts == {"timeout": 1, "workers_replaced": 1}


def test_a_worker_that_dies_fails_its_page_and_is_replaced():
    url, html = pages()[0]

    async def scenario():
        pool = await started()
        try:
            worker = pool.idle[0].process
            os.kill(worker.pid, signal.SIGSTOP)
            pending = asyncio.ensure_future(pool.extract(url, html))
            await asyncio.sleep(0)
            os.kill(worker.pid, signal.SIGKILL)
            with pytest.raises(ExtractionFailed, match=rf"worker \(pid {worker.pid}\) died"):
                await pending
            return await pool.extract(url, html), dict(pool.counts)
        finally:
            pool.close()

    post, counts = run(scenario())
    assert post == extract_post(url, html)
    assert counts == {"failed": 1, "workers_replaced": 1}


def test_requests_wait_while_the_queue_is_full_and_go_on_when_it_drains():
    url, html = pages()[0]

    async def scenario():
        pool = await started(queue=2)
        try:
            worker = pool.idle[0].process
            os.kill(worker.pid, signal.SIGSTOP)
            # one page in the worker, one waiting in its socket, two waiting here: the queue is full
            tasks = [asyncio.ensure_future(pool.extract(url, html)) for _ in range(4)]
            await asyncio.sleep(0)
            gate = asyncio.ensure_future(pool.wait_for_room())
            await asyncio.sleep(0)
            held = (len(pool.running), len(pool.waiting), gate.done())
            os.kill(worker.pid, signal.SIGCONT)
            await gate
            posts = await asyncio.gather(*tasks)
            return held, posts, pool.in_flight_max, dict(pool.counts)
        finally:
            pool.close()

    held, posts, in_flight_max, counts = run(scenario())
    assert held == (1, 2, False)
    assert posts == [extract_post(url, html)] * 4
    assert in_flight_max == 4
    assert counts == {"gate_waits": 1}


# -- in real crawls ---------------------------------------------------------------------


def tagged(tag: str) -> list[int]:
    """Running processes whose environment carries ``tag``."""
    marker = f"{TAG}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def parent(pid: int) -> int:
    return int(proc_stat(pid)[1])


def survivors(tag: str) -> list[int]:
    """The tagged processes still running once the ones that are exiting have had 30 s to go."""
    deadline = time.monotonic() + 30
    while (left := tagged(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def pool_summary(log: Path) -> dict:
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if POOL_LOG in line]
    assert len(lines) == 1, lines
    return json.loads(lines[0].split(POOL_LOG, 1)[1])


def worker_pids(log: Path) -> list[int]:
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if "worker processes, pids" in line]
    return [int(pid) for pid in lines[0].rsplit("pids ", 1)[1].split(", ")] if lines else []


def scrapy_crawl(db: Path, server: BlogServer, log: Path, **settings: object) -> subprocess.CompletedProcess:
    """``scrapy crawl blog`` on the test blog, with these settings."""
    settings = {"ARCHIVE_PATH": db, "ARCHIVE_MAP_HOSTS": json.dumps({HOST: server.base}), "DOWNLOAD_DELAY": 0,
                "AUTOTHROTTLE_ENABLED": 0, "LOG_FILE": log, "LOG_LEVEL": "INFO", **settings}
    command = [sys.executable, "-m", "scrapy", "crawl", "blog", "-a", f"url=http://{HOST}/"]
    for key, value in settings.items():
        command += ["-s", f"{key}={value}"]
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "crawler.settings"}
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def rows(db: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_a_page_over_the_time_limit_is_an_error_and_the_crawl_finishes_the_other_posts(tmp_path):
    blog = Blog(HOST, 8)
    # 30,000 short paragraphs: trafilatura needs many seconds for this page
    blog.post("post-3").text = "\n\n".join(words(f"huge-{i}", 12) for i in range(30_000))
    db, log = tmp_path / "archive.db", tmp_path / "crawl.log"
    with BlogServer(blog) as server:
        proc = scrapy_crawl(db, server, log, ARCHIVE_EXTRACT_TIMEOUT=0.5, ARCHIVE_EXTRACT_WORKERS=2)
    assert proc.returncode == 0, proc.stderr
    posts = {url for (url,) in rows(db, "select url from posts")}
    assert posts == {f"http://{HOST}/p/post-{i}/" for i in range(1, 9) if i != 3}
    assert rows(db, "select url, kind, message from crawl_errors") == [
        (f"http://{HOST}/p/post-3/", "extract", "extraction took longer than 0.5 s: stopped")
    ]
    assert rows(db, "select status from crawl_runs") == [("finished",)]
    assert pool_summary(log)["timeout"] == 1


def test_back_pressure_bounds_the_pages_in_flight(tmp_path):
    blog = Blog(HOST, 60)
    for post in blog.posts:
        post.text = "\n\n".join(words(f"{post.slug}-{i}", 60) for i in range(80))  # slower to extract
    db, log = tmp_path / "archive.db", tmp_path / "crawl.log"
    with BlogServer(blog) as server:
        proc = scrapy_crawl(db, server, log, ARCHIVE_EXTRACT_WORKERS=1, ARCHIVE_EXTRACT_QUEUE=1,
                            CONCURRENT_REQUESTS=4, CONCURRENT_REQUESTS_PER_DOMAIN=4)
    assert proc.returncode == 0, proc.stderr
    assert rows(db, "select count(*) from posts") == [(60,)]
    summary = pool_summary(log)
    # one page in the worker, one waiting, what the four requests let through before the gate closed
    # bring, and as many responses again that Scrapy held between the downloader and the callback
    # (without the gate, 26 here)
    assert 1 <= summary["in_flight_max"] <= 1 + 1 + 4 + 4, summary


@pytest.fixture(scope="module")
def slow_server():
    with BlogServer(Blog(HOST, 24), delay=0.1) as server:
        yield server


def start_crawl(db: Path, server: BlogServer, log: Path, tag: str) -> subprocess.Popen:
    args = ["crawl", f"http://{HOST}/", "--db", str(db), "--delay", "0", "--map-host", f"{HOST}={server.base}",
            "--log-file", str(log)]
    return subprocess.Popen([BLOGARCHIVE, *args], cwd=ROOT, env={**os.environ, TAG: tag},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_posts(db: Path, proc: subprocess.Popen, at_least: int) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            if rows(db, "select count(*) from posts")[0][0] >= at_least:
                return
        except sqlite3.OperationalError:
            pass  # not created yet
        assert proc.poll() is None, "the crawl ended before it could be interrupted"
        assert time.monotonic() < deadline, "the crawl made no progress"
        time.sleep(0.05)


def test_no_worker_outlives_a_crawl(slow_server, tmp_path):
    tag = uuid.uuid4().hex
    db, log = tmp_path / "archive.db", tmp_path / "crawl.log"
    proc = start_crawl(db, slow_server, log, tag)
    wait_for_posts(db, proc, 2)
    workers = worker_pids(log)
    running = tagged(tag)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert len(workers) == max(1, os.cpu_count() - 1)  # a core for the crawl's own process
    assert set(workers) <= set(running)
    assert survivors(tag) == []
    assert rows(db, "select count(*) from posts") == [(24,)]


@pytest.mark.parametrize("workers", [0, 2])
def test_the_command_line_sets_the_number_of_workers(tmp_path, workers):
    db, log = tmp_path / "archive.db", tmp_path / "crawl.log"
    with BlogServer(Blog(HOST, 6)) as server:
        proc = subprocess.run([BLOGARCHIVE, "crawl", f"http://{HOST}/", "--db", str(db), "--delay", "0",
                               "--map-host", f"{HOST}={server.base}", "--log-file", str(log), "--workers", str(workers)],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert len(worker_pids(log)) == workers  # 0: extracted in the crawl's process, no worker started
    assert rows(db, "select count(*) from posts") == [(6,)]


def test_the_workers_are_as_many_as_the_cores_and_the_memory_budget_allow():
    # one core is the crawl's own; a worker costs 130 MB beside the 350 the processes at rest and
    # one big page on its way take
    assert [extract_workers(mb, cores=8) for mb in (256, 512, 1024, 4096)] == [1, 1, 5, 7]
    assert [extract_workers(mb, cores=2) for mb in (512, 4096)] == [1, 1]
    assert [extract_workers(2048, processes=n, cores=8) for n in (1, 2, 4)] == [7, 3, 1]
    # big pages at once: 200 MB each beyond the processes at rest; fewer workers leave more
    assert [lanes(512, 1), lanes(1024, 1), lanes(1024, 4), lanes(1024, 1, max_page_mb=5)] == [1, 3, 1, 14]


@pytest.mark.parametrize(("memory", "expected"), [(None, "512 MB, 1 extraction workers, 1 lanes"),
                                                  ("1024", "1024 MB, 1 extraction workers, 3 lanes")])
def test_the_command_line_sets_the_memory_budget(tmp_path, memory, expected):
    db, log = tmp_path / "archive.db", tmp_path / "crawl.log"
    with BlogServer(Blog(HOST, 3)) as server:
        proc = subprocess.run([BLOGARCHIVE, "crawl", f"http://{HOST}/", "--db", str(db), "--delay", "0",
                               "--map-host", f"{HOST}={server.base}", "--log-file", str(log), "--workers", "1",
                               *(["--memory-mb", memory] if memory else [])],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"memory budget: {expected} for big pages" in log.read_text()
    assert rows(db, "select count(*) from posts") == [(3,)]


def listening_ports(pids: list[int]) -> list[int]:
    """TCP ports on which any of ``pids`` listens (from /proc)."""
    inodes = set()
    for pid in pids:
        try:
            links = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
        except OSError:
            continue  # ended meanwhile
        inodes |= {link[len("socket:["):-1] for link in links if link.startswith("socket:[")}
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.append(int(fields[1].split(":")[1], 16))
    return ports


def test_a_crawl_listens_on_no_port(slow_server, tmp_path):
    """No telnet console, no remote control: a crawl of other people's sites opens no port."""
    tag = uuid.uuid4().hex
    db, log = tmp_path / "archive.db", tmp_path / "crawl.log"
    proc = start_crawl(db, slow_server, log, tag)
    wait_for_posts(db, proc, 2)
    assert listening_ports(tagged(tag)) == []
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err


@pytest.mark.parametrize("how", ["SIGTERM to blogarchive", "SIGKILL to the crawl's process"])
def test_no_worker_outlives_a_crawl_stopped_midway(slow_server, tmp_path, how):
    tag = uuid.uuid4().hex
    db, log = tmp_path / "archive.db", tmp_path / "crawl.log"
    proc = start_crawl(db, slow_server, log, tag)
    wait_for_posts(db, proc, 2)
    workers = worker_pids(log)
    assert workers and set(workers) <= set(tagged(tag))
    if how.startswith("SIGTERM"):
        proc.send_signal(signal.SIGTERM)
    else:
        scrapy = [pid for pid in tagged(tag) if parent(pid) == proc.pid]
        assert len(scrapy) == 1
        os.kill(scrapy[0], signal.SIGKILL)
    proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert survivors(tag) == []


def test_workers_import_neither_scrapy_nor_twisted():
    """What a worker imports before it takes its first page (``python -m crawler.extract.worker``)."""
    code = ("import sys, crawler.extract.worker, crawler.extract.warmup; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scrapy', 'twisted')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_workers_are_recycled_after_their_pages_and_the_results_stay_the_same():
    url, html = pages()[0]

    async def scenario():
        pool = await started(recycle_pages=2)
        try:
            pids = set()
            posts = []
            for _ in range(5):
                await warm(pool)
                pids |= {w.process.pid for w in pool.idle}
                posts.append(await pool.extract(url, html))
            return posts, pids, dict(pool.counts)
        finally:
            pool.close()

    posts, pids, counts = run(scenario())
    assert all(p == extract_post(url, html) for p in posts)
    assert counts == {"workers_recycled": 2} and len(pids) == 3


def test_a_worker_that_grew_past_its_memory_limit_is_recycled():
    url, html = pages()[0]

    async def scenario():
        pool = await started(recycle_mb=1)  # every worker holds more than 1 MB
        try:
            first = pool.idle[0].process.pid
            await pool.extract(url, html)
            await warm(pool)
            return first, pool.idle[0].process.pid, dict(pool.counts)
        finally:
            pool.close()

    first, second, counts = run(scenario())
    assert first != second and counts == {"workers_recycled": 1}


def test_pages_in_flight_are_all_answered_while_every_worker_is_recycled_after_each_page():
    jobs = pages()[:6] * 2  # more than the two workers and the queue of eight hold at once

    async def scenario():
        pool = await started(workers=2, queue=8, recycle_mb=1)  # every worker is replaced after each page
        try:
            posts = await asyncio.gather(*(pool.extract(url, html) for url, html in jobs))
            return posts, dict(pool.counts)
        finally:
            pool.close()

    posts, counts = run(scenario())
    assert posts == [extract_post(url, html) for url, html in jobs]
    assert counts == {"workers_recycled": len(jobs)}
