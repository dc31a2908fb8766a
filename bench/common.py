"""What the benchmarks share: the project's paths, a command measured, a crawl, the bench server, the machine.

Every ``bench`` module that runs something imports this one, and it imports no other ``bench``
module, so the benchmarks' imports form a tree: ``bench.run`` at the top, then ``bench.profile``,
``bench.search``, ``bench.scaling``, ``bench.media``, ``bench.deadhost``, ``bench.changes``, ``bench.platforms``
and ``bench.rendering``, then ``bench.report``,
``bench.blogs``, ``bench.server`` and this module.

Peak RSS is the largest sum, over the samples (every 0.1 s), of the RSS of a command's process and
all its descendants (extraction workers included); peak PSS the same sum of each process's
proportional share. CPU seconds are summed over the same processes (``Sampler``).
"""

import contextlib
import os
import platform
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CONCURRENCY = 16


def process_kind(cmdline: list[str]) -> str:
    """What a process of the crawl's tree is, from its command line: ``crawl`` (a Scrapy process),
    ``worker`` (an extraction worker) or ``command``."""
    if "scrapy" in cmdline:  # python -m scrapy crawl
        return "crawl"
    return "worker" if "crawler.extract.worker" in cmdline else "command"


class Sampler:
    """Peak RSS and CPU seconds of a process and its descendants, sampled every 0.1 s."""

    def __init__(self, pid: int):
        self.root = psutil.Process(pid)
        self.peak_rss = 0
        self.peak_pss = 0
        self.cpu: dict[int, float] = {}
        self.pids: set[int] = set()
        self.kinds: dict[int, str] = {}  # pid: "crawl" (a Scrapy process), "worker" (extraction) or "command"
        self.reactor: dict[int, tuple[float, float, float]] = {}  # its main thread's CPU, first and last seen
        self.threads: dict[int, dict[int, float]] = {}  # a crawl process's threads' CPU, by thread id
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                procs = [self.root, *self.root.children(recursive=True)]
            except psutil.NoSuchProcess:
                break
            rss = pss = 0
            for proc in procs:
                try:
                    with proc.oneshot():
                        memory = proc.memory_full_info()
                        rss += memory.rss
                        pss += memory.pss
                        times = proc.cpu_times()
                        self.cpu[proc.pid] = times.user + times.system
                        self.pids.add(proc.pid)
                        if proc.pid not in self.kinds:  # its command line read once
                            self.kinds[proc.pid] = process_kind(proc.cmdline())
                        if self.kinds[proc.pid] == "crawl":
                            threads = {t.id: t.user_time + t.system_time for t in proc.threads()}
                            self.threads.setdefault(proc.pid, {}).update(threads)
                            now = time.monotonic()
                            first = self.reactor.get(proc.pid, (0, now, now))[1]
                            self.reactor[proc.pid] = (threads.get(proc.pid, 0.0), first, now)
                except psutil.NoSuchProcess:
                    continue
            self.peak_rss = max(self.peak_rss, rss)
            self.peak_pss = max(self.peak_pss, pss)
            self.stop.wait(0.1)

    def finish(self) -> dict[str, Any]:
        self.stop.set()
        self.thread.join()
        usage: dict[str, Any] = {"peak_rss_mb": self.peak_rss / 2**20, "peak_pss_mb": self.peak_pss / 2**20,
                                 "cpu_seconds": sum(self.cpu.values()), "processes": len(self.pids)}
        if self.reactor:  # the crawl's reactor thread: its CPU over the crawl process's life
            cpu, first, last = max(self.reactor.values())
            usage["reactor_busy"] = cpu / max(last - first, 0.1)
        # where the CPU went: the crawl processes' main (reactor) threads and their other threads
        # (the archive's writer above all), the extraction workers, and the rest (blogarchive itself)
        split = dict.fromkeys(("reactor", "crawl_threads", "workers", "command"), 0.0)
        for pid, cpu in self.cpu.items():
            if self.kinds.get(pid) == "crawl":
                threads = self.threads.get(pid, {})
                split["reactor"] += threads.get(pid, 0.0)
                split["crawl_threads"] += max(cpu - threads.get(pid, 0.0), 0.0)
            else:
                split["workers" if self.kinds.get(pid) == "worker" else "command"] += cpu
        usage["cpu_split"] = split
        return usage


