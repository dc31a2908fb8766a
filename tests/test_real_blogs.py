"""The three real blogs in ../shared: every post archived, nothing else, as the authors wrote it.

Each blog is served from its ``site/`` folder on 127.0.0.1 and crawled from its
original home URL, with every host its links use mapped to the local server: the
session's one crawl of it (``conftest.real_blog_archive``), which test_real_blogs_recrawl
and test_warc_roundtrip start from too.
"""

import json
import sqlite3

import pytest
from truth import (
    REAL_BLOGS,
    TAGS_SHOWN,
    archived_day,
    blog_names,
    norm_title,
    truth_categories,
    truth_day,
    truth_posts,
    truth_tags,
    unescape_yaml,
    url_path,
)

pytestmark = pytest.mark.skipif(not REAL_BLOGS.is_dir(), reason=f"no real blogs at {REAL_BLOGS}")


@pytest.fixture(scope="module", params=blog_names() if REAL_BLOGS.is_dir() else [])
def crawled(request, tmp_path_factory, real_blog_archive) -> tuple[str, dict[str, dict]]:
    name = request.param
    # the session's crawl of the blog with the default options (conftest.real_blog_archive)
    db = real_blog_archive(name, tmp_path_factory.mktemp(name) / "archive.db")
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    posts = {url_path(r["url"]): dict(r) for r in conn.execute("select * from posts")}
    conn.close()
    return name, posts


def test_recall_and_precision_are_one(crawled):
    name, posts = crawled
    truth = truth_posts(name)
    assert sorted(set(truth) - set(posts)) == [], "posts not archived"
    assert sorted(set(posts) - set(truth)) == [], "pages archived as posts"


def test_titles_are_the_authors(crawled):
    name, posts = crawled
    wrong = {
        path: (row["title"], posts[path]["title"])
        for path, row in truth_posts(name).items()
        if norm_title(unescape_yaml(row["title"])) != norm_title(posts[path]["title"])
    }
    assert wrong == {}, wrong


def test_publish_dates_are_the_authors(crawled):
    name, posts = crawled
    wrong = {}
    for path, row in truth_posts(name).items():
        day = truth_day(name, row)
        if day and day != archived_day(posts[path]["published"]):
            wrong[path] = (day, posts[path]["published"])
    assert wrong == {}, wrong


def test_posts_are_in_one_source_with_text(crawled):
    name, posts = crawled
    assert len({p["source_id"] for p in posts.values()}) == 1
    assert all(p["text"] and p["word_count"] > 20 for p in posts.values())
    assert all(json.loads(p["tags"]) is not None for p in posts.values())


def test_tags_are_the_front_matters(crawled):
    name, posts = crawled
    wrong = {}
    for path, row in truth_posts(name).items():
        got = {t.lower() for t in json.loads(posts[path]["tags"])}
        truth = truth_tags(name, row)
        shown = TAGS_SHOWN.get(name)
        # All the tags, or as many of them as the pages show.
        if (got != truth) if shown is None else not (got <= truth and len(got) == min(shown, len(truth))):
            wrong[path] = (sorted(truth), sorted(got))
    assert wrong == {}, wrong


def test_categories_are_kept_apart_where_pages_show_them(crawled):
    name, posts = crawled
    wrong = {}
    for path, row in truth_posts(name).items():
        got = {c.lower() for c in json.loads(posts[path]["categories"])}
        # andyibanez's pages link no category: nothing to keep apart there.
        truth = set() if name == "andyibanez-hugo-en" else truth_categories(name, row)
        if got != truth:
            wrong[path] = (sorted(truth), sorted(got))
    assert wrong == {}, wrong
