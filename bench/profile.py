"""Profiles for ``bench.run``: where the time goes when a target is missed, from py-spy's samples.

``record`` runs a command under ``py-spy record --subprocesses`` (or attaches to a running process)
and ``summary`` reads its raw output (one line per distinct stack: the processes, the thread, the
frames from the outermost, and the number of samples). Each sample is put in a *part*:

- ``reactor``: the Scrapy process's main thread (``bench.common.process_kind`` says which process is which);
- ``crawl threads``: that process's other threads (the archive's writer above all);
- ``workers``: the extraction workers;
- ``command``: ``blogarchive`` itself, or any other process (the Datasette server when one is profiled).

For each part: its share of all samples, the functions that most often run at the top of the stack
(``self``: the work itself, wherever it is), and this project's own functions (``crawler/``,
``archive/``, ``bench/``) by the share of the part's samples that pass through them (``inclusive``).
Without ``--idle``, py-spy samples a thread only while it runs, so the shares are of CPU time.

``missed`` profiles what ``make bench`` found missed: for the crawl's CPU per page and pace, a full
crawl of the same blog run again under py-spy (on CPU); for a search at scale, the Datasette server
while it answers the slowest search of the target (``--idle``: its waits for the disk count, its idle
threads do not), warm (its median), first after the server starts (its p95: the first search of a word
computes its matches) or cold (the archive out of the page cache). Alone, ``python -m bench.profile
[--db ARCHIVE]`` profiles what the last ``bench/results.json`` missed and writes docs/benchmarks.md again.
"""

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from bench.blogs import write_site
from bench.common import BIN, CONCURRENCY, ROOT, free_port, process_kind, start_server, wait_for
from bench.report import scale_targets, targets, write_report
from bench.search import evict, search_urls

OURS = ("crawler/", "archive/")
TOP = 8
# "name (path:line)" or "name (path)": the function and its file, without the line
FRAME = re.compile(r"^(?P<name>.*) \((?P<file>[^():]*)(?::\d+)?\)$")


def py_spy() -> str | None:
    """The py-spy next to this interpreter, or on the PATH (``make bench`` installs it)."""
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.exists() else shutil.which("py-spy")


def record_command(command: list[str], out: Path, rate: int = 100) -> list[str]:
    """``command`` run under py-spy: it samples it and every process it starts, ``rate`` times a second."""
    spy = py_spy()
    if spy is None:
        raise FileNotFoundError("py-spy is not installed (pip install -e '.[bench]')")
    return [spy, "record", "--subprocesses", "--threads", "--nonblocking", "--format", "raw",
            "--rate", str(rate), "-o", str(out), "--", *command]


def attach(pid: int, out: Path, rate: int = 1000, idle: bool = False) -> subprocess.Popen:
    """py-spy sampling the running process ``pid`` until it is sent SIGINT (``stop``)."""
    spy = py_spy()
    if spy is None:
        raise FileNotFoundError("py-spy is not installed (pip install -e '.[bench]')")
    args = [spy, "record", "--pid", str(pid), "--threads", "--nonblocking", "--format", "raw",
            "--rate", str(rate), "-o", str(out)] + (["--idle"] if idle else [])
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def stop(spy: subprocess.Popen) -> None:
    """End an ``attach``: py-spy writes its samples when interrupted."""
    spy.send_signal(2)
    spy.wait(30)


def _function(frame: str) -> str:
    """``name (file)`` of a py-spy frame, its path cut to the part after ``site-packages/`` or the project's root."""
    match = FRAME.match(frame.strip())
    if not match:
        return frame.strip()
    path = match["file"]
    for root in ("site-packages/", "/lib/python3"):
        if root in path:
            path = path.split(root, 1)[1]
    for own in OURS + ("bench/",):
        if f"/{own}" in path:
            path = own + path.split(f"/{own}", 1)[1]
    return f"{match['name']} ({path})"


def _part(processes: list[str], thread: str) -> str:
    kind = process_kind(processes[-1].split()) if processes else "command"
    if kind == "crawl":
        return "reactor" if thread.endswith("MainThread") else "crawl threads"
    return {"worker": "workers"}.get(kind, "command")


def stacks(raw: str):
    """(part, thread, frames from the outermost, samples) of each line of py-spy's raw output."""
    for line in raw.splitlines():
        body, _, count = line.rpartition(" ")
        if not body or not count.isdigit():
            continue
        fields = body.split(";")
        processes = [f.split(":", 1)[1].strip('"') for f in fields if f.startswith("process ")]
        thread = next((f for f in fields if f.startswith("thread ")), "")
        frames = [f for f in fields if not f.startswith(("process ", "thread "))]
        yield _part(processes, thread), thread, frames, int(count)


def summary(raw: str, skip: tuple[str, ...] = ()) -> dict:
    """Each part's share of the samples and its top functions (see the module's docstring). A stack whose
    top frame's function (its method's name) is in ``skip`` (a thread waiting, sampled with ``--idle``)
    is left out."""
    total = 0
    parts: dict[str, dict] = {}
    for part, _, frames, count in stacks(raw):
        if not frames or frames[-1].split(" (")[0].rsplit(".", 1)[-1] in skip:
            continue
        total += count
        entry = parts.setdefault(part, {"samples": 0, "self": Counter(), "inclusive": Counter()})
        entry["samples"] += count
        entry["self"][_function(frames[-1])] += count
        for name in {_function(f) for f in frames}:
            if name.split(" (")[-1].startswith(OURS):
                entry["inclusive"][name] += count
    out: dict[str, Any] = {"samples": total, "parts": {}}
    for part, entry in sorted(parts.items(), key=lambda kv: -kv[1]["samples"]):
        n = entry["samples"]
        out["parts"][part] = {
            "share": n / max(total, 1),
            "self": [(name, c / n) for name, c in entry["self"].most_common(TOP)],
            "inclusive": [(name, c / n) for name, c in entry["inclusive"].most_common(TOP)],
        }
    return out


