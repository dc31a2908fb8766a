"""A real WordPress (``tests/wordpress.py``): its REST API read as the posts' listing, run after run.

One blog of 210 posts (English and Chinese, four authors, categories and tags, comments, images,
a sticky post, pages, a post behind a password, a private post, a draft and a scheduled one),
crawled by default runs: first, with nothing changed, then after ten edits (half of them to posts
older than 90 days), five deletions, two posts trashed, five new posts, a slug and a title
changed. The same blog with its REST API answering 401 is crawled from its HTML alone.
"""

import json
import sqlite3
import time
import urllib.request
from pathlib import Path
from urllib.parse import unquote

import pytest
from conftest import free_port, rows, run_cli
from parsel import Selector
from wordpress import WordPress, missing

from archive.core.urls import normalize_url

from crawler.discover.platforms.listing import Known
from crawler.discover.platforms.wordpress import WordPressListing, api_root

pytestmark = [pytest.mark.skipif(missing() is not None, reason=missing() or ""), pytest.mark.slow]

FIELDS = ("title", "published", "updated", "author", "categories", "tags")


def crawl(wp: WordPress, db: Path, *urls: str) -> dict:
    started = time.monotonic()
    out = run_cli("crawl", *urls, "--db", str(db), "--delay", "0", "--concurrency", "8")
    return {"stdout": out.stdout, "requests": wp.requests(), "seconds": time.monotonic() - started}


def archived(db: Path) -> dict[str, dict]:
    """The archive's live posts, by URL, with their fields as WordPress names them."""
    return {p["url"]: {**p, "categories": sorted(json.loads(p["categories"])), "tags": sorted(json.loads(p["tags"]))}
            for p in rows(db, "select * from posts where gone_at is null")}


def expected(truth: dict[str, dict]) -> dict[str, dict]:
    return {normalize_url(url): {k: sorted(p[k]) if isinstance(p[k], list) else p[k] for k in FIELDS}
            for url, p in truth.items()}


def resume(wp: WordPress, db: Path, post: dict, other: dict) -> dict:
    """A run that resumes an interrupted one, whose archive holds a later change (of ``other``) than
    the edit of ``post`` it left undone, as a run cut short leaves it."""
    wp.php(f"wp_update_post(['ID' => {post['id']}, 'post_content' => get_post({post['id']})->post_content"
           " . \"\\n\\nEdited while a crawl was cut short.\"]);")
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("update provenance set value = '2099-01-01T00:00:00Z' where field = 'updated' "
                     "and post_id = (select id from posts where url = ?)", [normalize_url(other["url"])])
        conn.execute("update sources set run_state = 'interrupted'")
    conn.close()
    return {**crawl(wp, db), "post": wp.published()[post["url"]]}


@pytest.fixture(scope="module")
def blog(tmp_path_factory):
    """The crawls of one WordPress, in order: first, HTML only (API off), no change, after changes."""
    root = tmp_path_factory.mktemp("wordpress")
    with WordPress(root / "blog", free_port()) as wp:
        db, html_db = root / "archive.db", root / "html.db"
        out = {"wp": wp, "db": db, "html_db": html_db, "truth": wp.published()}
        out["first"] = crawl(wp, db, wp.home)
        out["first_posts"] = archived(db)
        wp.rest(on=False)
        out["html"] = crawl(wp, html_db, wp.home)
        wp.rest(on=True)
        out["same"] = crawl(wp, db)
        out["changes"] = wp.change(out["truth"])
        out["after"] = crawl(wp, db)
        out["after_posts"] = archived(db)
        oldest = sorted(out["changes"]["after"].values(), key=lambda p: p["published"])
        out["resumed"] = resume(wp, db, oldest[0], oldest[1])
        yield out


def test_first_crawl_archives_every_public_post_once_with_the_platforms_metadata(blog):
    got = {url: {k: p[k] for k in FIELDS} for url, p in blog["first_posts"].items()}
    want = expected(blog["truth"])
    assert len(want) == 210
    assert {u: got.get(u) for u in want} == want  # exact titles, date_gmt, modified_gmt, authors, terms
    assert len(rows(blog["db"], "select url from posts")) == len({r["url"] for r in rows(blog["db"], "select url from posts")})
    provenance = rows(blog["db"], "select distinct field from provenance where origin = 'WordPress REST API' and chosen")
    assert {r["field"] for r in provenance} >= {"published", "updated", "author"}


def test_nothing_private_draft_scheduled_or_behind_a_password_is_readable(blog):
    posts = rows(blog["db"], "select url, title, text, protected from posts")
    titles = " ".join(p["title"] or "" for p in posts)
    assert "Private thoughts" not in titles and "A draft" not in titles and "Scheduled news" not in titles
    assert not [p for p in posts if "behind the password" in (p["text"] or "")]
    locked = [p for p in posts if "Locked away" in (p["title"] or "")]
    assert all(p["protected"] and not (p["text"] or "").strip() for p in locked)


