"""A page judged not a post is judged again when a listing or a feed read after it shows it.

Whether a page is a post can depend on what the crawl has read so far: a dated article in a
URL shape none of the feed's entries has is a site page unless a listing shows it, and a page
whose theme calls it ``og:type`` website is a post only when a feed or a listing shows it. Pages are judged as they
arrive, so a listing or a category's feed that answers later than the page must not leave it a site page.

Here the blog's archive page and its category page answer late (a second after the page they, or their feed,
show was asked for); the old post and the
themed post are reached first through a newer post's text, and judged before either of them
is read.
"""

import threading
import time

from blogsite import RouteServer, html_page, xml_page
from conftest import crawl_args, rows, run_cli

HOST = "again.test"
LONG = " ".join(["A sentence of the post that says something worth reading about the topic."] * 12)
NEW = [(f"2024/0{n}/post-{n}", f"Post number {n}", f"2024-0{n}-0{n}") for n in range(1, 7)]
LATE = 1.0  # seconds a listing answers after the page it shows was asked for


def post_page(title: str, day: str, extra: str = "", *, og_type: str = "article") -> str:
    return (f"<html><head><title>{title} | Again</title><meta property='og:type' content='{og_type}'></head><body>"
            f"<header><a href='/'>Again</a></header><article><h1>{title}</h1><p class='meta'>Posted on {day}</p>"
            f"<p>{LONG}</p>{extra}</article></body></html>")


def entry(path: str, title: str, day: str) -> str:
    return (f"<entry><title>{title}</title><link href='http://{HOST}/{path}/'/><id>http://{HOST}/{path}/</id>"
            f"<published>{day}T08:00:00Z</published><updated>{day}T08:00:00Z</updated><summary>{title}</summary></entry>")


def feed(title: str, entries: list[str]) -> str:
    return (f"<?xml version='1.0' encoding='utf-8'?><feed xmlns='http://www.w3.org/2005/Atom'><title>{title}</title>"
            f"<link href='http://{HOST}/'/><id>http://{HOST}/</id><updated>2024-06-06T00:00:00Z</updated>"
            + "".join(entries) + "</feed>")


def listing(title: str, links: list[tuple[str, str]], head: str = "") -> str:
    items = "".join(f"<li><a href='/{path}/'>{text}</a></li>" for path, text in links)
    return f"<html><head><title>{title}</title>{head}</head><body><main><ul>{items}</ul></main></body></html>"


class Late:
    """Routes for a page, and for a listing that answers only ``LATE`` seconds after that page was
    asked for (whatever the order the crawl asks in: its workers start, its gate holds requests)."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.answered = 0.0  # time.monotonic() of the listing's answer

    def page(self, page):
        def route(path: str, query: str):
            self.asked.set()
            return page
        return route

    def listing(self, page):
        def route(path: str, query: str):
            self.asked.wait(60)
            time.sleep(LATE)
            self.answered = time.monotonic()
            return page
        return route


def routes(old: Late, themed: Late) -> dict:
    home = listing("Again", [(p, t) for p, t, _ in NEW] + [("archive", "Archive"), ("categories/old", "Old")],
                   "<link rel='alternate' type='application/atom+xml' href='/feed.xml'>")
    first = post_page("Post number 1", "2024-01-01",
                      "<p>Before this came <a href='/2015-05-01/stop/'>an old note</a> and "
                      "<a href='/2023/05/themed/'>a themed one</a>.</p>")
    archive = listing("Archive | Again", [(p, t) for p, t, _ in NEW] + [("2015-05-01/stop", "Stop!")])
    # the category's page does not show the themed post (its feed alone does): the late feed is what turns it
    category = listing("Old | Again", [(NEW[0][0], NEW[0][1])],
                       "<link rel='alternate' type='application/atom+xml' href='/categories/old/feed.xml'>")
    pages = {f"/{path}/": html_page(post_page(title, day)) for path, title, day in NEW[1:]}
    return {
        "/": html_page(home),
        "/feed.xml": xml_page(feed("Again", [entry(*e) for e in NEW]), "application/atom+xml"),
        f"/{NEW[0][0]}/": html_page(first),
        **pages,
        "/2015-05-01/stop/": old.page(html_page(post_page("Stop!", "2015-05-01"))),
        "/2023/05/themed/": themed.page(html_page(post_page("Themed", "2023-05-05", og_type="website"))),
        "/archive/": old.listing(html_page(archive)),
        "/categories/old/": themed.listing(html_page(category)),
        "/categories/old/feed.xml": xml_page(feed("Old", [entry("2023/05/themed", "Themed", "2023-05-05")]),
                                             "application/atom+xml"),
    }


def test_a_page_shown_by_a_late_listing_or_a_late_feed_is_archived_as_a_post(tmp_path):
    db = tmp_path / "archive.db"
    old, themed = Late(), Late()
    with RouteServer(routes(old, themed)) as server:
        run_cli(*crawl_args(f"http://{HOST}/", db, {HOST: server.base}))
        requested = server.paths()
        asked = {}
        for r in server.requests:
            asked.setdefault(r.path, r.at)
    # both were fetched before the listing (or its feed) was read: a site page each, at first
    assert asked["/2015-05-01/stop/"] < old.answered
    assert asked["/2023/05/themed/"] < asked["/categories/old/feed.xml"]
    judged = {r["url"]: (r["kind"], r["reason"]) for r in rows(db, "select url, kind, reason from pages")}
    assert judged[f"http://{HOST}/2015-05-01/stop/"][0] == "post"
    assert judged[f"http://{HOST}/2023/05/themed/"] == ("post", "listed in a feed")
    posts = {r["url"]: r for r in rows(db, "select url, title, published from posts where gone_at is null")}
    assert posts[f"http://{HOST}/2015-05-01/stop/"]["title"] == "Stop!"
    assert posts[f"http://{HOST}/2023/05/themed/"]["published"] == "2023-05-05T08:00:00Z"
    assert len(posts) == len(NEW) + 2
    # each is fetched once more, to be judged again; nothing else twice
    assert requested.count("/2015-05-01/stop/") == 2 and requested.count("/2023/05/themed/") == 2
    assert all(requested.count(p) == 1 for p in set(requested) - {"/2015-05-01/stop/", "/2023/05/themed/"})
