"""The zone of a blog whose pages show their times without one: learned from the pages that its
feed also dates, and used for the posts the feed does not list.

Many feeds write every instant in UTC (Hexo's Atom feed: ``2024-03-01T14:15:00.000Z``) while the
pages show the blog's local time with no zone (``2024-03-01 22:15``). The ``Z`` says nothing of
the blog's zone; the difference between a page's time and its feed entry's does.
"""

from datetime import timedelta

from blogsite import RouteServer, html_page, xml_page
from conftest import crawl_args, rows, run_cli

from crawler.judge.pages import SectionStats
from crawler.spiders.spill import SpillDict, SpillSet
from crawler.spiders.state import SourceState

HOST = "zone.test"
LONG = " ".join(["A sentence of the post that says something worth reading about the topic."] * 12)
# (path, title, the time its page shows, in +08:00, and the feed's instant of it)
IN_FEED = [(f"2024/03/0{n}/post-{n}", f"Post {n}", f"2024-03-0{n} 22:15", f"2024-03-0{n}T14:15:00.000Z") for n in (1, 2, 3)]
OLD = ("2023/11/05/old-post", "An old post", "2023-11-05 09:30")  # not in the feed: its page alone dates it


def post_page(title: str, shown: str, extra: str = "") -> str:
    return (f"<html><head><title>{title} | Zone</title></head><body><header><a href='/'>Zone</a></header>"
            f"<article><h1>{title}</h1><p class='meta'>Posted on {shown}</p><p>{LONG}</p>{extra}</article></body></html>")


def feed() -> str:
    entries = "".join(
        f"<entry><title>{title}</title><link href='http://{HOST}/{path}/'/><id>http://{HOST}/{path}/</id>"
        f"<published>{instant}</published><updated>{instant}</updated><summary>{title}</summary></entry>"
        for path, title, _, instant in IN_FEED)
    return (f"<?xml version='1.0' encoding='utf-8'?><feed xmlns='http://www.w3.org/2005/Atom'><title>Zone</title>"
            f"<link href='http://{HOST}/'/><id>http://{HOST}/</id><updated>2024-03-03T14:15:00.000Z</updated>{entries}</feed>")


def test_a_zone_less_time_beside_its_feed_instant_teaches_the_blogs_zone():
    state = SourceState(id=1, url=f"http://{HOST}/", scope=f"http://{HOST}/", origin=f"http://{HOST}", aliases=set(),
                        bases=set(), max_pages=10, max_depth=50, max_links=100, max_query_variants=5,
                        sections=SectionStats(), seen=SpillSet(10), parsed=SpillDict(10), entries=SpillDict(10),
                        listed=SpillDict(10), dated_entries=SpillSet(10), lacking=SpillDict(10), unsure=SpillDict(10))
    state.note_date("2024-03-01T14:15:00.000Z")  # what the feed alone says: UTC
    assert state.default_tz.utcoffset(None) == timedelta(0)
    assert state.note_shown_time("2024-03-01 22:15", "2024-03-01T14:15:00Z")
    assert state.default_tz.utcoffset(None) == timedelta(hours=8)
    # a day alone, a time with its own zone, or two moments that are not the same are no evidence
    assert not state.note_shown_time("2024-03-01", "2024-03-01T14:15:00Z")
    assert not state.note_shown_time("2024-03-01T22:15:00+08:00", "2024-03-01T14:15:00Z")
    assert not state.note_shown_time("2024-03-01 22:22", "2024-03-01T14:15:00Z")
    assert not state.note_shown_time("2024-03-01 22:15", None)


def test_a_post_outside_the_feed_gets_the_zone_its_blogs_pages_show_their_times_in(tmp_path):
    db = tmp_path / "archive.db"
    newest = IN_FEED[-1]
    pages = {f"/{path}/": html_page(post_page(title, shown)) for path, title, shown, _ in IN_FEED[:-1]}
    # the old post is linked from the newest one only: it is read after the feed's pages are
    pages[f"/{newest[0]}/"] = html_page(post_page(newest[1], newest[2], f"<p>Before: <a href='/{OLD[0]}/'>{OLD[1]}</a></p>"))
    routes = {
        "/": html_page("<html><head><title>Zone</title><link rel='alternate' type='application/atom+xml' href='/atom.xml'>"
                       "</head><body><main><ul>" + "".join(f"<li><a href='/{p}/'>{t}</a></li>" for p, t, _, _ in IN_FEED)
                       + "</ul></main></body></html>"),
        "/atom.xml": xml_page(feed(), "application/atom+xml"),
        **pages,
        f"/{OLD[0]}/": html_page(post_page(OLD[1], OLD[2])),
    }
    with RouteServer(routes) as server:
        run_cli(*crawl_args(f"http://{HOST}/", db, {HOST: server.base}))
    published = {r["url"]: r["published"] for r in rows(db, "select url, published from posts")}
    assert published[f"http://{HOST}/{OLD[0]}/"] == "2023-11-05T01:30:00Z"  # 09:30 at +08:00, not in UTC
    assert all(published[f"http://{HOST}/{p}/"] == i.replace(".000", "") for p, _, _, i in IN_FEED)
