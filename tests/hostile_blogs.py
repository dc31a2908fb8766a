"""Blogs that send what a crawler's memory fears, served by one FaultServer on 127.0.0.1.

Each blog lives under its own folder ``/NAME/`` (so each is a source of its own) and links a
few posts from its home page. ``KINDS`` names what its posts are:

- ``big-11mb`` and ``big-19mb``: gzip bodies that decompress to 11.5 MB and 19 MB of markup
  (under the 20 MB cap, so they are legal);
- ``br-bomb``: a brotli body that would decompress to 64 GiB (12 MB on the wire);
- ``links``: a page of 500,000 links;
- ``feed``: a feed of 100,000 entries (the home page declares it);
- ``real-15mb``: an HTML page of 15 MB that is a real post, to be archived whole.

``PeakWatch(pid)`` samples /proc while a command runs: the memory of a process and all its
descendants.
"""

import gzip
import os
import threading
import time
from functools import cache

import brotli
from faultserver import answer

KINDS = ("big-11mb", "big-19mb", "br-bomb", "links", "feed", "real-15mb")
# Twenty sources at once: four of each size of big body, and three of each other kind.
TWENTY = ("big-11mb",) * 4 + ("big-19mb",) * 4 + ("br-bomb", "links", "feed", "real-15mb") * 3
POSTS = 2  # linked from each home page
PAGE = os.sysconf("SC_PAGE_SIZE")


