"""Scaling benchmark: ``python -m bench.scaling [--sizes 1000,10000]`` (``make bench``), by hand, never in tests.

- ``--processes 1`` against ``--processes 2``: for each size, the posts split into 20
  synthetic blogs (``bench.blogs``), each served by its own ``bench.server`` on
  127.0.0.1 (20 hosts, so 20 sources the crawl may split), crawled into a fresh
  archive; wall seconds and CPU seconds of all the crawl's processes (``bench.common.measured``).
- The cluster on one machine: the same 20 sources crawled by ``--cluster`` with a
  redis-server and two Scrapyd nodes on 127.0.0.1, the project deployed to each.
- The writer's ceiling: posts/s that ``blogarchive``'s one writer (``archive.tables.writer``)
  saves, full-text index included, when two producer processes send it saves as fast
  as it takes them, over the sockets a crawl of several processes uses.

Writes bench/scaling.json and the measured block of docs/scaling.md.
"""

import argparse
import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from multiprocessing import Pipe, get_context
from multiprocessing.connection import Connection
from pathlib import Path

from archive import ensure_source, open_archive, save_post, start_run
from archive.tables.history import record_version
from archive.tables.writer import ArchiveWriter, Link, serve_writes

from bench.blogs import make_posts, write_site
from bench.common import BIN, ROOT, crawl, free_port, machine, wait_for

SOURCES = 20
START = "<!-- measured: written by bench/scaling.py -->"
END = "<!-- end of the measured block -->"


def serve_blogs(work: Path, size: int) -> tuple[list[subprocess.Popen], list[str]]:
    """``size`` posts in SOURCES blogs, each on a server of its own; the servers and the blogs' URLs."""
    servers, urls = [], []
    for n in range(SOURCES):
        site = work / f"site{n}"
        site.mkdir()
        server = subprocess.Popen([sys.executable, "-m", "bench.server", str(site)], cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert server.stdout is not None
        base = f"http://127.0.0.1:{server.stdout.readline().strip()}"
        write_site(site, size // SOURCES, base)
        servers.append(server)
        urls.append(f"{base}/")
    return servers, urls


def processes(size: int, work: Path) -> dict:
    servers, urls = serve_blogs(work, size)
    try:
        result = {}
        for n in (1, 2):
            db = work / f"processes{n}.db"
            result[f"processes_{n}"] = crawl(db, *urls, "--processes", str(n))
            print(f"[{size}] --processes {n}: {result[f'processes_{n}']}", file=sys.stderr)
        result["speedup"] = result["processes_1"]["seconds"] / result["processes_2"]["seconds"]
        with cluster(work) as config:
            result["cluster"] = crawl(work / "cluster.db", *urls, "--cluster", str(config))
        print(f"[{size}] --cluster: {result['cluster']}", file=sys.stderr)
        return result
    finally:
        for server in servers:
            server.terminate()
            server.wait(10)


@contextlib.contextmanager
def cluster(work: Path) -> Iterator[Path]:
    """A redis-server and two Scrapyd nodes on 127.0.0.1, the project deployed; the cluster's configuration."""
    procs = []
    try:
        port = free_port()
        procs.append(subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                       "--appendonly", "no"], stdout=subprocess.DEVNULL))
        nodes = []
        for n in (1, 2):
            home, node_port = work / f"node{n}", free_port()
            home.mkdir()
            (home / "scrapyd.conf").write_text(f"[scrapyd]\nbind_address = 127.0.0.1\nhttp_port = {node_port}\n"
                                               f"eggs_dir = {home}/eggs\nlogs_dir = {home}/logs\ndbs_dir = {home}/dbs\n"
                                               "items_dir =\npoll_interval = 0.5\n")
            procs.append(subprocess.Popen([str(BIN / "scrapyd")], cwd=home, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))
            nodes.append(f"http://127.0.0.1:{node_port}")
        project = work / "project"
        for package in ("crawler", "archive"):
            shutil.copytree(ROOT / package, project / package, ignore=shutil.ignore_patterns("__pycache__"))
        for node in nodes:
            wait_for(node + "/daemonstatus.json")
            (project / "scrapy.cfg").write_text((ROOT / "scrapy.cfg").read_text().replace("http://127.0.0.1:6800/", node + "/"))
            subprocess.run([str(BIN / "scrapyd-deploy")], cwd=project, check=True, capture_output=True)
        config = work / "cluster.toml"
        config.write_text(f'redis = "redis://127.0.0.1:{port}/0"\nnodes = {json.dumps(nodes)}\n')
        yield config
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(30)


def _produce(conn: Connection, posts: list[dict], run_id: int) -> None:
    """A crawl process's saves, as fast as the writer answers."""
    for post in posts:
        for message in (("run", save_post, (post,), {"run_id": run_id}),
                        ("run", record_version, (post["url"],), {"run_id": run_id})):
            conn.send(message)
            status, value = conn.recv()
            if status == "error":
                raise value
    conn.close()


