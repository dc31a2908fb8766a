"""Search at scale, for ``bench.run`` (``make bench``); alone: ``python -m bench.search [--posts 100000] [--db PATH]``.

- ``build_archive``: an archive of ``posts`` bench-blog posts (``bench.blogs``' text, every other
  post Chinese) inserted with sqlite-utils in transactions of 1,000 posts, through the archive's
  own schema and triggers, instead of crawling that many pages. Their paragraphs are drawn from
  those of ``POOL`` generated posts (generating 100,000 costs minutes), with their dates spread
  over ten years and three tags each, as ``make_posts`` does;
- ``search_latency``: warm searches through ``blogarchive serve``, three ways (``search_urls``);
- ``cold_search``: the first search of a fresh ``blogarchive serve``, the archive's file dropped
  from the page cache first (``posix_fadvise``), one server per word and way;
- ``index_cost``: milliseconds of writing a post with each index kept by its per-row trigger,
  against none, and the trigram one written per batch of ``MAX_BATCH`` posts or rebuilt at the end;
- ``archive_bytes``: bytes per post of the posts, their versions, captures and each index (``dbstat``).
"""

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from archive import ensure_source, open_archive
from archive.tables.writer import MAX_BATCH

from bench.blogs import TAGS, make_posts
from bench.common import BIN, ROOT, free_port, machine, wait_for
from bench.report import write_report

POOL = 2_000
SEARCHES = {"en": ["database", "memory latency"], "zh": ["数据库", "内存", "内"]}
WARM_REPEAT = 20  # times each warm search is asked
BASE = "http://bench.test"
GROUPS = {  # dbstat's table names -> what they are part of
    "posts": ("posts", "post_aliases", "provenance", "sqlite_autoindex_post_aliases_1", "idx_posts_url",
              "idx_posts_source_id_published", "idx_posts_guid", "idx_posts_published", "idx_post_aliases_post_id", "idx_provenance_post_id_field"),
    "versions": ("post_versions", "idx_post_versions_post_id_id"),
    "captures": ("captures", "capture_bodies", "sqlite_autoindex_capture_bodies_1", "idx_captures_url_id", "fetches",
                 "sqlite_autoindex_fetches_1", "idx_fetches_source_id"),
    "trigram index": ("posts_fts", "posts_fts_data", "posts_fts_idx", "posts_fts_docsize", "posts_fts_config"),
    "grams index": ("posts_grams", "posts_grams_data", "posts_grams_idx", "posts_grams_config"),
}


def post_rows(count: int, source_id: int):
    """``count`` rows of the posts table, deterministic."""
    pool = make_posts(POOL)
    paragraphs = {lang: [p for post in pool if post.lang == lang for p in post.paragraphs] for lang in ("en", "zh")}
    titles = {lang: [post.title for post in pool if post.lang == lang] for lang in ("en", "zh")}
    start, step = datetime(2015, 1, 1, 8, tzinfo=timezone.utc), timedelta(days=3650) / count
    for i in range(count):
        rng = random.Random(f"scale-{i}")
        lang = "zh" if i % 2 else "en"
        body = rng.sample(paragraphs[lang], rng.randint(10, 16))
        when = f"{start + step * i:%Y-%m-%dT%H:%M:%SZ}"
        yield {"id": i + 1, "source_id": source_id, "url": f"{BASE}/posts/{i}/", "title": rng.choice(titles[lang]),
               "published": when, "text": "\n".join(body), "markdown": "\n\n".join(body), "lang": lang,
               "tags": json.dumps(sorted(rng.sample(TAGS, 3))), "word_count": sum(len(p.split()) for p in body),
               "first_seen": when, "last_seen": when}


def build_archive(path: Path, count: int) -> dict:
    """The archive of ``count`` posts at ``path``: seconds to build it, and its size."""
    started = time.monotonic()
    db = open_archive(path)
    source = ensure_source(db, f"{BASE}/")
    rows = post_rows(count, source["id"])
    while True:
        chunk = [row for _, row in zip(range(1000), rows)]
        if not chunk:
            break
        with db.atomic():
            db.table("posts").insert_all(chunk)
    db.execute("pragma wal_checkpoint(truncate)")
    db.close()
    return {"posts": count, "seconds": time.monotonic() - started, "mb": path.stat().st_size / 2**20}