def measured(command: list[str], timeout: float | None = None,
             **kwargs: Any) -> tuple[subprocess.CompletedProcess, dict[str, Any]]:
    """Run ``command``; its result, wall seconds, peak RSS and CPU seconds (descendants included).
    Past ``timeout`` seconds it is killed, and ``timed_out`` says so."""
    started = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)
    sampler = Sampler(proc.pid)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return subprocess.CompletedProcess(command, proc.returncode, out, err), {
            "seconds": time.monotonic() - started, **sampler.finish(), "timed_out": True}
    seconds = time.monotonic() - started
    usage = sampler.finish()
    if proc.returncode:
        raise SystemExit(f"{' '.join(command)} exited {proc.returncode}:\n{err[-3000:]}")
    return subprocess.CompletedProcess(command, proc.returncode, out, err), {"seconds": seconds, **usage}


def last_run(db: Path) -> dict:
    """The last row of the archive's ``crawl_runs``."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return dict(conn.execute("select * from crawl_runs order by id desc limit 1").fetchone())
    finally:
        conn.close()


def crawl(db: Path, *args: str) -> dict[str, Any]:
    """``blogarchive crawl ARGS`` into ``db`` at full speed, measured; its figures and its run's counts."""
    command = [str(BIN / "blogarchive"), "crawl", *args, "--db", str(db), "--delay", "0",
               "--concurrency", str(CONCURRENCY), "--max-pages", "100000", "--quiet"]
    _, usage = measured(command, cwd=ROOT)
    run = last_run(db)
    pages = run["pages"] or 0
    posts = run["posts_new"] + run["posts_updated"] + run["posts_unchanged"]
    return {**usage, "pages": pages, "posts": posts, "requests": run["requests"], "extractions": run["extractions"],
            "errors": run["errors"], "pages_per_s": pages / usage["seconds"], "posts_per_s": posts / usage["seconds"],
            "cpu_s_per_page": usage["cpu_seconds"] / max(pages, 1),
            "db_mb": sum(f.stat().st_size for f in db.parent.glob(db.name + "*") if f.suffix != ".lock") / 2**20}


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url: str) -> None:
    """Return once ``url`` answers; raise after a minute of refusals."""
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def start_server(site: Path) -> tuple[subprocess.Popen, str]:
    """``bench.server`` on port 80 when it can have it (trafilatura's URL checks refuse an IP address
    with a port), else on a free one; the server and its base URL."""
    for port in ("80", "0"):
        server = subprocess.Popen([sys.executable, "-m", "bench.server", str(site), port], cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert server.stdout is not None
        bound = server.stdout.readline().strip()
        if bound:
            if bound != "80":
                print("port 80 is taken: trafilatura's command line will refuse the blog's URLs, and its row "
                      "will not measure it", file=sys.stderr)
            return server, "http://127.0.0.1" + ("" if bound == "80" else f":{bound}")
        server.wait()
    raise SystemExit("the test server did not start")


@contextlib.contextmanager
def served_site(work: Path) -> Iterator[tuple[Path, str]]:
    """A new folder ``work/site`` served by ``start_server``: the folder and its base URL; the server
    stopped on the way out."""
    site = work / "site"
    site.mkdir()
    server, base = start_server(site)
    try:
        yield site, base
    finally:
        server.terminate()
        server.wait(10)


def crawl_media_modes(work: Path, crawl_one: Callable[[Path, str], dict], label: str) -> dict[str, dict]:
    """``crawl_one(db, mode)`` into a fresh archive under ``work``, ``--media off`` then ``--media all``;
    each mode's result, printed as it comes with ``label``."""
    results = {}
    for mode in ("off", "all"):
        db = work / mode / "archive.db"
        db.parent.mkdir()
        results[mode] = crawl_one(db, mode)
        print(f"[{label} {mode}] {results[mode]}", file=sys.stderr)
    return results


def machine() -> dict:
    """The machine measured on: CPU, cores, memory, Python, system, and the date."""
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())
    return {"cpu": model, "cores": os.cpu_count(), "ram_gb": round(psutil.virtual_memory().total / 2**30, 1),
            "python": platform.python_version(), "system": f"{platform.system()} {platform.release()}",
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
