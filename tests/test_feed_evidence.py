"""A feed is evidence about a post only when it lists that post (issue 33, section 2).

A WordPress blog gives the site and each post a comments feed: its entries are comments that link
``POST#comment-N``, dated when the comment was written, titled "Comment on POST by NAME" and
written by the commenter. Such entries point inside a post, not at one: they are never a source of
a post's title, dates, author or tags, whichever of the blog's feeds answers first. The blog here
is crawled twice, once with its comments feeds answering late and once with its posts' feeds
answering late, and both archives must hold the same posts with the same fields, the true ones.

An RSS item with no ``<link>`` gives a post only when its guid is a permalink (an http URL of the
blog) or its content is the post, and each such post is kept apart from the others.
"""

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from blogsite import Page, RouteServer, html_page, xml_page
from conftest import crawl_args, rows, run_cli

import archive
from archive.core.urls import normalize_url
from archive.tables.captures import save_capture

from crawler.discover.feeds import parse_feed
from crawler.discover.incremental import SourcePlan
from crawler.extract.post import extract_post
from crawler.judge.pages import SectionStats
from crawler.judge.site import SiteParts

HOST = "wp.test"
SITE = "WP Test"
LATE = 0.6  # seconds the late feeds wait before answering
LONG = " ".join(["A sentence of the post that says something worth keeping about its topic."] * 10)


@dataclass
class Comment:
    id: int
    name: str
    when: str  # ISO 8601, UTC


@dataclass
class Post:
    id: int
    path: str
    title: str
    when: str  # ISO 8601, UTC
    category: str
    tags: list[str]
    comments: list[Comment] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{HOST}{self.path}"


POSTS = [
    Post(1, "/2017/03/27/holding-the-line/", "Holding the line", "2017-03-27T10:00:00Z", "Notes", ["craft"],
         [Comment(11, "Bob", "2019-04-15T09:00:00Z"), Comment(12, "Cy", "2019-04-16T09:30:00Z")]),
    Post(2, "/2018/05/02/a-quiet-year/", "A quiet year", "2018-05-02T08:15:00Z", "Life", ["time"]),
    Post(3, "/2019/01/10/small-tools/", "Small tools", "2019-01-10T19:45:00Z", "Notes", ["tools", "craft"],
         [Comment(31, "Dee", "2022-01-01T12:00:00Z")]),
    Post(4, "/2020/06/15/walking-home/", "Walking home", "2020-06-15T06:00:00Z", "Life", ["walks"]),
    Post(5, "/2021/09/09/the-last-train/", "The last train", "2021-09-09T22:10:00Z", "Life", ["trains"],
         [Comment(51, "Eve", "2022-02-02T02:02:00Z")]),
]
ABOUT_COMMENTS = [Comment(91, "Fay", "2020-01-05T10:00:00Z")]
NEWEST = 3  # posts in the first page of the main feed; the rest are on ?paged=2


def rfc822(iso: str) -> str:
    return time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ"))