def archive_bytes(path: Path) -> dict:
    """Bytes per post of each part of the archive at ``path`` (``GROUPS``; the rest is ``other``)."""
    conn = sqlite3.connect(path)
    try:
        posts = conn.execute("select count(*) from posts").fetchone()[0]
        sizes = dict(conn.execute("select name, sum(pgsize) from dbstat group by name"))
    finally:
        conn.close()
    out = {group: sum(sizes.pop(name, 0) for name in names) / posts for group, names in GROUPS.items()}
    out["other"] = sum(sizes.values()) / posts
    out["total"] = sum(out.values())
    return out


def evict(path: Path) -> None:
    """Drop the archive's files from the page cache: the next read comes from the disk."""
    for name in (path, Path(f"{path}-wal")):
        if name.exists():
            fd = os.open(name, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


# What a program searching asks for (docs/datasette.md): the rows it lists, not 100 posts' full text.
API_COLUMNS = "&_col=title&_col=url&_col=published"


def search_urls(base: str, term: str) -> dict[str, str]:
    """The three ways of ``search_latency``."""
    q = urllib.parse.quote(term)
    return {"api": f"{base}/posts.json?_search={q}&_shape=array&_nocount=1&_nofacet=1{API_COLUMNS}",
            # the default shape: Datasette skips the count and the facets for _shape=array
            "table": f"{base}/posts.json?_search={q}",
            "canned": f"{base}/search.json?q={q}&_shape=array"}


def search_latency(db: Path, searches: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Median, 95th percentile and worst milliseconds of a search, three ways: ``api``, the posts table's ``_search``
    as a program asks it (``_nocount=1&_nofacet=1`` and three columns, docs/datasette.md);
    ``table``, every column with the count and the five facets the table page shows; ``canned``,
    the ``search`` canned query (100 rows in full, with snippets)."""
    port = free_port()
    server = subprocess.Popen([str(BIN / "blogarchive"), "serve", "--db", str(db), "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/{db.stem}"
    try:
        wait_for(f"http://127.0.0.1:{port}/-/versions.json")
        results = {}
        for lang, terms in searches.items():
            for term in terms:
                for name, url in search_urls(base, term).items():
                    times, hits, error = [], 0, None
                    for _ in range(WARM_REPEAT):
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


def cold_search(db: Path, searches: dict[str, list[str]] = SEARCHES) -> dict:
    """Milliseconds of the first search of a fresh ``blogarchive serve`` on an archive out of the page cache."""
    results = {}
    for terms in searches.values():
        for term in terms:
            for way in ("api", "table"):
                evict(db)
                port = free_port()
                server = subprocess.Popen([str(BIN / "blogarchive"), "serve", "--db", str(db), "--port", str(port)],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                try:
                    wait_for(f"http://127.0.0.1:{port}/-/versions.json")
                    url = search_urls(f"http://127.0.0.1:{port}/{db.stem}", term)[way]
                    started, error = time.perf_counter(), None
                    try:
                        error = limited(json.loads(urllib.request.urlopen(url, timeout=60).read()))
                    except urllib.error.HTTPError as e:
                        error = http_error(e)
                    results[f"{way} {term}"] = {"ms": (time.perf_counter() - started) * 1000, "error": error}
                finally:
                    server.terminate()
                    server.wait(10)
    return results


SQLITE_UTILS_UPDATE = """drop trigger posts_au; create trigger posts_au after update on posts begin
  insert into posts_fts (posts_fts, rowid, title, text) values ('delete', old.rowid, old.title, old.text);
  insert into posts_fts (rowid, title, text) values (new.rowid, new.title, new.text); end"""


def index_cost(work: Path, count: int = 2_000) -> dict:
    """Milliseconds per post of the full-text indexes, posts written ``MAX_BATCH`` a transaction (as the
    writer commits them): each index by its trigger against none; the trigram one per batch or rebuilt."""
    rows = list(post_rows(count, 1))

    def write(name: str, drop: tuple[str, ...], after_batch: str | None = None, at_end: str | None = None,
              touch: str | None = None) -> float:
        path = work / f"cost-{name}.db"
        db = open_archive(path)
        ensure_source(db, f"{BASE}/")
        for trigger in drop:
            db.execute(f"drop trigger {trigger}")
        started = time.perf_counter()
        for i in range(0, count, MAX_BATCH):
            with db.atomic():
                db.table("posts").insert_all(rows[i : i + MAX_BATCH])
                if after_batch:
                    db.execute(after_batch, [i])
        if at_end:
            with db.atomic():
                db.execute(at_end)
        if touch is not None:  # then a recrawl that finds every post unchanged: only last_seen is written
            db.conn.executescript(touch)
            started = time.perf_counter()
            for i in range(0, count, MAX_BATCH):
                with db.atomic():
                    db.execute("update posts set last_seen = 'now', title = title, text = text where id > ? and id <= ?",
                               [i, i + MAX_BATCH])
        seconds = time.perf_counter() - started
        db.close()
        for file in work.glob(f"cost-{name}.db*"):
            file.unlink()
        return seconds * 1000 / count

    none = write("none", ("posts_ai", "posts_grams_ai"))
    return {
        "no index": none,
        "trigram, per row (trigger)": write("trigram", ("posts_grams_ai",)) - none,
        "trigram, per batch": write("batch", ("posts_ai", "posts_grams_ai"), after_batch=(
            "insert into posts_fts (rowid, title, text) select id, title, text from posts where id > ?")) - none,
        "trigram, rebuilt at the end": write("rebuild", ("posts_ai", "posts_grams_ai"),
                                            at_end="insert into posts_fts (posts_fts) values ('rebuild')") - none,
        "grams, per row (trigger)": write("grams", ("posts_ai",)) - none,
        "both, per row (triggers)": write("both", ()) - none,
        "unchanged post, sqlite-utils' update trigger": write("touch-old", (), touch=SQLITE_UTILS_UPDATE),
        "unchanged post, update trigger on title and text changes": write("touch-new", (), touch=""),
    }


def kept_archive(db: Path, posts: int) -> dict:
    """The archive of ``posts`` posts at ``db``, built the first time and kept: its build's figures are
    kept beside it (``.build.json``), for the runs that reuse it."""
    figures = db.with_suffix(".build.json")
    if not db.exists():
        figures.write_text(json.dumps(build_archive(db, posts)))
    build = json.loads(figures.read_text())
    if build["posts"] != posts:
        raise SystemExit(f"{db} has {build['posts']:,} posts, not {posts:,}")
    return build


def search_at_scale(work: Path, posts: int, db: Path | None = None) -> dict:
    """Everything above on one archive of ``posts`` posts (at ``db``, kept, when given)."""
    if db is None:
        db = work / "scale.db"
        result = {"build": build_archive(db, posts)}
    else:
        result = {"build": kept_archive(db, posts)}
    result["bytes_per_post"] = archive_bytes(db)
    result["cold"] = cold_search(db)
    result["warm"] = search_latency(db, SEARCHES)
    result["index_cost_ms"] = index_cost(work)
    return result


PARTS = {"cold": cold_search, "warm": lambda db: search_latency(db, SEARCHES), "bytes_per_post": archive_bytes}


def main() -> None:
    """Only the search at scale: its results replace those of bench/results.json, docs/benchmarks.md is written again.
    With ``--only``, only those parts on the ``--db`` archive, printed as JSON (``--out``: written there), nothing
    else written: a comparison of two versions of the server runs each in turn (``PYTHONPATH`` naming the other
    checkout's folder serves its ``archive`` package)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--posts", type=int, default=100_000)
    parser.add_argument("--db", type=Path, help="an archive kept between runs: built there by the first (14 minutes "
                                                "of CPU at 100,000 posts), searched again by the next")
    parser.add_argument("--only", nargs="+", choices=sorted(PARTS), help="these parts only, on the --db archive")
    parser.add_argument("--out", type=Path, help="with --only: write the JSON there too")
    args = parser.parse_args()
    if args.only:
        if args.db is None:
            parser.error("--only needs --db")
        db = args.db.resolve()
        kept_archive(db, args.posts)
        found = {part: PARTS[part](db) for part in args.only}
        text = json.dumps(found, indent=2, ensure_ascii=False)
        if args.out:
            args.out.write_text(text + "\n")
        print(text)
        return
    with tempfile.TemporaryDirectory(prefix="blogarchive-search-") as work:
        scale = search_at_scale(Path(work), args.posts, args.db and args.db.resolve())
    path = ROOT / "bench" / "results.json"
    results = json.loads(path.read_text())
    results["search_at_scale"] = {**scale, "machine": machine()}
    path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(write_report(results, ROOT / "docs" / "benchmarks.md"))


if __name__ == "__main__":
    main()
