"""What the default run and ``--recheck`` see of blogs' changes: ``python -m bench.changes [--label L]``, by hand.

Six small blogs of ``bench.blogs``' posts, each announcing its changes as one kind of generator does:
RSS with dates and a flat sitemap, a sitemap index (its children's ``lastmod`` a time, or a day
alone) whose own bytes never move, RSS without dates, Atom with ``updated``, and a sitemap without
a feed. Each is crawled, crawled again with nothing changed, then changed: two posts added, two
edits announced (their ``lastmod`` and their feed entry move; one inside the feed, one older), one
edit announced nowhere, two posts deleted (one inside the feed, one older). An edit or a deletion
is announced when the blog's feed or sitemap shows it. Then the default run, and ``--recheck`` on
a copy of the archive as it was before that run. Writes bench/changes.json (its ``--label`` entry),
the figures of docs/benchmarks.md.
"""

import argparse
import html
import json
import shutil
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from bench.blogs import EDIT_MARK, FEED_SIZE, Post, Site, make_posts
from bench.common import ROOT, crawl, served_site

POSTS = 40
CHILD = 10  # posts to a child sitemap of an index


@dataclass
class Shape:
    name: str
    feed: str | None  # rss, rss-undated, atom or None
    sitemap: str | None  # flat, index or None
    lastmod: str = "%Y-%m-%dT%H:%M:%SZ"


SHAPES = (
    Shape("RSS, sitemap", "rss", "flat"),
    Shape("RSS, sitemap index (lastmod a time)", "rss", "index"),
    Shape("RSS, sitemap index (lastmod a day)", "rss", "index", "%Y-%m-%d"),
    Shape("RSS without dates", "rss-undated", None),
    Shape("Atom with updated", "atom", None),
    Shape("sitemap index (lastmod a day), no feed", None, "index", "%Y-%m-%d"),
)


class ShapedSite(Site):
    """``bench.blogs.Site`` with the feed and sitemaps of a ``Shape``."""

    def __init__(self, posts: list, base: str, shape: Shape):
        super().__init__(posts, base)
        self.shape = shape

    def write(self, root: Path) -> list[str]:
        urls = super().write(root)
        for name, kept in (("index.xml", self.shape.feed), ("sitemap.xml", self.shape.sitemap)):
            if not kept:
                (root / name).unlink()
        for n, chunk in enumerate(self._children(), 1):
            _write(root / f"sitemap-{n}.xml", self._urlset(chunk))
        return urls

    def _children(self) -> list[list]:
        oldest_first = sorted(self.posts, key=lambda p: p.published)
        return [oldest_first[i : i + CHILD] for i in range(0, len(oldest_first), CHILD)] if self.shape.sitemap == "index" else []

    def _sitemap(self, paths: list[str]) -> str:
        """The flat sitemap of the posts, or the index (its bytes the same whatever changed in its children)."""
        if self.shape.sitemap != "index":
            return self._urlset(sorted(self.posts, key=lambda p: p.published))
        locs = "".join(f"<sitemap><loc>{self.base}/sitemap-{n}.xml</loc><lastmod>2025-01-01</lastmod></sitemap>"
                       for n in range(1, len(self._children()) + 1))
        return ('<?xml version="1.0" encoding="utf-8"?><sitemapindex '
                f'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</sitemapindex>')

    def _head(self, title: str, path: str, lang: str = "en", extra: str = "") -> str:
        head = super()._head(title, path, lang, extra)
        if self.shape.feed is None:
            return head.replace(f'<link rel="alternate" type="application/rss+xml" title="Field Notes" href="{self.base}/index.xml">', "")
        if self.shape.feed == "atom":
            return head.replace("application/rss+xml", "application/atom+xml")
        return head

    def _feed(self) -> str:
        if self.shape.feed != "atom":
            feed = super()._feed()
            return _undated(feed) if self.shape.feed == "rss-undated" else feed
        entries = "".join(
            f"<entry><id>{self.base}{p.path}</id><title>{html.escape(p.title)}</title><link href=\"{self.base}{p.path}\"/>"
            f"<published>{p.published:%Y-%m-%dT%H:%M:%SZ}</published>"
            f"<updated>{(p.updated or p.published):%Y-%m-%dT%H:%M:%SZ}</updated>"
            f"<summary>{html.escape(self._summary(p))}</summary></entry>"
            for p in self.newest[:FEED_SIZE]
        )
        return ('<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Field Notes</title>'
                f'<id>{self.base}/</id><link href="{self.base}/"/><updated>2025-01-01T00:00:00Z</updated>{entries}</feed>')

    def _urlset(self, posts: list) -> str:
        urls = "".join(f"<url><loc>{self.base}{p.path}</loc><lastmod>{(p.updated or p.published).strftime(self.shape.lastmod)}"
                       "</lastmod></url>" for p in posts)
        return f'<?xml version="1.0" encoding="utf-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'