def _markup(size: int, seed: str) -> bytes:
    para = "<p>" + " ".join(f"{seed}{i % 97} filler" for i in range(60)) + "</p>\n"
    body = para * (size // len(para))
    return f"<html><head><title>{seed}</title></head><body><div>{body}</div></body></html>".encode()


@cache
def big(size: int) -> bytes:
    return gzip.compress(_markup(size, "pad"), compresslevel=1)


@cache
def br_bomb(gib: int = 64) -> bytes:
    """``gib`` GiB of zeros as brotli: a 16 MiB block of zeros compresses to the same bytes
    each time once the window is full, so the stream is those bytes repeated."""
    compressor = brotli.Compressor(quality=1, lgwin=24)
    zeros = b"\0" * (1 << 24)
    first = compressor.process(zeros) + compressor.flush()
    block = compressor.process(zeros) + compressor.flush()
    assert block == compressor.process(zeros) + compressor.flush()
    return first + block * (gib * 64 - 3) + block + compressor.finish()


@cache
def many_links(count: int = 500_000) -> bytes:
    links = "".join(f'<a href="//x.invalid/{i}">{i}</a>' for i in range(count))  # out of scope: not fetched
    return f"<html><head><title>Links</title></head><body>{links}</body></html>".encode()


@cache
def huge_feed(name: str, count: int = 100_000) -> bytes:
    items = "".join(
        f"<item><title>Entry {i}</title><link>http://elsewhere.invalid/{name}/{i}/</link>"
        f"<pubDate>Mon, 01 Jan 2024 10:00:00 +0000</pubDate></item>\n"
        for i in range(count))
    return (f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>{name}</title>'
            f"<link>http://{name}/</link>{items}</channel></rss>").encode()


@cache
def real_post(size: int = 15 * 1024 * 1024, title: str = "A very long post") -> bytes:
    """A post of ``size`` bytes; the posts of a blog differ by ``title`` (one title and text at two
    URLs of a blog is one post with an alias)."""
    sentences = ("The archive keeps every paragraph of this long post, which goes on for pages and pages "
                 "about crawling, parsing and the care a faithful copy needs. ")
    paras = "".join(f"<p>Paragraph {i}. {sentences * 6}</p>\n" for i in range(size // (len(sentences) * 6 + 30)))
    return (f'<html lang="en"><head><title>{title}</title><meta property="og:type" content="article">'
            f'<meta property="og:title" content="{title}">'
            '<meta property="article:published_time" content="2024-05-01T10:00:00+00:00"></head>'
            f"<body><article><h1>{title}</h1>{paras}</article></body></html>").encode()


def home(name: str, kind: str) -> bytes:
    links = "".join(f'<a href="/{name}/p/{i}/">post {i}</a> ' for i in range(1, POSTS + 1))
    feed = f'<link rel="alternate" type="application/rss+xml" href="/{name}/feed.xml">' if kind == "feed" else ""
    return f"<html><head><title>{name}</title>{feed}</head><body>{links}</body></html>".encode()


def routes(blogs: dict[str, str]) -> dict:
    """The server's routes for ``{name: kind}``."""
    out = {"/robots.txt": answer(200, b"User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"})}
    for name, kind in blogs.items():
        out[f"/{name}/"] = answer(200, home(name, kind))
        for i in range(1, POSTS + 1):
            path = f"/{name}/p/{i}/"
            if kind == "big-11mb":
                out[path] = answer(200, big(int(11.5 * 1024 * 1024)), {"Content-Encoding": "gzip"})
            elif kind == "big-19mb":
                out[path] = answer(200, big(19 * 1024 * 1024), {"Content-Encoding": "gzip"})
            elif kind == "br-bomb":
                out[path] = answer(200, br_bomb(), {"Content-Encoding": "br"})
            elif kind == "links":
                out[path] = answer(200, many_links())
            elif kind == "real-15mb":
                out[path] = answer(200, real_post(title=f"A very long post, part {i}"))
            else:  # the feed's blog: its posts are ordinary
                out[path] = answer(200, _markup(20_000, f"{name}-{i}"))
        if kind == "feed":
            out[f"/{name}/feed.xml"] = answer(200, huge_feed(name), {"Content-Type": "application/rss+xml"})
    return out


class ProcessTree:
    """``ProcessTree(root).pids()``: ``root`` and every process below it now, from /proc. Each
    process's parent is read once, when it is first seen (a process keeps its pid and its parent
    while it lives, unless its parent dies first), so a call costs a listing of /proc, not a read
    of every process on the machine."""

    def __init__(self, root: int):
        self.root = root
        self.parents: dict[int, int] = {}

    def pids(self) -> set[int]:
        alive = {int(entry) for entry in os.listdir("/proc") if entry.isdigit()}
        for pid in self.parents.keys() - alive:
            del self.parents[pid]
        for pid in alive - self.parents.keys():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    self.parents[pid] = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
        tree, changed = {self.root}, True
        while changed:
            grown = tree | {pid for pid, parent in self.parents.items() if parent in tree}
            changed, tree = grown != tree, grown
        return tree


def rss_mb(pid: int) -> float:
    """A process's resident set in MB, from /proc/PID/statm (the kernel's counters: cheap to read)."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def pss_mb(pid: int) -> float:
    """A process's proportional share of its resident set (shared pages divided among the processes
    that map them) in MB, from /proc/PID/smaps_rollup: the kernel walks the process's pages to
    tell, tens of milliseconds for a process of hundreds of MB."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def _command(pid: int) -> str:
    """A process's command line, short: ``python -m crawler.extract.worker``."""
    words = _cmdline(pid).decode(errors="replace").rstrip("\0").split("\0")
    if words == [""]:
        return f"pid {pid}"
    return " ".join(os.path.basename(w) if i == 0 else w for i, w in enumerate(words[:3]))


class PeakWatch:
    """``with PeakWatch(pid) as watch: ...``: the peaks, sampled every 20 ms, of the process tree's
    summed RSS (``peak_rss_mb``: a page shared by two processes counts twice) and summed PSS
    (``peak_pss_mb``: the memory the tree holds, each shared page counted once); ``at_peak`` says
    which processes held the RSS peak (what a failed budget assertion prints). The PSS, costly to
    read, is read at each new peak of the RSS and every ``PSS_EVERY`` samples between. A process
    caught between its fork and its exec is its parent's pages, counted once, in its parent."""

    PSS_EVERY = 10

    def __init__(self, pid: int, interval: float = 0.02):
        self.pid, self.interval = pid, interval
        self.peak_rss_mb = self.peak_pss_mb = 0.0
        self.at_peak = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        tree = ProcessTree(self.pid)
        samples = 0
        while not self._stop.is_set():
            pids = tree.pids()
            # a child that has the command line of its parent has not called exec yet: between the fork
            # (a vfork, for subprocess) and the exec it maps its parent's own pages, counted there
            by_pid = {pid: rss_mb(pid) for pid in pids
                      if not (tree.parents.get(pid) in pids and _cmdline(pid) == _cmdline(tree.parents[pid]))}
            peak = sum(by_pid.values()) > self.peak_rss_mb
            if peak:
                self.peak_rss_mb = sum(by_pid.values())
                self.at_peak = "; ".join(f"{_command(pid)} {rss:.0f} MB" for pid, rss in by_pid.items())
            if peak or samples % self.PSS_EVERY == 0:
                self.peak_pss_mb = max(self.peak_pss_mb, sum(pss_mb(pid) for pid in by_pid))
            samples += 1
            time.sleep(self.interval)

    def __enter__(self) -> "PeakWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def measure(blogs: dict[str, str], db: str) -> tuple[float, float, float, int]:
    """Crawl ``blogs`` into ``db``: (peak RSS, peak PSS, seconds, exit code)."""
    import subprocess
    import sys
    from pathlib import Path

    from faultserver import FaultServer

    for suffix in ("", "-wal", "-shm"):
        Path(db + suffix).unlink(missing_ok=True)
    with FaultServer(routes(blogs)) as server:
        args = [str(Path(sys.executable).with_name("blogarchive")), "crawl", "--db", db, "--delay", "0", "-q"]
        for name in blogs:
            args += [f"http://{name}.test/{name}/", "--map-host", f"{name}.test={server.base}"]
        started = time.monotonic()
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with PeakWatch(proc.pid) as watch:
            proc.wait()
    return watch.peak_rss_mb, watch.peak_pss_mb, time.monotonic() - started, proc.returncode


if __name__ == "__main__":  # python tests/hostile_blogs.py: the table in docs/reliability.md
    import tempfile

    db = os.path.join(tempfile.mkdtemp(), "hostile.db")
    print("| input | sources | peak RSS, summed (MB) | peak PSS, summed (MB) | seconds |\n|---|---:|---:|---:|---:|")
    for label, kinds in [*((k, [k]) for k in KINDS), ("all six at once", list(KINDS)), ("20 sources at once", TWENTY)]:
        rss, pss, seconds, code = measure({f"b{i}": kind for i, kind in enumerate(kinds)}, db)
        print(f"| {label} | {len(kinds)} | {rss:.0f} | {pss:.0f} | {seconds:.0f} |" + ("" if code == 0 else f" exit {code}"), flush=True)
