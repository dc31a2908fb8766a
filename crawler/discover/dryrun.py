"""``python -m crawler.discover.dryrun --db PATH [--mode incremental|recheck|full] [--policy P] [URL ...]``: a crawl's plan, no fetch.

What a run would request, source by source, and why, from what the archive
holds (its sources, posts, validators and the captures of the last feeds and
sitemaps), without a request or a write. One JSON object a line, ``source``,
``url``, ``why``:

- ``complete``: a source with no complete crawl yet, or ``--full``: its URL,
  then every page in scope;
- ``discovery``: robots.txt, the source's URL, its feeds and sitemaps,
  revalidated conditionally (``fresh until ..., not requested``: a feed whose
  ``Cache-Control`` or ``Expires`` has not run out); for a source without a
  feed, the usual feed paths that have not answered 404 or 410 lately
  (``crawler.discover.incremental.feed_probes``: the others are asked too if
  its home page changed);
- ``new``: a URL the captured feeds or sitemaps list that the archive lacks;
- ``announced``: a known post they say changed since it was checked;
- ``due by policy``: a known post the revisit policy makes due;
- ``recheck``: every known post, with ``--mode recheck``.

The feeds and sitemaps are not read anew: what they announce when the run
fetches them is requested too. ``blogarchive crawl --dry-run`` runs this. Exit code 2: the archive
cannot be read, one line on standard error.
"""

import argparse
import json
import sqlite3
import sys
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from archive import ArchiveError, find_sources, open_archive
from archive.core.db import is_damage
from archive.core.urls import normalize_url, parse_url
from archive.tables.captures import latest_capture
from archive.tables.revisit import DEFAULT_POLICY, get_fetch, in_future
from archive.tables.writes import scope_of

from crawler.discover.incremental import feed_entries, feed_probes, load_plan, sitemap_entries, sitemap_lastmod
from crawler.judge.pages import in_scope

EXIT_DAMAGED = 2  # the archive cannot be read: a usage error of blogarchive crawl --dry-run


def planned(db: Any, source: dict[str, Any], *, mode: str, policy: str) -> Iterator[dict[str, str]]:
    """The requests one source's run would make at least, each URL once, with why."""
    if mode == "full" or not source.get("complete_at"):
        yield {"url": source["url"], "why": "complete"}
        return
    plan = load_plan(db, source, mode=mode, policy=policy)
    feeds, sitemaps = plan.feeds, json.loads(source.get("sitemaps") or "[]")
    parts = urlsplit(source["scope"])
    probes = [] if feeds else feed_probes(db, source["scope"], home_unchanged=True)
    for url in [f"{parts.scheme}://{parts.netloc}/robots.txt", source["url"], *feeds, *probes, *sitemaps]:
        fresh = (get_fetch(db, url) or {}).get("fresh_until")
        yield {"url": url, "why": f"fresh until {fresh}, not requested" if in_future(fresh) else "discovery"}
    listed: dict[str, str] = {}
    for feed in feeds:
        capture = latest_capture(db, feed)
        for entry in feed_entries(capture["body"] if capture else None, feed):
            url = normalize_url(entry["url"]) if entry["url"] else None  # absolute, parsed (crawler.discover.feeds)
            if url and in_scope(url, source["scope"]) and plan.wants_entry(url, entry.get("updated")):
                listed.setdefault(url, f"announced by {feed}" if url in plan.posts else f"new, listed by {feed}")
    for sitemap in sitemaps:
        capture = latest_capture(db, sitemap)
        for entry in sitemap_entries(capture["body"] if capture else None):
            loc = parse_url(entry.get("loc", ""))
            url = normalize_url(loc) if loc else None
            if url and in_scope(url, source["scope"]) and plan.wants_entry(url, sitemap_lastmod(entry), since_check=True):
                listed.setdefault(url, f"announced by {sitemap}" if url in plan.posts else f"new, listed by {sitemap}")
    for url, why in listed.items():
        yield {"url": url, "why": why}
    for url in plan.due:
        if url not in listed:
            post = plan.posts[url]
            yield {"url": url, "why": "recheck" if mode == "recheck" else
                   f"due by policy (published {post['published'] or 'unknown'}, last checked {post['checked'] or 'never'})"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crawler.discover.dryrun")
    parser.add_argument("--db", required=True)
    parser.add_argument("--mode", choices=["incremental", "recheck", "full"], default="incremental")
    parser.add_argument("--policy", default=DEFAULT_POLICY)
    parser.add_argument("urls", nargs="*")
    args = parser.parse_args(argv)
    try:
        plan(args.db, args.mode, args.policy, args.urls)
    except (ArchiveError, sqlite3.DatabaseError) as e:
        if isinstance(e, sqlite3.DatabaseError) and not is_damage(e):
            raise
        print(e if isinstance(e, ArchiveError) else f"cannot read the archive {args.db}: {e}", file=sys.stderr)
        return EXIT_DAMAGED
    return 0


def plan(db_path: str, mode: str, policy: str, urls: list[str]) -> None:
    """Print the plan, one JSON object a line."""
    db = open_archive(db_path, read_only=True)  # it fetches and writes nothing
    try:
        known = {s["url"]: s for s in find_sources(db, enabled_only=False)}
        if urls:
            sources = [known.get(normalize_url(u)) or {"name": None, "url": normalize_url(u), "scope": scope_of(u)}
                       for u in urls]
        else:
            sources = [s for s in known.values() if s["enabled"]]
        for source in sources:
            for request in planned(db, source, mode=mode, policy=policy):
                print(json.dumps({"source": source["name"] or source["url"], **request}, ensure_ascii=False), flush=True)
    finally:
        db.close()


if __name__ == "__main__":
    sys.exit(main())
