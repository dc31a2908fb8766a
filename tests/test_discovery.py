"""Issue 3's measure on six generated blogs (tests/testblogs.py): every post once, nothing else,
with the metadata the author wrote. Each blog is served by a RouteServer on 127.0.0.1 and
crawled from its public home URL with --map-host."""

import json
import sqlite3
from urllib.parse import unquote, urlsplit

import pytest
from scrapy.utils.test import get_crawler
from testblogs import all_blogs

from archive import ensure_source, open_archive

from crawler.items import BlogPost, PostAlias
from crawler.store.pipelines import ArchivePipeline

BLOGS = {blog.name: blog for blog in all_blogs()}


@pytest.fixture(scope="module", params=sorted(BLOGS))
def crawled(request, tmp_path_factory, test_blog_archive):
    blog = BLOGS[request.param]
    db, requested = test_blog_archive(blog.name, tmp_path_factory.mktemp(blog.name) / "archive.db")
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    tables = {t: [dict(r) for r in conn.execute(f"select * from {t}")] for t in
              ("posts", "pages", "post_aliases", "crawl_errors", "sources", "provenance")}
    conn.close()
    tables["posts_by_path"] = {unquote(urlsplit(p["url"]).path) + (f"?{urlsplit(p['url']).query}" if urlsplit(p["url"]).query else ""): p
                               for p in tables["posts"]}
    return blog, tables, requested


def test_every_post_once_and_nothing_else(crawled):
    blog, t, _ = crawled
    assert sorted(t["posts_by_path"]) == sorted(p["path"] for p in blog.posts)
    assert len(t["posts"]) == len(blog.posts)
    assert not set(blog.non_posts) & set(t["posts_by_path"])


def test_titles_authors_and_languages(crawled):
    blog, t, _ = crawled
    for truth in blog.posts:
        got = t["posts_by_path"][truth["path"]]
        assert (got["title"], got["author"], got["lang"]) == (truth["title"], truth["author"], truth["lang"]), truth["path"]


def test_publish_dates_in_utc(crawled):
    blog, t, _ = crawled
    for truth in blog.posts:
        got = t["posts_by_path"][truth["path"]]["published"]
        if truth["published"]:
            assert got == truth["published"], truth["path"]
        else:  # the blog prints a day, no time: midnight in the blog's zone
            assert got and got[:10] == truth["published_day_utc"], truth["path"]


def test_tags_apart_from_categories(crawled):
    blog, t, _ = crawled
    for truth in blog.posts:
        got = t["posts_by_path"][truth["path"]]
        assert sorted(json.loads(got["tags"])) == sorted(truth["tags"]), truth["path"]
        if truth["categories"]:
            assert sorted(json.loads(got["categories"])) == sorted(truth["categories"]), truth["path"]


def test_text_has_the_post_not_its_comments(crawled):
    blog, t, _ = crawled
    for truth in blog.posts:
        text = t["posts_by_path"][truth["path"]]["text"]
        assert truth["phrase"] in text, truth["path"]
        assert truth["comment_phrase"] not in text, truth["path"]
    for phrase in blog.forbidden_phrases:
        assert not any(phrase in (p["text"] or "") for p in t["posts"])


def test_robots_disallowed_paths_never_requested(crawled):
    blog, _, requested = crawled
    assert [p for p in requested if any(p.startswith(n) for n in blog.never_fetched)] == []


def test_every_page_judged_with_a_reason(crawled):
    _, t, _ = crawled
    assert {p["kind"] for p in t["pages"]} <= {"post", "listing", "page", "alias"}
    assert all(p["reason"] for p in t["pages"])
    assert sum(p["kind"] == "post" for p in t["pages"]) == len(t["posts"])


@pytest.mark.parametrize("crawled", ["trap"], indirect=True)
def test_aliases_lead_to_their_post(crawled):
    blog, t, _ = crawled
    by_id = {p["id"]: unquote(urlsplit(p["url"]).path) for p in t["posts"]}
    aliases = {unquote(urlsplit(a["alias"]).path): (by_id[a["post_id"]], a["why"]) for a in t["post_aliases"]}
    assert aliases["/2019/01/old-slug.html"][0] == blog.aliases["/2019/01/old-slug.html"]
    assert aliases["/2019/01/old-slug.html"][1] == "redirect 301"
    meta = next(k for k in blog.aliases if k.startswith("/go/"))
    assert aliases[meta] == (blog.aliases[meta], "meta refresh")


def test_an_alias_found_before_its_post_is_saved_is_kept(tmp_path):
    """A redirect to a post that is still in the extraction workers: the alias comes to the
    writer first, and is saved with the post when the post comes."""
    db = open_archive(tmp_path / "archive.db")
    source_id = ensure_source(db, "http://blog.test/")["id"]
    pipeline = ArchivePipeline(get_crawler(settings_dict={"ARCHIVE_PATH": str(tmp_path / "archive.db")}))
    def run(fn, *args, **kwargs):
        return fn(db, *args, **kwargs)

    pipeline._save(run, PostAlias(source_id, "http://blog.test/old/", "http://blog.test/p/1/", "redirect 301"))
    assert db["post_aliases"].count == 0
    pipeline._save(run, BlogPost("http://blog.test/p/1/", source_id, title="One", text="The post."))
    assert [(a["alias"], a["why"]) for a in db["post_aliases"].rows] == [("http://blog.test/old/", "redirect 301")]


@pytest.mark.parametrize("crawled", ["trap"], indirect=True)
def test_traps_are_cut_and_recorded(crawled):
    blog, t, requested = crawled
    cuts = [e for e in t["crawl_errors"] if e["kind"] == "cut"]
    assert cuts and all(e["message"].startswith("not fetched: ") for e in cuts)
    assert sum(p.startswith("/calendar/") for p in requested) <= 60
    assert not any("sid=" in p for p in requested)
    assert not any(p.endswith((".pdf", ".png")) for p in requested)


def test_provenance_keeps_every_candidate(crawled):
    blog, t, _ = crawled
    chosen = [p for p in t["provenance"] if p["chosen"]]
    per_post = {}
    for p in chosen:
        per_post.setdefault(p["post_id"], set()).add(p["field"])
    assert len(per_post) == len(t["posts"])
    assert all({"title", "text"} <= fields for fields in per_post.values())
    assert any(not p["chosen"] for p in t["provenance"])
