"""A real WordPress, read through its REST API and as HTML only: ``python -m bench.platforms``, by hand.

The blog of ``tests/wordpress.py`` (Debian's WordPress on MariaDB behind PHP's built-in server,
210 posts) is crawled into two archives, one with its REST API on and one with it answering 401
(HTML, feeds and sitemaps only): a first crawl, a run with nothing changed, then, after the
changes of ``WordPress.change`` (ten edits, half of them to posts older than 90 days, five
deletions, two posts trashed, five new posts, a slug and a title changed), a default run (no
``--recheck``). Each run's requests (as the server counted them), seconds, and what the archive
saw of the changes. Writes bench/platforms.json.
"""

import json
import sqlite3
import sys
import tempfile
from pathlib import Path

from bench.common import BIN, ROOT, last_run, measured

sys.path.insert(0, str(ROOT / "tests"))
from conftest import free_port  # noqa: E402  (the tests' helpers: tests/ is no package)
from wordpress import WordPress, missing  # noqa: E402

from archive.core.urls import normalize_url  # noqa: E402


def crawl(wp: WordPress, db: Path, *urls: str) -> dict:
    _, usage = measured([str(BIN / "blogarchive"), "crawl", *urls, "--db", str(db), "--delay", "0",
                         "--concurrency", "8", "--quiet"], cwd=ROOT)
    run = last_run(db)
    return {"requests": len(wp.requests()), "seconds": round(usage["seconds"], 1),
            "new": run["posts_new"], "updated": run["posts_updated"]}


def seen(db: Path, changes: dict) -> dict:
    """What the archive shows of the changes: edits as a second version, deletions as gone, the new posts."""
    conn = sqlite3.connect(db)
    try:
        versions = dict(conn.execute(
            "select p.url, count(*) from post_versions v join posts p on p.id = v.post_id group by p.id").fetchall())
        gone = {r[0] for r in conn.execute("select url from posts where gone_at is not null")}
        live = {r[0] for r in conn.execute("select url from posts where gone_at is null")}
    finally:
        conn.close()
    edited = [normalize_url(p["url"]) for p in changes["edited"]]
    deleted = [normalize_url(p["url"]) for p in changes["deleted"] + changes["trashed"]]
    new = [normalize_url(u) for u, p in changes["after"].items() if p["title"].startswith("Fresh post")]
    return {"edits_seen": f"{sum(versions.get(u, 0) >= 2 for u in edited)}/{len(edited)}",
            "old_edits_seen": f"{sum(versions.get(u, 0) >= 2 for u in edited[5:])}/5",
            "deletions_seen": f"{sum(u in gone for u in deleted)}/{len(deleted)}",
            "new_seen": f"{sum(u in live for u in new)}/{len(new)}"}


def main() -> None:
    if missing():
        sys.exit(missing())
    result: dict[str, dict] = {"api": {}, "html": {}}
    with tempfile.TemporaryDirectory() as tmp, WordPress(Path(tmp) / "blog", free_port()) as wp:
        dbs = {label: Path(tmp) / f"{label}.db" for label in result}
        truth = wp.published()
        for step in ("first", "no change"):
            for label, db in dbs.items():
                wp.rest(on=label == "api")
                result[label][step] = crawl(wp, db, *([wp.home] if step == "first" else []))
                print(f"[{label} {step}] {result[label][step]}", file=sys.stderr)
        changes = wp.change(truth)
        for label, db in dbs.items():
            wp.rest(on=label == "api")
            result[label]["after changes"] = {**crawl(wp, db), **seen(db, changes)}
            print(f"[{label} after changes] {result[label]['after changes']}", file=sys.stderr)
    (ROOT / "bench" / "platforms.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
