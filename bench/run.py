"""The benchmark: ``python -m bench.run [--sizes 1000,10000]`` (``make bench``), by hand, never in tests.

For each size, one synthetic blog (``bench.blogs``) is served on 127.0.0.1 by
``bench.server`` and measured, in one run, on the same pages:

- extraction-only floor: the post pages read from disk and extracted by a
  process pool sized to the cores (``extract_post``, the crawl's settings);
- fetch-only floor: Scrapy fetching every URL of the sitemap, no parsing;
- blogarchive: a full crawl, a recrawl with no change, a ``--recheck``;
- trafilatura's command line on the same sitemap (its config file turns
  SSRF protection and the 5 s sleep off, so that it may fetch 127.0.0.1 at full speed);
- full-text search through ``blogarchive serve`` (Datasette's JSON API), three ways
  (``search_latency``); then, on an archive of ``--search-posts`` posts built without a crawl,
  searches warm and cold, the indexes' cost per post written and bytes per post (``bench.search``);
- start-up: seconds from ``blogarchive crawl`` (a no-change recrawl) starting to its
  first request reaching a server (``first_request``, the median of three), and Scrapy's own
  floor: the fetch floor's spider asking for one URL;
- a changed blog (``bench.blogs.change_site``: posts added, old ones edited, some
  deleted), then one default crawl: the edits it saw, the deletions it marked, its
  requests and seconds (``changed_blog``).

The reactor thread's share (``reactor_busy``) is the CPU seconds of the Scrapy process's main
thread over that process's life, both sampled with the rest. ``cpu_split`` says where a crawl's
CPU went: that main thread, the Scrapy process's other threads (the archive's writer above all),
the extraction workers, and the command line. Each target missed gets a profile (``bench.profile``):
where the crawl's CPU goes, or the Datasette server's time while it answers the slowest search.

Peak RSS is the largest sum, over the samples (every 0.1 s), of the RSS of a
command's process and all its descendants (extraction workers included); it counts
a page shared by several of them once per process. Peak PSS is the
same sum of each process's proportional share, which counts every page once: what
the tree holds. CPU seconds are summed over the same processes. Writes bench/results.json
and docs/benchmarks.md.
"""

import argparse
import functools
import http.server
import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timezone
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import psutil
import trafilatura