def shown(iso: str) -> str:
    return time.strftime("%B %d, %Y", time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ"))


def head(title: str, feeds: list[tuple[str, str]]) -> str:
    links = "".join(f'<link rel="alternate" type="application/rss+xml" title="{t}" href="http://{HOST}{h}">' for t, h in feeds)
    return f'<!DOCTYPE html><html lang="en-US"><head><meta charset="UTF-8"><title>{title}</title>{links}</head>'


SITE_FEEDS = [(f"{SITE} &raquo; Feed", "/feed/"), (f"{SITE} &raquo; Comments Feed", "/comments/feed/")]
MASTHEAD = f'<header id="masthead" class="site-header"><p class="site-title"><a href="/">{SITE}</a></p></header>'


def comments_html(path: str, comments: list[Comment]) -> str:
    items = "".join(
        f'<li id="comment-{c.id}" class="comment"><article class="comment-body"><footer class="comment-meta">'
        f'<div class="comment-author vcard"><b class="fn">{c.name}</b> <span class="says">says:</span></div>'
        f'<div class="comment-metadata"><a href="{path}#comment-{c.id}"><time datetime="{c.when}">{shown(c.when)}</time></a>'
        f'</div></footer><div class="comment-content"><p>Thanks, {c.name} here: I liked it.</p></div></article></li>'
        for c in comments)
    return f'<div id="comments" class="comments-area"><ol class="comment-list">{items}</ol></div>' if comments else ""


def post_page(p: Post) -> str:
    tags = "".join(f'<a href="/tag/{t}/" rel="tag">{t}</a> ' for t in p.tags)
    return (
        head(f"{p.title} &#8211; {SITE}", [*SITE_FEEDS, (f"{SITE} &raquo; {p.title} Comments Feed", f"{p.path}feed/")])
        + f'<body class="single single-post">{MASTHEAD}<main id="main"><article id="post-{p.id}" class="post type-post">'
        f'<header class="entry-header"><h1 class="entry-title">{p.title}</h1><div class="entry-meta">'
        f'<span class="posted-on">Posted on <a href="{p.path}" rel="bookmark"><time class="entry-date published" '
        f'datetime="{p.when}">{shown(p.when)}</time></a></span> <span class="byline">by <span class="author vcard">'
        f'<a class="url fn n" href="/author/ann/">Ann</a></span></span></div></header>'
        f'<div class="entry-content"><p>{p.title}: {LONG}</p></div><footer class="entry-footer">'
        f'<span class="cat-links">Posted in <a href="/category/{p.category.lower()}/" rel="category tag">{p.category}</a></span> '
        f'<span class="tags-links">Tagged {tags}</span></footer></article>{comments_html(p.path, p.comments)}</main></body></html>')


def listing(title: str, posts: list[Post], feeds: list[tuple[str, str]]) -> str:
    items = "".join(f'<article class="post"><h2 class="entry-title"><a href="{p.path}">{p.title}</a></h2>'
                    f'<p>{p.title}: the start of it.</p></article>' for p in posts)
    return (head(title, feeds) + f'<body class="home blog">{MASTHEAD}<main id="main">{items}'
            '<p><a href="/about/">About</a></p></main></body></html>')


def about_page() -> str:
    return (head(f"About &#8211; {SITE}", [*SITE_FEEDS, (f"{SITE} &raquo; About Comments Feed", "/about/feed/")])
            + f'<body class="page">{MASTHEAD}<main id="main"><article class="page type-page"><h1 class="entry-title">About</h1>'
            f'<div class="entry-content"><p>Who writes here and why. {LONG}</p></div></article>'
            f'{comments_html("/about/", ABOUT_COMMENTS)}</main></body></html>')


RSS_OPEN = ('<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" '
            'xmlns:wfw="http://wellformedweb.org/CommentAPI/" xmlns:dc="http://purl.org/dc/elements/1.1/" '
            'xmlns:slash="http://purl.org/rss/1.0/modules/slash/"><channel>')


def rss(title: str, link: str, items: list[str]) -> str:
    return (RSS_OPEN + f"<title>{title}</title><link>http://{HOST}{link}</link><description>Words</description>"
            "<generator>https://wordpress.org/?v=6.5.2</generator>" + "".join(items) + "</channel></rss>")


def post_item(p: Post) -> str:
    terms = "".join(f"<category><![CDATA[{t}]]></category>" for t in [p.category, *p.tags])
    return (f"<item><title>{p.title}</title><link>{p.url}</link><comments>{p.url}#comments</comments>"
            f"<dc:creator><![CDATA[Ann]]></dc:creator><pubDate>{rfc822(p.when)}</pubDate>{terms}"
            f'<guid isPermaLink="false">http://{HOST}/?p={p.id}</guid><description><![CDATA[{p.title}: the start of it.]]></description>'
            f"<content:encoded><![CDATA[<p>{p.title}: {LONG}</p>]]></content:encoded>"
            f"<wfw:commentRss>{p.url}feed/</wfw:commentRss><slash:comments>{len(p.comments)}</slash:comments></item>")


def comment_item(title: str, path: str, c: Comment, post_id: int) -> str:
    return (f"<item><title>Comment on {title} by {c.name}</title><link>http://{HOST}{path}#comment-{c.id}</link>"
            f"<dc:creator><![CDATA[{c.name}]]></dc:creator><pubDate>{rfc822(c.when)}</pubDate>"
            f'<guid isPermaLink="false">http://{HOST}/?p={post_id}#comment-{c.id}</guid>'
            f"<description><![CDATA[Thanks, {c.name} here: I liked it.]]></description>"
            f"<content:encoded><![CDATA[<p>Thanks, {c.name} here: I liked it.</p>]]></content:encoded></item>")


def routes(late: Callable[[str], bool]) -> dict[str, object]:
    """The blog; a path for which ``late`` is true answers ``LATE`` seconds after it is asked for."""
    newest = sorted(POSTS, key=lambda p: p.when, reverse=True)
    everything: dict[str, str | Page] = {
        "/": html_page(listing(SITE, newest, SITE_FEEDS)),
        "/about/": html_page(about_page()),
        "/feed/": rss(SITE, "/", [post_item(p) for p in newest[:NEWEST]]),
        "/feed/?paged=2": rss(SITE, "/", [post_item(p) for p in newest[NEWEST:]]),
        "/comments/feed/": rss(f"Comments for {SITE}", "/", [
            comment_item(p.title, p.path, c, p.id) for p in newest for c in p.comments]),
        "/about/feed/": rss("Comments on: About", "/about/", [comment_item("About", "/about/", c, 90) for c in ABOUT_COMMENTS]),
    }
    for p in POSTS:
        everything[p.path] = html_page(post_page(p))
        everything[f"{p.path}feed/"] = rss(f"Comments on: {p.title}", p.path, [comment_item(p.title, p.path, c, p.id) for c in p.comments])
    for name in {p.category for p in POSTS}:
        listed = [p for p in newest if p.category == name]
        feed = f"/category/{name.lower()}/feed/"
        everything[f"/category/{name.lower()}/"] = html_page(listing(f"{name} &#8211; {SITE}", listed, [*SITE_FEEDS, (name, feed)]))
        everything[feed] = rss(f"{SITE} &raquo; {name}", f"/category/{name.lower()}/", [post_item(p) for p in listed])
    for tag in {t for p in POSTS for t in p.tags}:
        everything[f"/tag/{tag}/"] = html_page(listing(f"{tag} &#8211; {SITE}", [p for p in newest if tag in p.tags], SITE_FEEDS))

    def answer(target: str, page: str | Page) -> object:
        page = page if isinstance(page, Page) else xml_page(page, "application/rss+xml; charset=UTF-8")
        if not late(target):
            return page

        def route(path: str, query: str) -> Page:
            time.sleep(LATE)
            return page
        return route

    return {target: answer(target, page) for target, page in everything.items()}


def is_posts_feed(target: str) -> bool:
    return target.startswith("/feed/") or (target.startswith("/category/") and target.endswith("/feed/"))


def is_comments_feed(target: str) -> bool:
    return target.endswith("/feed/") and not is_posts_feed(target)


def crawl(tmp_path, name: str, late: Callable[[str], bool]) -> tuple[list[dict], list[dict]]:
    db = tmp_path / f"{name}.db"
    with RouteServer(routes(late)) as server:
        run_cli(*crawl_args(f"http://{HOST}/", db, {HOST: server.base}))
    posts = rows(db, "select url, title, published, updated, author, tags, categories from posts where gone_at is null order by url")
    return posts, rows(db, "select feeds from sources")


def truth() -> list[dict]:
    return [{"url": p.url, "title": p.title, "published": p.when, "updated": None, "author": "Ann", "tags": json.dumps(p.tags),
             "categories": json.dumps([p.category])} for p in sorted(POSTS, key=lambda p: p.url)]


def test_comments_feeds_are_evidence_about_no_post_whichever_feed_answers_first(tmp_path):
    comments_first, sources_a = crawl(tmp_path, "comments-first", is_posts_feed)
    posts_first, sources_b = crawl(tmp_path, "posts-first", is_comments_feed)
    assert comments_first == posts_first
    assert [{**p, "tags": json.dumps(sorted(json.loads(p["tags"])))} for p in posts_first] == \
        [{**t, "tags": json.dumps(sorted(json.loads(t["tags"])))} for t in truth()]
    # the comments feeds are not the blog's feeds, and the about page with comments is no post
    for sources in (sources_a, sources_b):
        assert sorted(json.loads(sources[0]["feeds"])) == [f"http://{HOST}/category/{c}/feed/" for c in ("life", "notes")] \
            + [f"http://{HOST}/feed/"]


# ---------------------------------------------------------------- parsing: which entries are replies


def test_a_wordpress_comments_feed_is_all_replies_and_its_posts_feed_none():
    comments = parse_feed(routes(lambda t: False)["/comments/feed/"].body, f"http://{HOST}/comments/feed/")
    assert comments["entries"] == [] and len(comments["replies"]) == 4
    posts = parse_feed(routes(lambda t: False)["/feed/"].body, f"http://{HOST}/feed/")
    assert [e["title"] for e in posts["entries"]] == ["The last train", "Walking home", "Small tools"]
    assert posts["replies"] == []


def test_a_posts_comments_feed_without_fragments_is_replies_by_the_page_it_is_about():
    items = [f"<item><title>Re {n}</title><link>http://{HOST}/p/1/</link><guid>c{n}</guid></item>" for n in (1, 2)]
    own = parse_feed(rss("Comments on: P", "/p/1/", items).encode(), f"http://{HOST}/p/1/feed/")
    assert own["entries"] == [] and len(own["replies"]) == 2
    one = f"<item><title>Re</title><link>http://{HOST}/p/1/</link><guid>c1</guid></item>"
    declared = parse_feed(rss("Comments", "/", [one]).encode(), f"http://{HOST}/c.xml", page=f"http://{HOST}/p/1")
    assert declared["entries"] == [] and len(declared["replies"]) == 1
    # the same single entry in a feed another page declared is a post
    assert len(parse_feed(rss("Posts", "/", [one]).encode(), f"http://{HOST}/c.xml", page=f"http://{HOST}/")["entries"]) == 1


def test_atom_threading_marks_replies_and_posts():
    atom = f"""<feed xmlns="http://www.w3.org/2005/Atom" xmlns:thr="http://purl.org/syndication/thread/1.0">
    <title>T</title><link href="http://{HOST}/"/>
    <entry><id>tag:p1</id><title>A post</title><link href="http://{HOST}/p/1/#top"/>
      <link rel="replies" type="application/atom+xml" href="http://{HOST}/p/1/comments.xml" thr:count="1"/></entry>
    <entry><id>tag:c1</id><title>A reply</title><link href="http://{HOST}/p/2/"/><thr:in-reply-to ref="tag:p2"/></entry>
    </feed>""".encode()
    feed = parse_feed(atom, f"http://{HOST}/atom.xml")
    assert [e["title"] for e in feed["entries"]] == ["A post"]
    assert [e["title"] for e in feed["replies"]] == ["A reply"]


# ---------------------------------------------------------------- items with no link

LINKLESS = f"""<?xml version="1.0"?><rss version="2.0"><channel><title>Notes</title><link>http://{HOST}/</link>
<item><title>First note</title><guid isPermaLink="false">note-1</guid><description>The first note says one thing.</description></item>
<item><title>Second note</title><guid isPermaLink="false">note-2</guid><description>The second note says another.</description></item>
<item><description>A third note with no title and no guid, only its words.</description></item>
<item><title>By permalink</title><guid>http://{HOST}/notes/4/</guid></item>
<item><title>A title alone</title><guid isPermaLink="false">note-5</guid></item>
<item><title>A number for a guid</title><guid>6</guid></item>
<item><title>Elsewhere</title><guid>http://elsewhere.test/7/</guid></item>
</channel></rss>"""


def test_items_without_a_link_are_posts_only_by_a_permalink_guid_or_their_content(tmp_path):
    db = tmp_path / "notes.db"
    note = html_page(f"<html><head><title>By permalink</title></head><body><article><h1>By permalink</h1>"
                     f"<p>{LONG}</p></article></body></html>")
    with RouteServer({"/feed.xml": xml_page(LINKLESS, "application/rss+xml"), "/notes/4/": note}) as server:
        for _ in range(2):
            run_cli(*crawl_args(f"http://{HOST}/feed.xml", db, {HOST: server.base}))
        asked = server.paths()
    posts = {r["url"]: r["title"] for r in rows(db, "select url, title from posts")}
    feed = f"http://{HOST}/feed.xml"
    third = [u for u in posts if u.startswith(f"{feed}#sha1:")]
    assert posts == {f"{feed}#note-1": "First note", f"{feed}#note-2": "Second note", third[0]: posts[third[0]],
                     f"http://{HOST}/notes/4/": "By permalink"}
    runs = rows(db, "select posts_new, posts_updated from crawl_runs order by id")
    assert runs == [{"posts_new": 4, "posts_updated": 0}, {"posts_new": 0, "posts_updated": 0}]
    assert "/6" not in asked and "/notes/4/" in asked
    errors = {r["message"] for r in rows(db, "select message from crawl_errors where kind = 'feed'")}
    assert any("'A title alone'" in m for m in errors) and any("'A number for a guid'" in m for m in errors)


# ---------------------------------------------------------------- without a feed, the page suffices


def wordpress_page(title: str, content: str, *, heading: str = "", entry_title: str = "") -> str:
    """A post page whose theme shows no machine-readable date: the URL and the text hold dates."""
    header = f'<div class="page-header"><h1 class="entry-title">{heading}</h1></div>' if heading else ""
    inner = f'<header class="entry-header"><h2 class="entry-title">{entry_title}</h2></header>' if entry_title else ""
    return (f"<html><head><title>{title} &#8211; {SITE}</title></head><body>{MASTHEAD}{header}<main id='main'>"
            f"<article class='post'>{inner}<div class='entry-content'>{content}<p>{LONG}</p></div></article></main></body></html>")


@pytest.mark.parametrize("note", ["<h2>Update 2019-08-01</h2><p>There is a new version.</p>",
                                  "<p><strong>Update 28 Dec 2013:</strong> fixed the link.</p>"])
def test_a_dated_update_note_in_the_article_is_not_its_publish_date(note):
    page = wordpress_page("A small library", note, heading="A small library")
    post = extract_post(f"http://{HOST}/2012/03/27/a-small-library/", page, site=SiteParts(names=frozenset({"wp test"})))
    assert post.published == "2012-03-27T00:00:00Z"


def test_an_inner_h1_does_not_cut_the_title_the_page_heading_and_title_agree_on():
    title = "bravialib &#8211; a Python library to abstract the Bravia web API"
    page = wordpress_page(title, "<h1>bravialib</h1><p>What it does.</p><h2>Install</h2>", heading=title)
    post = extract_post(f"http://{HOST}/2016/01/02/bravialib/", page, site=SiteParts(names=frozenset({"wp test"})))
    assert post.title == "bravialib – a Python library to abstract the Bravia web API"


def test_a_title_the_heading_spells_out_whole_keeps_its_last_part():
    title = "Deep Learning and Its Applications - Research Seminar at HSMC"
    page = (f"<html><head><title>{title}</title><meta property='og:title' content='{title}'>"
            f"<meta name='twitter:title' content='{title}'></head><body>"
            f"<article><h2 class='article-title'>{title}</h2><p>{LONG}</p></article></body></html>")
    assert extract_post(f"http://{HOST}/2017/07/21/talk.html", page).title == title


def test_a_time_s_datetime_with_its_zone_beats_the_day_its_content_gives():
    page = (f"<html><head><title>Tools</title></head><body><article><h1>Tools</h1><p class='post-meta'>发表于 "
            f"<time itemprop='dateCreated' datetime='2016-03-24T22:26:14+08:00' content='2016-03-24'>2016-03-24</time></p>"
            f"<p>{LONG}</p></article></body></html>")
    assert extract_post(f"http://{HOST}/2016/03/24/tools/", page).published == "2016-03-24T14:26:14Z"


def test_a_captured_feed_s_item_with_no_link_is_no_page_s_entry_on_the_next_run(tmp_path):
    db = archive.open_archive(tmp_path / "a.db")
    feed = f"http://{HOST}/feed.xml"
    body = LINKLESS.replace("<channel>", f"<channel><item><title>Linked</title><link>http://{HOST}/notes/9/</link></item>", 1)
    save_capture(db, url=feed, status=200, headers={}, body=body.encode())
    plan = SourcePlan(db=db, mode="incremental", resume=False, posts={}, pages={}, feeds=[feed])
    # read while the feed answered 304, its entries come from the capture: the linkless ones are no page's
    entry = plan.cached_entry(f"http://{HOST}/notes/9/", normalize_url, SectionStats(), f"http://{HOST}/")
    assert entry is not None and entry["title"] == "Linked"
