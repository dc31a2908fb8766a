"""Every change a blog announces is fetched by the default run, and nothing else is.

Each test crawls a test blog (``tests/blogserver.py``), changes it the same
day, runs the default crawl once and asserts the exact requests of that run
(each path with its status), the versions and ``gone_at`` it recorded; a last
run with nothing changed stays cheap (``test_changing_blogs.changed_run``).
"""

from blogserver import Blog, BlogServer
from conftest import rows
from test_changing_blogs import EDIT, assert_edited, changed_run
from test_incremental import crawl, posts, versions


def test_date_only_lastmods_in_children_of_an_index_that_answers_304(tmp_path):
    """A ``lastmod`` of a day alone (``2026-12-05``) names any time of that day, somewhere on
    Earth: an edit made after the day's first crawl is announced all the same."""
    blog = Blog("days.test", 12, sitemap_index=5, lastmod="date")  # the feed lists post-8 to post-12

    def change(b: Blog) -> None:
        b.edit("post-2", EDIT)  # in sitemap-1.xml
        b.edit("post-7", EDIT)  # in sitemap-2.xml

    out = changed_run(tmp_path / "archive.db", blog, change)
    assert out.hits == {
        "/robots.txt": 304, "/": 304, "/feed.xml": 304,
        "/sitemap.xml": 304,  # byte for byte the same index
        "/sitemap-1.xml": 200, "/sitemap-2.xml": 200, "/sitemap-3.xml": 304,
        "/p/post-2/": 200, "/p/post-7/": 200,
    }
    assert_edited(out, "/p/post-2/", "/p/post-7/")
    assert out.gone() == set()
    # nothing changed: each document once, answered 304, and no post
    assert sorted(out.quiet) == ["/", "/feed.xml", "/robots.txt", "/sitemap-1.xml", "/sitemap-2.xml", "/sitemap-3.xml",
                                 "/sitemap.xml"]


def test_a_post_gone_from_the_middle_of_a_feed_without_dates(tmp_path):
    """An RSS feed without dates: a post that left it while the entries listed after it stay did
    not scroll out of it, it was taken down."""
    blog = Blog("undated.test", 8, feed="rss-summary", sitemap=False)  # the feed lists post-8 to post-4

    def change(b: Blog) -> None:
        b.delete("post-6")  # post-3 comes into the feed at its end

    out = changed_run(tmp_path / "archive.db", blog, change)
    assert out.hits["/p/post-6/"] == 404
    assert out.gone() == {out.url("/p/post-6/")}
    assert out.new_versions == []
    # a feed without dates that changed: each post it lists is revalidated (its summary may not show an edit)
    assert out.hits == {
        "/robots.txt": 304, "/": 200, "/feed.xml": 200, "/sitemap.xml": 404,
        "/p/post-3/": 304, "/p/post-4/": 304, "/p/post-5/": 304, "/p/post-7/": 304, "/p/post-8/": 304,
        "/p/post-6/": 404,
    }


def test_a_post_that_scrolled_out_of_a_feed_without_dates_is_not_checked(tmp_path):
    blog = Blog("scroll.test", 8, feed="rss-summary", sitemap=False)  # the feed lists post-8 to post-4

    def change(b: Blog) -> None:
        b.add(9)  # post-4 leaves the feed at its end, still online

    out = changed_run(tmp_path / "archive.db", blog, change)
    assert "/p/post-4/" not in out.hits
    assert out.gone() == set()


def test_a_304_for_a_post_whose_undated_feed_entry_changed_is_doubted(tmp_path):
    """RSS without dates cannot say a post was updated, but an entry that changed says so all the
    same: a 304 for its page (a cache in front of it, keeping one ETag) is not believed."""
    db = tmp_path / "archive.db"
    blog = Blog("cached.test", 8, feed="rss-summary", sitemap=False)  # the feed lists post-8 to post-4
    with BlogServer(blog, validators="sticky") as server:
        servers = {blog.host: server}
        crawl(db, servers)
        server.take_hits()
        post = blog.post("post-6")
        post.title = "Post number 6, retitled"
        blog.edit("post-6", EDIT)
        crawl(db, servers)
        hits = [(h.path, h.status, h.conditional) for h in server.take_hits() if h.path.startswith("/p/")]
    # every entry of a feed without dates that changed is revalidated; only the changed one is doubted
    assert sorted(hits) == sorted([(f"/p/post-{n}/", 304, True) for n in (4, 5, 6, 7, 8)] + [("/p/post-6/", 200, False)])
    after = posts(db)["http://cached.test/p/post-6/"]
    assert after["title"] == "Post number 6, retitled" and EDIT in after["text"]
    assert versions(db)[-1] == ("http://cached.test/p/post-6/", "title+text")
    (host,) = rows(db, "select * from hosts")
    assert host["validators"] == "broken" and host["reason"].startswith("the same ETag for a changed body")


def test_a_post_two_feeds_list_is_not_missing_from_the_one_read_second(tmp_path):
    """The second feed read lists the posts the first gave already: they are not absent from it."""
    blog = Blog("twofeeds.test", 8, sitemap=False, atom_too=True)  # both feeds list post-4 to post-8

    def change(b: Blog) -> None:
        b.add(9)

    out = changed_run(tmp_path / "archive.db", blog, change)
    assert out.hits == {"/robots.txt": 304, "/": 200, "/page/2/": 200, "/feed.xml": 200, "/atom.xml": 200,
                        "/sitemap.xml": 404, "/p/post-9/": 200}
    assert out.gone() == set()
