"""A category's feed, found after its posts were extracted, still gives them what their pages lack.

The blog's main feed lists only its newest post. Its older posts show only their day and no
tags; the category page they link to declares a feed with their full time and their tags. That
category page is reached through the posts themselves, so each post is extracted before the
category feed is read.
"""

from blogsite import RouteServer, html_page, xml_page
from conftest import crawl_args, rows, run_cli

HOST = "late.test"
LONG = " ".join(["A sentence of the post that says something worth reading about the topic."] * 12)


def post_page(slug: str, title: str, day: str) -> str:
    return (f"<html><head><title>{title} | Late Notes</title></head><body><header><a href='/'>Late Notes</a></header>"
            f"<article><h1>{title}</h1><p class='meta'>Posted on {day}</p><p>{LONG}</p>"
            f"<p>Filed under <a href='/categories/rust/'>Rust</a></p></article></body></html>")


def entry(slug: str, title: str, when: str, terms: list[str]) -> str:
    cats = "".join(f'<category term="{t}" scheme="http://{HOST}/tags/{t}/"/>' for t in terms)
    return (f"<entry><title>{title}</title><link href='http://{HOST}/p/{slug}/'/><id>http://{HOST}/p/{slug}/</id>"
            f"<published>{when}</published><updated>{when}</updated>{cats}<summary>{title}</summary></entry>")


def feed(title: str, entries: list[str]) -> str:
    return (f"<?xml version='1.0' encoding='utf-8'?><feed xmlns='http://www.w3.org/2005/Atom'><title>{title}</title>"
            f"<link href='http://{HOST}/'/><id>http://{HOST}/</id><updated>2024-03-09T00:00:00Z</updated>"
            + "".join(entries) + "</feed>")


def routes() -> dict:
    home = ("<html><head><title>Late Notes</title><link rel='alternate' type='application/atom+xml' href='/feed.xml'>"
            "</head><body><main><ul>"
            "<li><a href='/p/new/'>New things</a></li><li><a href='/p/old-one/'>Old one</a></li>"
            "<li><a href='/p/old-two/'>Old two</a></li></ul></main></body></html>")
    category = ("<html><head><title>Rust | Late Notes</title>"
                "<link rel='alternate' type='application/atom+xml' href='/categories/rust/feed.xml'></head><body><main><ul>"
                "<li><a href='/p/old-one/'>Old one</a></li><li><a href='/p/old-two/'>Old two</a></li>"
                "</ul></main></body></html>")
    return {
        "/": html_page(home),
        "/feed.xml": xml_page(feed("Late Notes", [entry("new", "New things", "2024-03-09T08:00:00Z", [])]),
                              "application/atom+xml"),
        "/categories/rust/": html_page(category),
        "/categories/rust/feed.xml": xml_page(feed("Rust", [
            entry("old-one", "Old one", "2024-03-05T14:30:00Z", ["tokio", "async"]),
            entry("old-two", "Old two", "2024-03-06T09:15:00Z", ["tokio"]),
        ]), "application/atom+xml"),
        "/p/new/": html_page(post_page("new", "New things", "2024-03-09")),
        "/p/old-one/": html_page(post_page("old-one", "Old one", "2024-03-05")),
        "/p/old-two/": html_page(post_page("old-two", "Old two", "2024-03-06")),
    }


def test_a_late_category_feed_completes_the_posts_it_lists(tmp_path):
    db = tmp_path / "archive.db"
    with RouteServer(routes()) as server:
        run_cli(*crawl_args(f"http://{HOST}/", db, {HOST: server.base}))
        requested = server.paths()
    posts = {r["url"].rsplit("/", 2)[-2]: r for r in rows(db, "select url, published, tags from posts")}
    assert posts["old-one"]["published"] == "2024-03-05T14:30:00Z"
    assert posts["old-one"]["tags"] == '["tokio", "async"]'
    assert posts["old-two"]["published"] == "2024-03-06T09:15:00Z"
    assert posts["new"]["published"] == "2024-03-09T08:00:00Z"
    # each late post is fetched once more at most, the category feed once, and nothing else twice
    assert requested.count("/categories/rust/feed.xml") == 1
    assert all(requested.count(f"/p/{slug}/") <= 2 for slug in ("old-one", "old-two"))
    assert requested.count("/p/new/") == 1
    # the new version says where the time came from
    chosen = rows(db, "select p.url, v.origin from provenance v join posts p on p.id = v.post_id "
                      "where v.field = 'published' and v.chosen = 1")
    assert {c["url"].rsplit("/", 2)[-2]: c["origin"] for c in chosen} == {"new": "feed", "old-one": "feed", "old-two": "feed"}
