"""WARC round trips: archive -> export warc -> import warc into a new archive gives the same posts
with the same fields, on the six generated blogs and the three real blogs in ../shared; and a WARC
that Debian's wget writes over a test blog imports as the posts a crawl of that blog gives."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import crawl_args, rows, run_cli
from testblogs import all_blogs
from truth import REAL_BLOGS, blog_names

BLOGS = {blog.name: blog for blog in all_blogs()}
REAL = blog_names() if REAL_BLOGS.is_dir() else []
# When a post was first and last seen is the time of the crawl that saw it, not part of the post.
CRAWL_TIMES = {"id", "source_id", "first_seen", "last_seen"}


def posts(db: Path) -> dict[str, dict]:
    return {p["url"]: {k: v for k, v in p.items() if k not in CRAWL_TIMES} for p in rows(db, "select * from posts")}


def aliases(db: Path) -> set[tuple[str, str, str]]:
    """A post's other URLs (HTTP redirects included: the export writes a record for each)."""
    return {(r["alias"], r["url"], r["why"]) for r in rows(
        db, "select a.alias, p.url, a.why from post_aliases a join posts p on p.id = a.post_id")}


def round_trip(db: Path) -> Path:
    warc = db.with_name("export.warc.gz")
    run_cli("export", "warc", "-o", str(warc), "--db", str(db))
    imported = db.with_name("imported.db")
    run_cli("import", "warc", str(warc), "--db", str(imported), "--quiet")
    return imported


@pytest.fixture(scope="module", params=[*sorted(BLOGS), *(f"real/{name}" for name in REAL)])
def archives(request, tmp_path_factory, real_blog_archive, test_blog_archive) -> tuple[Path, Path]:
    name = request.param
    db = tmp_path_factory.mktemp(name.replace("/", "-")) / "archive.db"
    if name.startswith("real/"):
        real_blog_archive(name[5:], db)
    else:
        test_blog_archive(name, db)
    return db, round_trip(db)


def test_the_same_posts_with_the_same_fields(archives):
    before, after = (posts(db) for db in archives)
    assert before and sorted(after) == sorted(before)
    different = {url: [k for k in post if after[url][k] != post[k]] for url, post in before.items() if after[url] != post}
    assert different == {}


def sources(db: Path) -> list[dict]:
    """Each source, its feeds and sitemaps in any order (the order they were read in)."""
    return [{**s, "feeds": sorted(json.loads(s["feeds"])), "sitemaps": sorted(json.loads(s["sitemaps"]))}
            for s in rows(db, "select name, url, scope, kind, feeds, sitemaps from sources order by id")]


def test_the_same_sources_and_aliases(archives):
    assert sources(archives[1]) == sources(archives[0])
    assert aliases(archives[1]) == aliases(archives[0])


@pytest.mark.skipif(shutil.which("wget") is None, reason="no wget")
@pytest.mark.parametrize("name", ["typecho", "gbk"])
def test_a_wget_warc_gives_the_posts_a_crawl_gives(name, tmp_path):
    blog = BLOGS[name]
    crawled, imported = tmp_path / "crawled.db", tmp_path / "imported.db"
    with blog.serve() as server:
        # wget through the test server as its proxy: the WARC holds the blog's own URLs
        subprocess.run(["wget", "--quiet", "--recursive", "--level=inf", "--delete-after", "--no-warc-keep-log",
                        "-e", "use_proxy=on", "-e", f"http_proxy={server.base}", "--directory-prefix", str(tmp_path / "files"),
                        "--warc-file", str(tmp_path / "wget"), blog.home], check=True, timeout=120)
        run_cli(*crawl_args(blog.home, crawled, {blog.host: server.base}))
    proc = run_cli("import", "warc", str(tmp_path / "wget.warc.gz"), "--db", str(imported), "--quiet")
    assert "0 requests" in proc.stdout
    assert rows(imported, "select url from sources") == [{"url": blog.home}]
    by_crawl, by_import = posts(crawled), posts(imported)
    assert len(by_crawl) == len(blog.posts)
    assert by_import == by_crawl