from bench.blogs import EDIT_MARK, change_site, write_site
from bench.profile import missed
from bench.report import write_report
from bench.search import archive_bytes, search_at_scale, search_urls
from bench.server import QuietHandler

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CONCURRENCY = 16
SEARCHES = {"en": ["database", "memory latency"], "zh": ["数据库", "内存"]}
SEARCH_REPEAT = 20


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
                            self.kinds[proc.pid] = _kind(proc.cmdline())
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

    def finish(self) -> dict[str, float]:
        self.stop.set()
        self.thread.join()
        usage = {"peak_rss_mb": self.peak_rss / 2**20, "peak_pss_mb": self.peak_pss / 2**20,
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


def _kind(cmdline: list[str]) -> str:
    """What a process of the crawl's tree is, from its command line."""
    if "scrapy" in cmdline:  # python -m scrapy crawl
        return "crawl"
    return "worker" if "crawler.extract.worker" in cmdline else "command"


def measured(command: list[str], timeout: float | None = None, **kwargs) -> tuple[subprocess.CompletedProcess, dict[str, float]]:
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


def _warm() -> None:
    import crawler.extract.warmup  # noqa: F401  (the crawl's workers start warm too)


def _extract_file(args: tuple[str, str]) -> bool:
    from crawler.extract.post import extract_post

    url, path = args
    return extract_post(url, Path(path).read_text(encoding="utf-8")) is not None


def extraction_floor(site: Path, base: str, posts: list) -> dict[str, float]:
    """The post pages extracted from disk by a process pool sized to the cores, timed after warm-up."""
    jobs = [(base + p.path, str(site / p.path.strip("/") / "index.html")) for p in posts]
    workers = os.cpu_count() or 1
    with ProcessPoolExecutor(workers, mp_context=get_context("forkserver"), initializer=_warm) as pool:
        list(pool.map(_extract_file, jobs[:workers * 4]))
        cpu = psutil.cpu_times()
        started = time.monotonic()
        found = sum(pool.map(_extract_file, jobs, chunksize=8))
        seconds = time.monotonic() - started
        after = psutil.cpu_times()
    busy = (after.user + after.system) - (cpu.user + cpu.system)
    return {"posts": found, "seconds": seconds, "posts_per_s": found / seconds, "cpu_s_per_post": busy / found}


def fetch_floor(urls: list[str], work: Path) -> dict[str, float]:
    url_file, out = work / "urls.txt", work / "fetch.json"
    url_file.write_text("\n".join(urls))
    command = [str(BIN / "scrapy"), "runspider", str(ROOT / "bench" / "fetch.py"), "-a", f"urls={url_file}",
               "-a", f"out={out}", "-s", f"CONCURRENT_REQUESTS={CONCURRENCY}",
               "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={CONCURRENCY}", "-s", "ROBOTSTXT_OBEY=0",
               "-s", "LOG_LEVEL=WARNING", "-s", "TELNETCONSOLE_ENABLED=0"]
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    _, usage = measured(command, cwd=work, env=env)
    result = json.loads(out.read_text())
    return {"pages": result["pages"], "seconds": result["seconds"], "pages_per_s": result["pages"] / result["seconds"],
            "cpu_s_per_page": usage["cpu_seconds"] / result["pages"]}


def last_run(db: Path) -> dict:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return dict(conn.execute("select * from crawl_runs order by id desc limit 1").fetchone())
    finally:
        conn.close()


def crawl(db: Path, *args: str) -> dict[str, float]:
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


def trafilatura_cli(base: str, work: Path, limit: float) -> dict[str, float]:
    """trafilatura's command line: the sitemap's URLs (``--sitemap --list``), then those pages extracted
    (``-i``), stopped after ``limit`` seconds. In one step (``--sitemap URL -o DIR``) with no sleep,
    trafilatura 2.3.1 downloads the sitemap itself again and again and never ends."""
    config = ["--config-file", str(ROOT / "bench" / "trafilatura.cfg")]
    listing, found = measured([str(BIN / "trafilatura"), "--sitemap", f"{base}/sitemap.xml", "--list", *config], cwd=work)
    (work / "trafilatura.txt").write_text(listing.stdout)
    out = work / "trafilatura"
    _, usage = measured([str(BIN / "trafilatura"), "-i", str(work / "trafilatura.txt"), "-o", str(out), "--markdown",
                         "--no-comments", *config], timeout=limit - found["seconds"], cwd=work)
    files = len(list(out.iterdir())) if out.exists() else 0
    seconds = found["seconds"] + usage["seconds"]
    return {**usage, "seconds": seconds, "urls": len(listing.stdout.split()), "files": files,
            "cpu_seconds": found["cpu_seconds"] + usage["cpu_seconds"],
            "peak_rss_mb": max(found["peak_rss_mb"], usage["peak_rss_mb"]), "posts_per_s": files / seconds}


def search_latency(db: Path, searches: dict[str, list[str]] = SEARCHES) -> dict[str, dict[str, float]]:
    """Median, 95th percentile and worst milliseconds of a search, three ways: ``api``, the posts table's ``_search``
    as a program asks it (``_nocount=1&_nofacet=1`` and three columns, docs/datasette.md);
    ``table``, every column with the count and the five facets the table page shows; ``canned``,
    the ``search`` canned query (100 rows in full, with snippets)."""
    port = _free_port()
    server = subprocess.Popen([str(BIN / "blogarchive"), "serve", "--db", str(db), "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/{db.stem}"
    try:
        _wait_for(f"http://127.0.0.1:{port}/-/versions.json")
        results = {}
        for lang, terms in searches.items():
            for term in terms:
                for name, url in search_urls(base, term).items():
                    times, hits, error = [], 0, None
                    for _ in range(SEARCH_REPEAT):
                        started = time.perf_counter()
                        try:
                            with urllib.request.urlopen(url, timeout=30) as response:
                                data = json.loads(response.read())
                                hits = len(data["rows"] if isinstance(data, dict) else data)
                                error = error or limited(data)
                        except urllib.error.HTTPError as e:  # 400: over Datasette's time limit (2 s)
                            error = http_error(e)
                        times.append((time.perf_counter() - started) * 1000)
                    results[f"{name} {term}"] = {"lang": lang, "median_ms": statistics.median(times),
                                                 "p95_ms": statistics.quantiles(times, n=20)[-1],
                                                 "max_ms": max(times), "rows": hits, "error": error}
        return results
    finally:
        server.terminate()
        server.wait(10)


# The posts table's facets (archive/datasette/metadata.yml), as the keys of Datasette's facet_results:
# a facet stopped by its time limit (facet_time_limit_ms) is left out of them (the JSON does not say).
POSTS_FACETS = ("source_id", "tags", "lang", "published", "published_2")


def limited(data) -> str | None:
    """What of a posts table's page (default JSON shape) stopped at its time limit: its count, facets."""
    if not isinstance(data, dict):
        return None
    stopped = ["count"] if data.get("filtered_table_rows_count") is None else []
    stopped += [f"facet {name}" for name in POSTS_FACETS if name not in data.get("facet_results", {})]
    return "over the time limit: " + ", ".join(stopped) if stopped else None


def http_error(e: urllib.error.HTTPError) -> str:
    """``HTTP 400: over the time limit`` when Datasette stopped the query, else the status and the start of its message."""
    message = json.loads(e.read()).get("error", "")
    return f"HTTP {e.code}: " + ("over the time limit" if "took too long" in message else message[:80])


class _Recorder(QuietHandler):
    """Serves the site and notes when each request arrived."""

    def __init__(self, arrivals: list[float], *args, **kwargs):
        self.arrivals = arrivals
        super().__init__(*args, **kwargs)

    def parse_request(self) -> bool:
        self.arrivals.append(time.monotonic())
        return super().parse_request()


def _until_first_request(site: Path, command: Callable[[str], list[str]], **kwargs: Any) -> float:
    """Seconds from ``command(server_url)`` starting to its first request reaching a server of ``site``
    that notes its requests' arrival."""
    arrivals: list[float] = []
    handler = functools.partial(_Recorder, arrivals, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as httpd:
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        started = time.monotonic()
        subprocess.run(command(f"http://127.0.0.1:{httpd.server_address[1]}"), check=True, capture_output=True, **kwargs)
        httpd.shutdown()
    return arrivals[0] - started


def first_request(db: Path, site: Path, base: str, work: Path) -> dict[str, float]:
    """Seconds from ``blogarchive crawl`` (a no-change recrawl, sent by ``--map-host`` to the server)
    starting to its first request arriving, the median of three runs; beside it, Scrapy's own floor:
    ``scrapy runspider`` of the fetch floor's spider asking for one URL, outside the project."""
    host = base.removeprefix("http://")
    times = [_until_first_request(site, lambda server: [
        str(BIN / "blogarchive"), "crawl", "--db", str(db), "--delay", "0", "--quiet", "--map-host", f"{host}={server}"],
        cwd=ROOT) for _ in range(3)]
    url_file = work / "one-url.txt"
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}

    def spider(server: str) -> list[str]:
        url_file.write_text(f"{server}/robots.txt")
        return [str(BIN / "scrapy"), "runspider", str(ROOT / "bench" / "fetch.py"), "-a", f"urls={url_file}",
                "-a", f"out={work / 'one-url.json'}", "-s", "ROBOTSTXT_OBEY=0", "-s", "LOG_LEVEL=WARNING",
                "-s", "TELNETCONSOLE_ENABLED=0"]

    floor = [_until_first_request(site, spider, cwd=work, env=env) for _ in range(3)]
    return {"seconds": statistics.median(times), "runs": times,
            "scrapy_floor_seconds": statistics.median(floor), "scrapy_floor_runs": floor}


def changed_blog(db: Path, site: Path, base: str, posts: list) -> dict:
    """The blog changed as ``change_site`` does, then one default crawl: what it saw, what it cost."""
    time.sleep(1)  # an edit comes at least a second after the last check (dates have second precision)
    changes = change_site(site, posts, base, added=5, edited=10, deleted=4)
    result = crawl(db)
    conn = sqlite3.connect(db)
    try:
        def count(paths: list[str], where: str) -> int:
            marks = ",".join("?" * len(paths))
            return conn.execute(f"select count(*) from posts where url in ({marks}) and {where}",
                                [base + p for p in paths]).fetchone()[0]

        seen = {"added": len(changes["added"]), "added_archived": count(changes["added"], "1"),
                "edited": len(changes["edited"]), "edits_seen": count(changes["edited"], f"instr(text, '{EDIT_MARK}') > 0"),
                "deleted": len(changes["deleted"]), "deletions_marked": count(changes["deleted"], "gone_at is not null")}
    finally:
        conn.close()
    return {**result, **seen}


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(url: str) -> None:
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


def bench_size(size: int, work: Path) -> dict:
    site = work / "site"
    site.mkdir()
    server, base = start_server(site)
    try:
        urls, posts = write_site(site, size, base)
        print(f"[{size}] {len(urls)} pages at {base}", file=sys.stderr)
        result: dict = {"size": size, "pages_in_site": len(urls)}
        result["extraction_floor"] = extraction_floor(site, base, posts)
        print(f"[{size}] extraction floor {result['extraction_floor']}", file=sys.stderr)
        result["fetch_floor"] = fetch_floor(urls, work)
        print(f"[{size}] fetch floor {result['fetch_floor']}", file=sys.stderr)
        db = work / "archive.db"
        server_cpu = psutil.Process(server.pid).cpu_times()
        result["full_crawl"] = crawl(db, f"{base}/")
        after = psutil.Process(server.pid).cpu_times()
        result["full_crawl"]["server_cpu_seconds"] = (after.user + after.system) - (server_cpu.user + server_cpu.system)
        result["full_crawl"]["bytes_per_post"] = archive_bytes(db)
        print(f"[{size}] full crawl {result['full_crawl']}", file=sys.stderr)
        result["recrawl"] = crawl(db)
        print(f"[{size}] recrawl {result['recrawl']}", file=sys.stderr)
        result["recheck"] = crawl(db, "--recheck")
        print(f"[{size}] recheck {result['recheck']}", file=sys.stderr)
        result["trafilatura"] = trafilatura_cli(base, work, limit=2 * result["full_crawl"]["seconds"])
        print(f"[{size}] trafilatura {result['trafilatura']}", file=sys.stderr)
        result["search"] = search_latency(db)
        print(f"[{size}] search {result['search']}", file=sys.stderr)
        result["startup"] = first_request(db, site, base, work)
        print(f"[{size}] first request {result['startup']}", file=sys.stderr)
        result["changed"] = changed_blog(db, site, base, posts)
        print(f"[{size}] changed blog {result['changed']}", file=sys.stderr)
        return result
    finally:
        server.terminate()
        server.wait(10)


def machine() -> dict:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())
    return {"cpu": model, "cores": os.cpu_count(), "ram_gb": round(psutil.virtual_memory().total / 2**30, 1),
            "python": platform.python_version(), "system": f"{platform.system()} {platform.release()}",
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="Posts per blog, comma-separated (default 1000,10000).")
    parser.add_argument("--search-posts", type=int, default=100_000, help="Posts of the search at scale (0: keep the last one measured, from bench/results.json).")
    parser.add_argument("--search-db", type=Path, help="Keep the search at scale's archive here: built by the first run "
                                                       "that names it, searched again by the next (bench.search --db).")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    runs = []
    for size in sizes:
        work = Path(tempfile.mkdtemp(prefix=f"blogarchive-bench-{size}-"))
        try:
            runs.append(bench_size(size, work))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    results = {"machine": machine(), "concurrency": CONCURRENCY, "trafilatura_version": trafilatura.__version__,
               "runs": runs}
    with tempfile.TemporaryDirectory(prefix="blogarchive-search-") as work:
        db = None
        if args.search_posts:
            db = args.search_db.resolve() if args.search_db else Path(work) / "scale.db"
            results["search_at_scale"] = search_at_scale(Path(work), args.search_posts, db=db)
        elif (last := ROOT / "bench" / "results.json").exists():
            if scale := json.loads(last.read_text()).get("search_at_scale"):
                results["search_at_scale"] = scale
        # a profile of each target missed (bench/profile.py); the kept search's, once its archive is built again
        results["profiles"] = missed(results, Path(work), db)
    (ROOT / "bench" / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(write_report(results, ROOT / "docs" / "benchmarks.md"))


if __name__ == "__main__":
    main()