def _undated(feed: str) -> str:
    """The RSS feed without its ``pubDate``s."""
    while "<pubDate>" in feed:
        start = feed.index("<pubDate>")
        feed = feed[:start] + feed[feed.index("</pubDate>", start) + len("</pubDate>"):]
    return feed


def _write(path: Path, text: str) -> None:
    """Write ``text`` unless the file holds it already (the static server's Last-Modified stays)."""
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def change(site: Path, posts: list, base: str, shape: Shape) -> dict[str, list[tuple[str, bool]]]:
    """Change the blog; each changed post's path and whether the blog announces the change."""
    newest = posts[::-1]
    window, older = newest[:FEED_SIZE], newest[FEED_SIZE:]
    now = datetime.now(timezone.utc).replace(microsecond=0)
    edits = [(window[3], True), (older[5], True), (window[6], False)]
    for n, (post, announced) in enumerate(edits):
        if announced:  # at the start of the post: its summary in the feed shows it too
            post.paragraphs = [f"{EDIT_MARK} {n}. {post.paragraphs[0]}", *post.paragraphs[1:]]
            post.updated = now
        else:
            post.paragraphs = [*post.paragraphs, f"{EDIT_MARK} {n}."]
    gone = [window[9], older[8]]
    for post in gone:
        posts.remove(post)
        shutil.rmtree(site / post.path.strip("/"))
    for number in range(POSTS, POSTS + 2):
        posts.append(Post(number, "en", f"Added post {number}", f"added-{number}", posts[-1].published + timedelta(days=1),
                          ["notes"], [f"An added post, number {number}, of a few words." for _ in range(8)]))
    ShapedSite(posts, base, shape).write(site)
    return {
        "edited": [(p.path, announced and (bool(shape.sitemap) or (bool(shape.feed) and p in window)))
                   for p, announced in edits],
        "deleted": [(p.path, bool(shape.sitemap) or (bool(shape.feed) and p in window)) for p in gone],
    }


def seen(db: Path, base: str, changes: dict[str, list[tuple[str, bool]]]) -> dict[str, int]:
    """How many of the changes, announced and not, the archive shows."""
    conn = sqlite3.connect(db)
    try:
        def has(path: str, where: str) -> bool:
            return bool(conn.execute(f"select count(*) from posts where url = ? and {where}", [base + path]).fetchone()[0])

        edit = f"instr(text, '{EDIT_MARK}') > 0"
        return {
            "announced_edits_seen": sum(has(p, edit) for p, a in changes["edited"] if a),
            "unannounced_edits_seen": sum(has(p, edit) for p, a in changes["edited"] if not a),
            "announced_deletions_seen": sum(has(p, "gone_at is not null") for p, a in changes["deleted"] if a),
            "unannounced_deletions_seen": sum(has(p, "gone_at is not null") for p, a in changes["deleted"] if not a),
        }
    finally:
        conn.close()


def bench_shape(shape: Shape, work: Path) -> dict:
    with served_site(work) as (site, base):
        posts = make_posts(POSTS)
        ShapedSite(posts, base, shape).write(site)
        db = work / "archive.db"
        crawl(db, f"{base}/")
        quiet = crawl(db)
        time.sleep(1)  # an edit comes at least a second after the last check (dates have second precision)
        changes = change(site, posts, base, shape)
        copy = work / "recheck.db"
        with sqlite3.connect(db) as src, sqlite3.connect(copy) as dst:
            src.backup(dst)
        default, recheck = crawl(db), crawl(copy, "--recheck")
        quiet_after = crawl(db)
        count = {k: sum(a == want for _, a in changes[k]) for k, want in
                 (("edited", True), ("deleted", True))}
        return {
            "shape": shape.name,
            "announced_edits": count["edited"], "unannounced_edits": len(changes["edited"]) - count["edited"],
            "announced_deletions": count["deleted"], "unannounced_deletions": len(changes["deleted"]) - count["deleted"],
            "no_change_requests": quiet["requests"], "no_change_requests_after": quiet_after["requests"],
            "default": {**seen(db, base, changes), "requests": default["requests"]},
            "recheck": {**seen(copy, base, changes), "requests": recheck["requests"]},
        }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.changes")
    parser.add_argument("--label", default="now", help="the entry of bench/changes.json to write (before, after ...)")
    args = parser.parse_args()
    rows = []
    for shape in SHAPES:
        with tempfile.TemporaryDirectory(prefix="bench-changes-") as tmp:
            rows.append(bench_shape(shape, Path(tmp)))
            print(json.dumps(rows[-1]), flush=True)
    out = ROOT / "bench" / "changes.json"
    results = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    results[args.label] = rows
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
