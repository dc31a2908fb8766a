"""A sitemap ``lastmod`` that moved is a change, even to a time before the last crawl (issue 48).

Generators date a page's ``lastmod`` from its last commit (Hugo's ``enableGitInfo``, Jekyll's
``last_modified_at``), and the deploy may come days later: an edit committed before the previous crawl
and deployed after it shows in the sitemap as a ``lastmod`` older than that crawl, yet other than
the one the sitemap gave then. Before, a sitemap's ``lastmod`` was only compared with the post's
last check, and such an edit was never fetched (on a held-out farm, 2 of the 7 edits the blogs
announced).
"""

import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from blogserver import Blog, BlogServer
from conftest import rows, run_cli
from test_changing_blogs import EDIT

from crawler.discover.incremental import SourcePlan


def crawl(db: Path, blog: Blog, server: BlogServer) -> None:
    # the default politeness: no --delay
    run_cli("crawl", f"http://{blog.host}/", "--db", str(db), "--map-host", f"{blog.host}={server.base}", timeout=600)


def texts(db: Path) -> dict[str, str]:
    return {r["url"]: r["text"] for r in rows(db, "select url, text from posts")}


def test_an_edit_whose_lastmod_moved_to_before_the_last_crawl_is_fetched(tmp_path: Path) -> None:
    blog = Blog("commit.test", 8)  # the feed lists post-4 to post-8; post-2 is in the sitemap only
    db = tmp_path / "archive.db"
    with BlogServer(blog) as server:
        crawl(db, blog, server)
        first = texts(db)
        server.take_hits()
        time.sleep(1)
        # committed two days ago (before the first crawl), deployed now: the lastmod is the commit's
        blog.edit("post-2", EDIT)
        committed = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(days=2)
        blog.post("post-2").updated = blog.post("post-2").modified = committed
        crawl(db, blog, server)
        hits = {h.path: h.status for h in server.take_hits()}
        # the other posts' lastmods did not move: they are not asked for
        assert hits.get("/p/post-2/") == 200
        assert not {p for p in hits if p.startswith("/p/")} - {"/p/post-2/"}
        after = texts(db)
        url = next(u for u in after if u.endswith("/p/post-2/"))
        assert EDIT in after[url] and EDIT not in first[url]
        assert {u: t for u, t in after.items() if u != url} == {u: t for u, t in first.items() if u != url}
        # nothing moved since: the post is not asked for again
        crawl(db, blog, server)
        assert "/p/post-2/" not in {h.path for h in server.take_hits()}


def plan(lastmods: dict[str, str], checked: str = "2026-12-05T10:00:00Z") -> SourcePlan:
    post = {"published": "2026-01-01T00:00:00Z", "updated": None, "gone_at": None, "checked": checked}
    return SourcePlan(db=None, mode="incremental", resume=False, posts={"https://b.test/a/": post},  # type: ignore[arg-type]
                      pages={}, feeds=[], sitemap_lastmods=lastmods)


def test_a_lastmod_is_compared_with_the_one_seen_before_then_with_the_last_check() -> None:
    url = "https://b.test/a/"
    before = {url: "2026-12-01T00:00:00Z"}
    assert plan(before).wants_entry(url, "2026-12-03T00:00:00Z", since_check=True)  # moved, still before the check
    assert plan(before).wants_entry(url, "2026-11-30T00:00:00Z", since_check=True)  # moved back: a revert
    assert not plan(before).wants_entry(url, "2026-12-01T00:00:00Z", since_check=True)  # the same
    assert not plan({}).wants_entry(url, "2026-12-03T00:00:00Z", since_check=True)  # none before: the check decides
    assert plan({}).wants_entry(url, "2026-12-06T00:00:00Z", since_check=True)
    assert not plan(before).wants_entry(url, None, since_check=True)
    # a feed's updated is not a sitemap's lastmod
    assert not plan(before).wants_entry(url, "2026-12-03T00:00:00Z")