def test_the_api_is_asked_a_few_times_and_every_post_page_is_still_fetched(blog):
    api = [r for r in blog["first"]["requests"] if "/wp-json/" in r]
    assert 3 <= len(api) <= 8, api  # three pages of posts, the names of the terms and authors
    pages = {r.split()[2] for r in blog["first"]["requests"] if r.startswith("200 GET /20")}
    assert len(pages) >= 210
    assert not rows(blog["db"], "select * from crawl_errors where url like '%wp-json%'")


def test_a_run_with_no_change_costs_at_most_five_requests(blog):
    requests = blog["same"]["requests"]
    assert len(requests) <= 5, requests
    # no post's page: the revisit policy's due posts (those of the last 7 days) are vouched unchanged
    assert not [r for r in requests if " /20" in r], requests
    assert "0 new, 0 updated" in blog["same"]["stdout"]


def test_the_default_run_sees_every_edit_deletion_addition_and_slug_change(blog):
    db, changes = blog["db"], blog["changes"]
    posts = blog["after_posts"]
    versions = {r["url"]: r["n"] for r in rows(
        db, "select p.url, count(*) as n from post_versions v join posts p on p.id = v.post_id group by p.id")}
    for post in changes["edited"]:  # the old ones too, which no feed would have announced
        assert versions[normalize_url(post["url"])] == 2, post["url"]
    gone = {r["url"] for r in rows(db, "select url from posts where gone_at is not null")}
    assert {normalize_url(p["url"]) for p in changes["deleted"] + changes["trashed"]} == gone
    moved = normalize_url(changes["after"][next(u for u, p in changes["after"].items()
                                                if p["id"] == changes["slug"]["id"])]["url"])
    old = normalize_url(changes["slug"]["url"])
    live = [u for u in (old, moved) if u in posts]
    assert len(live) == 1  # one post, not a new one and a deletion
    alias = rows(db, "select a.alias, p.url from post_aliases a join posts p on p.id = a.post_id where a.alias in (?, ?)",
                 (old, moved))
    assert alias and alias[0]["url"] == live[0]
    titled = normalize_url(changes["title"]["url"])
    assert posts[titled]["title"] == "A title changed afterwards"
    assert rows(db, "select v.change from post_versions v join posts p on p.id = v.post_id where p.url = ? order by v.id",
                (titled,))[-1]["change"].startswith("title")
    want = expected(changes["after"])
    want.pop(moved)
    got = {u: {k: p[k] for k in FIELDS} for u, p in posts.items() if u in want}
    assert got == want  # the new posts too, each with its own metadata


def test_a_resumed_run_lists_every_post_and_fetches_those_its_archive_has_an_older_update_of(blog):
    resumed = blog["resumed"]
    listings = [r for r in resumed["requests"] if "/wp/v2/posts?" in r]
    assert listings and not [r for r in listings if "modified_after" in r]
    post = resumed["post"]
    path = unquote("/" + post["url"].split("/", 3)[3])
    assert [r for r in resumed["requests"] if unquote(r.split()[2]) == path]  # its page fetched again
    assert archived(blog["db"])[normalize_url(post["url"])]["updated"] == post["updated"]
    assert len(rows(blog["db"], "select v.id from post_versions v join posts p on p.id = v.post_id where p.url = ?",
                    (normalize_url(post["url"]),))) == 2


def test_with_its_api_off_the_blog_is_read_from_html_with_the_same_posts_and_dates(blog):
    assert any("/wp-json/wp/v2/posts" in r and r.startswith("401") for r in blog["html"]["requests"])
    html = archived(blog["html_db"])
    api = blog["first_posts"]
    assert set(html) == set(api)
    assert {u: p["published"] for u, p in html.items()} == {u: p["published"] for u, p in api.items()}
    assert not rows(blog["html_db"], "select * from crawl_errors where url like '%wp/v2/posts%'")


def test_plain_permalinks_are_listed_through_rest_route(blog):
    """With plain permalinks (``?p=ID``) the home page declares ``/?rest_route=/``: the listing asks
    the same routes there, of the same server (run last: the blog's permalinks change)."""
    wp = blog["wp"]
    wp.php("global $wp_rewrite; $wp_rewrite->set_permalink_structure(''); delete_option('rewrite_rules');")
    home = urllib.request.urlopen(wp.home, timeout=30)
    headers = {k.lower(): v for k, v in home.headers.items()}
    root = api_root(headers, Selector(text=home.read().decode()), wp.home)
    assert root.startswith(wp.home) and root.endswith("?rest_route=/")  # index.php?rest_route=/
    listing = WordPressListing(root, normalize_url, Known())
    asked = listing.start()
    while asked:
        url = asked.pop()
        answer = urllib.request.urlopen(url, timeout=30)
        asked += listing.read(url, answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read())
    entries = listing.result().entries
    after = blog["changes"]["after"]
    assert len(entries) == len(after) + 1  # and the post behind a password, listed without its content
    assert {e["url"] for e in entries.values()} >= {normalize_url(f"{wp.home}?p={p['id']}") for p in after.values()}
    locked = [e for e in entries.values() if e["title"] == "Locked away"]
    assert locked and locked[0]["content"] is None
    assert all(e["author"] and e["published"] and e["updated"] for e in entries.values())
