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
  (``bench.search.search_latency``); then, on an archive of ``--search-posts`` posts built without a crawl,
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
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import psutil
import trafilatura

from bench.blogs import EDIT_MARK, change_site, write_site
from bench.common import BIN, CONCURRENCY, ROOT, crawl, machine, measured, start_server
from bench.profile import missed
from bench.report import write_report
from bench.search import archive_bytes, search_at_scale, search_latency
from bench.server import QuietHandler

SEARCHES = {"en": ["database", "memory latency"], "zh": ["数据库", "内存"]}


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


def first_request(db: Path, site: Path, base: str, work: Path) -> dict[str, Any]:
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
        result["search"] = search_latency(db, SEARCHES)
        print(f"[{size}] search {result['search']}", file=sys.stderr)
        result["startup"] = first_request(db, site, base, work)
        print(f"[{size}] first request {result['startup']}", file=sys.stderr)
        result["changed"] = changed_blog(db, site, base, posts)
        print(f"[{size}] changed blog {result['changed']}", file=sys.stderr)
        return result
    finally:
        server.terminate()
        server.wait(10)


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
    with tempfile.TemporaryDirectory(prefix="blogarchive-search-") as tmp:
        db = None
        if args.search_posts:
            db = args.search_db.resolve() if args.search_db else Path(tmp) / "scale.db"
            results["search_at_scale"] = search_at_scale(Path(tmp), args.search_posts, db=db)
        elif (last := ROOT / "bench" / "results.json").exists():
            if scale := json.loads(last.read_text()).get("search_at_scale"):
                results["search_at_scale"] = scale
        # a profile of each target missed (bench/profile.py); the kept search's, once its archive is built again
        results["profiles"] = missed(results, Path(tmp), db)
    (ROOT / "bench" / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(write_report(results, ROOT / "docs" / "benchmarks.md"))


if __name__ == "__main__":
    main()