# A thread sampled with ``--idle`` while it waits: the event loop in its selector, an executor's
# thread for its next job, a lock or a condition.
WAITING = ("select", "_worker", "wait", "poll", "_wait_for_tstate_lock", "get", "accept", "sleep")
SEARCH_RATE = 1000
SEARCH_REPEAT = 5  # warm searches profiled together


def crawl_profile(size: int, work: Path) -> dict:
    """A full crawl of the bench's ``size``-post blog under py-spy, 100 samples a second: its summary."""
    site = work / f"profile-site-{size}"
    site.mkdir()
    server, base = start_server(site)
    try:
        write_site(site, size, base)
        db, out = work / f"profile-{size}.db", work / f"profile-{size}.txt"
        command = [str(BIN / "blogarchive"), "crawl", f"{base}/", "--db", str(db), "--delay", "0",
                   "--concurrency", str(CONCURRENCY), "--max-pages", "100000", "--quiet"]
        started = time.monotonic()
        subprocess.run(record_command(command, out), cwd=ROOT, check=True, capture_output=True)
        seconds = time.monotonic() - started
        return {"what": f"the full crawl of the {size:,}-post blog, on CPU, 100 samples a second",
                "seconds": seconds, **summary(out.read_text())}
    finally:
        server.terminate()
        server.wait(10)
        shutil.rmtree(site, ignore_errors=True)


def search_profile(db: Path, search: str, kind: str, work: Path) -> dict:
    """The Datasette server of ``blogarchive serve`` under py-spy (``--idle``) while it answers ``search``
    ("WAY TERM", ``bench.search.search_urls``): ``warm`` (``SEARCH_REPEAT`` times after the same search
    twice), ``first`` (the first search of a fresh server) or ``cold`` (the same, the archive's file out
    of the page cache first)."""
    way, term = search.split(" ", 1)
    if kind == "cold":
        evict(db)
    port = free_port()
    server = subprocess.Popen([str(BIN / "blogarchive"), "serve", "--db", str(db), "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = work / "search-profile.txt"
    try:
        wait_for(f"http://127.0.0.1:{port}/-/versions.json")
        url = search_urls(f"http://127.0.0.1:{port}/{db.stem}", term)[way]
        repeat = SEARCH_REPEAT if kind == "warm" else 1
        if kind == "warm":
            for _ in range(2):
                urllib.request.urlopen(url, timeout=60).read()
        spy = attach(server.pid, out, rate=SEARCH_RATE, idle=True)
        time.sleep(1.0)  # py-spy attached and sampling
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            try:
                urllib.request.urlopen(url, timeout=60).read()
            except urllib.error.HTTPError:
                pass  # over the time limit: the profile says where the time went
            times.append((time.perf_counter() - started) * 1000)
        stop(spy)
    finally:
        server.terminate()
        server.wait(10)
    profile = summary(out.read_text(), skip=WAITING)
    parts = list(profile["parts"].values())
    profile["parts"] = {"Datasette server": parts[-1]} if parts else {}  # its one process
    what = {"warm": f"{repeat} warm searches", "first": "the first search of a fresh server",
            "cold": "the first search of a fresh server, the archive out of the page cache"}[kind]
    return {"what": f"`{search}` at {SEARCH_RATE} samples a second with its waits: {what}",
            "ms": sum(times) / len(times), **profile}


def missed(results: dict, work: Path, db: Path | None = None) -> list[dict]:
    """A profile of the targets of ``results`` missed: each with ``targets``, the names (``bench.report``'s)
    of those it explains (the crawl's CPU and pace share one)."""
    profiles: list[dict] = []
    for run in results["runs"]:
        names = [name for name, ok, _ in targets([run]) if not ok and ("CPU s per page" in name or "posts/s" in name
                                                                      or "extraction-only floor" in name)]
        if names:
            profiles.append({"targets": names, **crawl_profile(run["size"], work)})
    scale = results.get("search_at_scale")
    if scale and db is not None:
        by_search: dict[tuple[str, str], dict] = {}
        for name, ok, _, search, kind in scale_targets(scale, with_search=True):
            if not ok and search:
                if (search, kind) not in by_search:
                    by_search[search, kind] = {"targets": [], **search_profile(db, search, kind, work)}
                    profiles.append(by_search[search, kind])
                by_search[search, kind]["targets"].append(name)
    return profiles


def main() -> None:
    parser = argparse.ArgumentParser(description="Profiles of the targets bench/results.json missed.")
    parser.add_argument("--db", type=Path, help="the archive of the search at scale (bench.search --db), to "
                                                "profile its searches; without it, only the crawls")
    args = parser.parse_args()
    path = ROOT / "bench" / "results.json"
    results = json.loads(path.read_text())
    with tempfile.TemporaryDirectory(prefix="blogarchive-profile-") as work:
        results["profiles"] = missed(results, Path(work), args.db and args.db.resolve())
    path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(write_report(results, ROOT / "docs" / "benchmarks.md"))


if __name__ == "__main__":
    main()