def ceiling_posts(count: int, work: Path, name: str) -> tuple[Path, int, list[dict]]:
    """A fresh archive with one source and one run, and ``count`` posts for it."""
    db_path = work / f"{name}.db"
    db = open_archive(db_path)
    source_id = ensure_source(db, "http://ceiling.test/")["id"]
    run_id = start_run(db, [])
    db.close()
    posts = [{"url": f"http://ceiling.test{p.path}", "source_id": source_id, "title": p.title, "lang": p.lang,
              "text": "\n\n".join(p.paragraphs), "markdown": "\n\n".join(p.paragraphs), "tags": p.tags,
              "published": f"{p.published:%Y-%m-%dT%H:%M:%SZ}"} for p in make_posts(count)]
    return db_path, run_id, posts


def writer_alone(count: int, work: Path) -> dict:
    """The same saves made in the writer's own process: what the sockets cost is the difference."""
    db_path, run_id, posts = ceiling_posts(count, work, "alone")
    writer = ArchiveWriter(str(db_path))
    started = time.monotonic()
    for post in posts:
        writer.run(save_post, post, run_id=run_id)
        writer.run(record_version, post["url"], run_id=run_id)
    writer.close()
    seconds = time.monotonic() - started
    return {"posts": count, "seconds": seconds, "posts_per_s": count / seconds}


def writer_ceiling(count: int, work: Path) -> dict:
    db_path, run_id, posts = ceiling_posts(count, work, "ceiling")
    context = get_context("spawn")
    links, producers = [], []
    for half in (posts[::2], posts[1::2]):
        ours, theirs = Pipe(duplex=True)
        producers.append(context.Process(target=_produce, args=(theirs, half, run_id)))
        producers[-1].start()
        theirs.close()
        links.append(Link(ours))
    writer = ArchiveWriter(str(db_path))
    started = time.monotonic()
    for _ in serve_writes(writer, links):
        pass
    seconds = time.monotonic() - started
    writer.close()
    for producer in producers:
        producer.join()
    words = sum(len(p["text"].split()) for p in posts) / count
    return {"posts": count, "seconds": seconds, "posts_per_s": count / seconds, "words_per_post": words,
            "alone": writer_alone(count, work)}


def report(results: dict) -> str:
    lines = [START, "", f"Measured on {results['machine']['date']}: {results['machine']['cpu']}, "
             f"{results['machine']['cores']} cores, Python {results['machine']['python']}; crawls with "
             f"`--delay 0 --concurrency 16`, {SOURCES} sources on {SOURCES} servers (`python -m bench.scaling`).", "",
             "| posts (20 sources) | `--processes 1`: s (CPU s) | `--processes 2`: s (CPU s) | speed-up "
             "| `--cluster`, 2 Scrapyd nodes on this machine: s (the coordinator's CPU s) |",
             "|---|---|---|---|---|"]
    for run in results["runs"]:
        one, two = run["processes_1"], run["processes_2"]
        lines.append(f"| {run['size']:,} | {one['seconds']:.1f} ({one['cpu_seconds']:.1f}) | "
                     f"{two['seconds']:.1f} ({two['cpu_seconds']:.1f}) | {run['speedup']:.2f} × | "
                     + (f"{run['cluster']['seconds']:.1f} ({run['cluster']['cpu_seconds']:.1f}) |" if "cluster" in run else "- |"))
    ceiling = results["writer_ceiling"]
    lines += ["", f"The writer's ceiling: {ceiling['posts_per_s']:,.0f} posts/s ({ceiling['posts']:,} posts of "
              f"{ceiling['words_per_post']:.0f} words, saved with their first version and indexed for search, "
              f"in {ceiling['seconds']:.1f} s, sent by two processes); the same saves made in the writer's own "
              f"process, without the sockets: {ceiling['alone']['posts_per_s']:,.0f} posts/s.", "", END]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="Posts in all, comma-separated (default 1000,10000).")
    parser.add_argument("--ceiling-posts", type=int, default=5000, help="Posts sent to the writer (default 5000).")
    args = parser.parse_args()
    runs = []
    for size in (int(s) for s in args.sizes.split(",")):
        work = Path(tempfile.mkdtemp(prefix=f"blogarchive-scaling-{size}-"))
        try:
            runs.append({"size": size, **processes(size, work)})
        finally:
            shutil.rmtree(work, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix="blogarchive-ceiling-"))
    try:
        ceiling = writer_ceiling(args.ceiling_posts, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results = {"machine": machine(), "runs": runs, "writer_ceiling": ceiling}
    (ROOT / "bench" / "scaling.json").write_text(json.dumps(results, indent=2) + "\n")
    doc = ROOT / "docs" / "scaling.md"
    text = doc.read_text()
    doc.write_text(text[: text.index(START)] + report(results) + text[text.index(END) + len(END):])
    print(report(results))


if __name__ == "__main__":
    main()
