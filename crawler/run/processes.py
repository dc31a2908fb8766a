"""Several crawl processes on one machine (``blogarchive crawl --processes N``).

The sources are split by host: all the sources of one host go to one
process, so that its per-host delay, concurrency and robots.txt hold as with
one process. Every process sends its writes to ``blogarchive``, which is the
archive's one writer (``archive.tables.writer.serve_writes``) and applies them in
the order they arrive, in one transaction order.
"""

import contextlib
import heapq
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from multiprocessing import Pipe
from typing import IO, Any

from archive.core.urls import host_of
from archive.tables.writer import ArchiveWriter, Link, serve_writes

# Said once on the first Ctrl-C (written as bytes: a signal handler may interrupt a print).
STOPPING = b"stopping: the pages in flight are finished and saved (Ctrl-C again stops at once)\n"


class Forwarder:
    """SIGTERM and SIGINT passed on to the crawl's processes, while in a ``with`` block. The first
    Ctrl-C asks them to stop, and one line says so; a second one kills them and their extraction
    workers at once (``killed``): what they had not committed is fetched again by the next run."""

    def __init__(self, procs: list[subprocess.Popen]):
        self.procs = procs
        self.interrupted = self.killed = False
        self._previous: dict[int, Any] = {}

    def __call__(self, signum: int, frame: Any) -> None:
        if signum == signal.SIGINT:
            if self.interrupted:
                self.killed = True
                for proc in self.procs:  # each leads a session of its own, its workers in it
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                return
            self.interrupted = True
            os.write(2, STOPPING)
        for proc in self.procs:
            proc.send_signal(signum)

    def __enter__(self) -> "Forwarder":
        self._previous = {sig: signal.signal(sig, self) for sig in (signal.SIGTERM, signal.SIGINT)}
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


COUNTS = ("pages", "files", "posts", "errors", "queued")  # what each crawl process tells of its progress


def host_key(source: dict[str, Any], host_map: dict[str, str]) -> str:
    """What one process must crawl alone: the source's host without ``www.``, or the server it is fetched from."""
    host = host_of(source["scope"])
    bare = host.removeprefix("www.")
    return host_map.get(host) or host_map.get(bare) or host_map.get(f"www.{bare}") or bare


def split_by_host(sources: list[dict[str, Any]], processes: int, host_map: dict[str, str],
                  weights: dict[int, int]) -> list[list[int]]:
    """Source ids in at most ``processes`` groups, one host in one group, balanced by weight.

    Args:
        sources: the sources to crawl.
        processes: groups at most.
        host_map: ``--map-host``'s HOST -> BASE.
        weights: each source's known posts (the work of a new source is unknown: 1).
    """
    hosts: dict[str, list[int]] = {}
    for source in sources:
        hosts.setdefault(host_key(source, host_map), []).append(source["id"])
    heaviest = sorted(hosts.values(), key=lambda ids: (-sum(weights.get(i, 0) + 1 for i in ids), ids))
    groups: list[list[int]] = [[] for _ in range(min(processes, len(hosts)))]
    loads = [(0, n) for n in range(len(groups))]
    for ids in heaviest:  # the heaviest host to the lightest group
        load, n = heapq.heappop(loads)
        groups[n] += ids
        heapq.heappush(loads, (load + sum(weights.get(i, 0) + 1 for i in ids), n))
    return [sorted(group) for group in groups]


def run_processes(commands: list[list[str]], env: dict[str, str], lock: int, writer: ArchiveWriter, *,
                  on_progress: Callable[[dict[str, int]], None] | None = None,
                  on_output: Callable[[str], None] | None = None,
                  progress_interval: float = 5.0) -> tuple[list[int], list[str | None]]:
    """Run the crawl processes, serving their writes, until every one has ended.

    Each command gets ``-s ARCHIVE_WRITER_FD=FD``, its end of a socket to the
    writer. SIGTERM and SIGINT are passed on to every process (``Forwarder``). With ``on_output``,
    their standard error goes there, a line at a time.

    Returns:
        The processes' exit codes, and the reasons their crawls closed with
        (None: a process that ended without saying, killed).
    """
    links, procs = [], []
    for command in commands:
        ours, theirs = Pipe(duplex=True)
        fd = theirs.fileno()
        procs.append(subprocess.Popen([*command, "-s", f"ARCHIVE_WRITER_FD={fd}"], env=env, pass_fds=(lock, fd),
                                      start_new_session=True, stderr=subprocess.PIPE if on_output else None))
        theirs.close()
        links.append(Link(ours))
    readers = [forward_lines(proc.stderr, on_output) for proc in procs if proc.stderr and on_output]

    try:
        with Forwarder(procs):
            shown = time.monotonic()
            for _ in serve_writes(writer, links):
                if on_progress and time.monotonic() - shown >= progress_interval:
                    shown = time.monotonic()
                    on_progress(sum_counts(link.progress for link in links))
            returncodes = [proc.wait() for proc in procs]
        for reader in readers:
            reader.join(timeout=5)  # a worker that outlived its crawl may hold its standard error
        return returncodes, [link.closed for link in links]
    finally:
        for link in links:
            link.conn.close()


def forward_lines(stream: IO[bytes], to: Callable[[str], Any]) -> threading.Thread:
    """A thread that hands each line of ``stream`` on, until it ends."""
    def forward() -> None:
        with stream:
            for line in stream:
                to(line.decode("utf-8", "replace").rstrip("\n"))

    thread = threading.Thread(target=forward, daemon=True)
    thread.start()
    return thread


def sum_counts(counts: Iterable[dict[str, int]]) -> dict[str, int]:
    """The progress counts of several crawl processes (``crawler.run.progress``), added up."""
    added = dict.fromkeys(COUNTS, 0)
    for one in counts:
        for key in COUNTS:
            added[key] += one.get(key, 0)
    return added
