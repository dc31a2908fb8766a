"""Reads that return plain dicts, for the CLI, tests and notebooks."""

import json
from collections import Counter
from typing import Any

from sqlite_utils import Database

from archive.core.urls import host_of
from archive.search.index import MIN_TRIGRAM_CHARS, post_ids_sql
from archive.search.snippets import snippet

SOURCE_FAILURES = ("seed", "bug")  # the kinds of error that mean a source was not crawled as it should have been
SOURCES_SQL = """
select
  s.id, s.name, s.url, s.kind, s.enabled, s.feeds, s.sitemaps,
  (select count(*) from posts p where p.source_id = s.id) as posts,
  s.last_crawl_at, s.last_status, s.revisit, s.delay, s.max_pages, s.media, s.media_max_mb, s.render, s.map_hosts
from sources s
order by s.name
"""

# Words of three characters or more: the trigram index, best match first.
SEARCH_SQL = """
select p.id, p.url, p.title, p.published, p.text
from posts_fts join posts p on p.id = posts_fts.rowid
where posts_fts match :fts
order by rank
limit :limit
"""
# A shorter word among them (内存): each word from its index (archive/search/index.py), newest first.
SHORT_SEARCH_SQL = """
select id, url, title, published, text
from posts
where id in ({ids})
order by published desc
limit :limit
"""


def on_other_host(url: str | None, scope: str | None, hosts: str | None) -> bool:
    """True when ``url`` is on none of its blog's hosts (the scope's, with or without ``www.``, and
    ``sources.hosts``): an image or a file of another site. An error with no URL or no blog is the blog's."""
    host = host_of(url or "")
    if not host or not scope:
        return False
    own = {host_of(scope), *json.loads(hosts or "[]")}
    return host.removeprefix("www.") not in {h.removeprefix("www.") for h in own}


def run_errors(db: Database, run_id: int) -> dict[int | None, Counter[str]]:
    """The errors of a run per source: ``blog`` on the blog's own pages, posts and files,
    ``other hosts`` on resources elsewhere (``on_other_host``), and apart from both ``hosts down``:
    those on a host an earlier run found down (``hosts_down_before``), told as errors once, then counted."""
    down = hosts_down_before(db, run_id)
    counts: dict[int | None, Counter[str]] = {}
    for row in db.query("select e.source_id, e.url, e.kind, s.scope, s.hosts from crawl_errors e "
                        "left join sources s on s.id = e.source_id where e.run_id = ?", [run_id]):
        if row["kind"] not in SOURCE_FAILURES and host_of(row["url"] or "") in down:
            where = "hosts down"
        else:
            where = "other hosts" if on_other_host(row["url"], row["scope"], row["hosts"]) else "blog"
        counts.setdefault(row["source_id"], Counter())[where] += 1
    return counts


def hosts_down_before(db: Database, run_id: int) -> set[str]:
    """The hosts that a run before ``run_id`` found down (an error of kind ``host-down``, of an image
    host): their failures in this run are counted apart (``run_errors``), not as new errors."""
    return {host_of(url) for url, in db.execute(
        "select url from crawl_errors where kind = 'host-down' and run_id < ?", [run_id])}


def list_sources(db: Database) -> list[dict[str, Any]]:
    """Every source with its post count and the outcome of its last crawl."""
    rows = list(db.query(SOURCES_SQL))
    for row in rows:
        row["feeds"] = json.loads(row["feeds"] or "[]")
        row["sitemaps"] = json.loads(row["sitemaps"] or "[]")
    return rows


def find_sources(db: Database, *, enabled_only: bool = True) -> list[dict[str, Any]]:
    """Sources to crawl, oldest first."""
    where = "where enabled = 1" if enabled_only else ""
    return list(db.query(f"select * from sources {where} order by id"))


def list_runs(db: Database, *, limit: int = 20) -> list[dict[str, Any]]:
    """The most recent crawl runs, newest first."""
    return list(db.query("select * from crawl_runs order by id desc limit ?", [limit]))


def interrupted_run(db: Database) -> dict[str, Any] | None:
    """The last run that ended, when it was interrupted (Ctrl-C, a crash): the next one resumes it."""
    last = list(db.query("select id, status, started_at from crawl_runs where status != 'running' order by id desc limit 1"))
    return last[0] if last and last[0]["status"] == "interrupted" else None


def get_run(db: Database, run_id: int) -> dict[str, Any]:
    """One crawl run by id."""
    return dict(db.table("crawl_runs").get(run_id))


def search_posts(db: Database, query: str, *, limit: int = 20) -> list[dict[str, Any]]:
    """Posts whose title or text contains every word of ``query``, best first."""
    words = query.split()
    if not words:
        return []
    if all(len(w) >= MIN_TRIGRAM_CHARS for w in words):
        rows = db.query(SEARCH_SQL, {"fts": db.quote_fts(query), "limit": limit})
    else:
        ids, params = post_ids_sql(words, grams=db.table("posts_grams").exists())
        rows = db.query(SHORT_SEARCH_SQL.format(ids=ids), {**params, "limit": limit})
    # about two lines of whole words around the first word found, as the reading room shows them
    return [{**row, "snippet": snippet(row.pop("text"), words).replace("<mark>", "[").replace("</mark>", "]")}
            for row in rows]
