"""One post is one post, and a page is not a post: crawls of small blogs served on 127.0.0.1.

- A site page that a theme marks up as an article (``og:type`` article, JSON-LD ``BlogPosting``),
  with no date but a theme's zero date (Hugo writes ``0001-01-01`` for an undated page), in no
  feed, linked from the home page's welcome sentence and not from any list of posts, is a page.
  An undated post that a listing shows as one of its entries stays a post.
- The same text at a second URL of the blog (a static generator's copy of a post in an asset
  folder, ``/post/post/``) is one post with an alias, whichever copy is fetched first, and on a
  later run too.
"""

import hashlib
import re
import threading
import time
import tracemalloc
import unicodedata
from pathlib import Path

from blogsite import RouteServer, html_page, text_page, xml_page
from conftest import crawl_args, rows, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from archive.core import copies

HOST = "identity.test"
LONG = " ".join(["A sentence of the post that says something worth reading about the topic."] * 12)
POSTS = [(f"2024/0{n}/post-{n}", f"Post number {n}", f"2024-0{n}-0{n}") for n in range(1, 7)]
ZERO = "0001-01-01T00:00:00Z"  # Hugo's date of an undated page
WELCOME = ("Hello, I am Jane, and this is where I write about the systems I build and the books I read. "
           "There is more <a href='/about/'>about me</a> and <a href='/colophon/'>how this site is made</a>.")


def post_page(title: str, day: str, text: str = LONG) -> str:
    return (f"<html><head><title>{title} | Identity</title><meta property='og:type' content='article'></head><body>"
            f"<header><a href='/'>Identity</a><nav><a href='/about/'>About</a></nav></header><article><h1>{title}</h1>"
            f"<p class='meta'>Posted on {day}</p><p>{text}</p></article></body></html>")


def themed_page(title: str, text: str) -> str:
    """A page of a theme that marks every page an article and dates it, with a zero date when it has none."""
    ld = f'{{"@type": "BlogPosting", "headline": "{title}", "datePublished": "{ZERO}", "dateModified": "{ZERO}"}}'
    return (f"<html><head><title>{title} | Identity</title><meta property='og:type' content='article'>"
            f"<meta property='article:published_time' content='{ZERO}'>"
            f"<script type='application/ld+json'>{ld}</script></head><body>"
            f"<header><a href='/'>Identity</a><nav><a href='/about/'>About</a></nav></header>"
            f"<article><h1>{title}</h1><p>{text}</p></article></body></html>")


def feed(posts: list[tuple[str, str, str]]) -> str:
    entries = "".join(
        f"<entry><title>{title}</title><link href='http://{HOST}/{path}/'/><id>http://{HOST}/{path}/</id>"
        f"<published>{day}T08:00:00Z</published><updated>{day}T08:00:00Z</updated></entry>"
        for path, title, day in posts)
    return ("<?xml version='1.0' encoding='utf-8'?><feed xmlns='http://www.w3.org/2005/Atom'><title>Identity</title>"
            f"<id>http://{HOST}/</id><updated>2024-06-06T00:00:00Z</updated>{entries}</feed>")


def listing(title: str, links: list[tuple[str, str]], intro: str = "") -> str:
    items = "".join(f"<li><a href='/{path}/'>{text}</a></li>" for path, text in links)
    return (f"<html><head><title>{title}</title><link rel='alternate' type='application/atom+xml' href='/feed.xml'>"
            f"</head><body><header><a href='/'>Identity</a><nav><a href='/about/'>About</a></nav></header>"
            f"<main>{intro}<ul>{items}</ul></main></body></html>")


def test_a_site_page_with_a_zero_date_or_a_link_in_a_sentence_is_not_a_post(tmp_path: Path) -> None:
    note = ("notes/undated", "An undated note")
    every = [f"/{p}/" for p, _, _ in POSTS] + ["/about/", "/colophon/", f"/{note[0]}/"]
    sitemap = "".join(f"<url><loc>http://{HOST}{path}</loc></url>" for path in every)
    routes = {
        "/": html_page(listing("Identity", [(p, t) for p, t, _ in POSTS] + [("archive", "Archive")], f"<p>{WELCOME}</p>")),
        "/feed.xml": xml_page(feed(POSTS), "application/atom+xml"),
        "/archive/": html_page(listing("Archive | Identity", [(p, t) for p, t, _ in POSTS] + [note])),
        "/about/": html_page(themed_page("About me", "I am Jane. " + LONG)),
        "/colophon/": html_page(themed_page("How this site is made", "It is built with a generator. " + LONG)),
        # a post with no date at all, in no feed: the archive's list shows it among the posts
        f"/{note[0]}/": html_page(themed_page(note[1], "A note without a date. " + LONG)),
        "/sitemap.xml": xml_page("<?xml version='1.0'?><urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
                                 f"{sitemap}</urlset>"),
        "/robots.txt": text_page(f"Sitemap: http://{HOST}/sitemap.xml\n"),
        **{f"/{p}/": html_page(post_page(t, d)) for p, t, d in POSTS},
    }
    db = tmp_path / "archive.db"
    with RouteServer(routes) as server:
        run_cli(*crawl_args(f"http://{HOST}/", db, {HOST: server.base}))
    judged = {r["url"]: (r["kind"], r["reason"]) for r in rows(db, "select url, kind, reason from pages")}
    assert judged[f"http://{HOST}/about/"] == ("page", "a site page (/about/)")
    assert judged[f"http://{HOST}/colophon/"] == ("page", "in no feed and no listing, and no date")
    posts = {r["url"]: r for r in rows(db, "select url, title, published from posts")}
    assert set(posts) == {f"http://{HOST}/{p}/" for p, _, _ in POSTS} | {f"http://{HOST}/{note[0]}/"}
    assert posts[f"http://{HOST}/{note[0]}/"]["published"] is None


COPY = "2024/01/post-1/post-1"  # the generator's asset folder of post 1 holds a copy of its page
STUBS = [("2024/07/stub-a", "Stub A", "2024-07-01"), ("2024/07/stub-b", "Stub B", "2024-07-02")]


class Late:
    """A route that answers only after another was asked for, and ``seconds`` more: the other
    page is fetched, extracted and saved first."""

    def __init__(self, page, seconds: float = 1.5):
        self.page, self.seconds = page, seconds
        self.before = threading.Event()
        self.answered: dict[str, float] = {}  # "first" and "late": when each answered

    def first(self, page):
        def route(path: str, query: str):
            self.before.set()
            self.answered["first"] = time.monotonic()
            return page
        return route

    def __call__(self, path: str, query: str):
        self.before.wait(60)
        time.sleep(self.seconds)
        self.answered["late"] = time.monotonic()
        return self.page


def copies_routes(*, copy: bool, late: str | None = None) -> dict:
    """The blog; with ``copy``, the sitemap lists the asset folder's copy of post 1 too; ``late``:
    ``"copy"`` or ``"post"``, the one of the two that answers after the other was saved."""
    posts = POSTS + STUBS
    pages = {f"/{p}/": html_page(post_page(t, d)) for p, t, d in POSTS}
    # two stubs of the same few words: two posts, however alike
    pages |= {f"/{p}/": html_page(post_page(t, d, "Coming soon.")) for p, t, d in STUBS}
    urls = [f"/{p}/" for p, _, _ in posts] + ([f"/{COPY}/"] if copy else [])
    sitemap = "".join(f"<url><loc>http://{HOST}{path}</loc></url>" for path in urls)
    routes = {
        "/": html_page(listing("Identity", [(p, t) for p, t, _ in posts])),
        "/feed.xml": xml_page(feed(posts), "application/atom+xml"),
        "/sitemap.xml": xml_page("<?xml version='1.0'?><urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
                                 f"{sitemap}</urlset>"),
        "/robots.txt": text_page(f"Sitemap: http://{HOST}/sitemap.xml\n"),
        **pages,
    }
    if copy:
        original = pages[f"/{POSTS[0][0]}/"]
        routes[f"/{COPY}/"] = original
        if late:
            gate = routes["gate"] = Late(original)
            routes[f"/{POSTS[0][0]}/"], routes[f"/{COPY}/"] = (gate, gate.first(original)) if late == "post" \
                else (gate.first(original), gate)
    return routes


def archived(db: Path) -> dict:
    """What a reader of the archive finds: the posts, and the aliases of each."""
    posts = {r["url"]: (r["title"], r["published"]) for r in rows(db, "select url, title, published from posts")}
    aliases = {(r["alias"], r["url"], r["why"]) for r in rows(
        db, "select a.alias, p.url, a.why from post_aliases a join posts p on p.id = a.post_id")}
    versions = {(r["url"], r["change"], r["title"], r["published"]) for r in rows(
        db, "select p.url, v.change, v.title, v.published from post_versions v join posts p on p.id = v.post_id")}
    return {"posts": posts, "aliases": aliases, "versions": versions}


def test_a_copy_of_a_post_at_a_second_url_is_an_alias_whichever_is_fetched_first(tmp_path: Path) -> None:
    results = []
    for late in ("post", "copy"):
        db = tmp_path / f"{late}.db"
        routes = copies_routes(copy=True, late=late)
        gate = routes.pop("gate")
        with RouteServer(routes) as server:
            run_cli(*crawl_args(f"http://{HOST}/", db, {HOST: server.base}))
        assert gate.answered["first"] + gate.seconds <= gate.answered["late"]
        results.append(archived(db))
        judged = {r["url"]: r["kind"] for r in rows(db, "select url, kind from pages")}
        assert judged[f"http://{HOST}/{COPY}/"] == "alias" and judged[f"http://{HOST}/{POSTS[0][0]}/"] == "post"
    copy_first, post_first = results
    assert copy_first == post_first
    assert set(post_first["posts"]) == {f"http://{HOST}/{p}/" for p, _, _ in POSTS + STUBS}
    assert post_first["posts"][f"http://{HOST}/{POSTS[0][0]}/"] == ("Post number 1", "2024-01-01T08:00:00Z")
    assert (f"http://{HOST}/{COPY}/", f"http://{HOST}/{POSTS[0][0]}/", "the same text") in post_first["aliases"]


def test_a_copy_found_on_a_later_run_joins_the_post(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    with RouteServer(copies_routes(copy=False)) as server:
        run_cli(*crawl_args(f"http://{HOST}/", db, {HOST: server.base}))
    before = archived(db)
    with RouteServer(copies_routes(copy=True)) as server:
        run_cli(*crawl_args(f"http://{HOST}/", db, {HOST: server.base}))
        assert f"/{COPY}/" in server.paths()
    after = archived(db)
    assert after["posts"] == before["posts"]
    assert after["aliases"] == before["aliases"] | {(f"http://{HOST}/{COPY}/", f"http://{HOST}/{POSTS[0][0]}/", "the same text")}
    assert after["versions"] == before["versions"]


def test_undated_posts_on_a_pagination_whose_canonical_is_the_home_page_are_posts(tmp_path: Path) -> None:
    """A theme that names the home page canonical on each page of its pagination: each page still
    lists its own posts, and undated posts outside the feed that only those pages list are posts."""
    dated = [(f"post/dated-{n}", f"A dated post numbered {n}", f"2024-0{n}-0{n}") for n in range(1, 3)]
    undated = [(f"post/note-{n}", f"A note numbered {n}") for n in range(1, 5)]

    def page(links: list[tuple[str, str]], next_page: str | None) -> str:
        more = f"<a href='{next_page}'>Older posts</a>" if next_page else ""
        return listing("Identity", links, "").replace(
            "</head>", f"<link rel='canonical' href='http://{HOST}/'></head>").replace("</main>", f"{more}</main>")

    def note_page(title: str) -> str:
        return (f"<html><head><title>{title} | Identity</title></head><body><header><a href='/'>Identity</a></header>"
                f"<article><h1>{title}</h1><p>{LONG}</p></article></body></html>")

    routes = {
        "/": html_page(page([(p, t) for p, t, _ in dated], "/page/2/")),
        "/page/2/": html_page(page(undated[:2], "/page/3/")),
        "/page/3/": html_page(page(undated[2:], None)),
        "/feed.xml": xml_page(feed(dated), "application/atom+xml"),
        **{f"/{p}/": html_page(post_page(t, d)) for p, t, d in dated},
        **{f"/{p}/": html_page(note_page(t)) for p, t in undated},
    }
    db = tmp_path / "archive.db"
    with RouteServer(routes) as server:
        run_cli(*crawl_args(f"http://{HOST}/", db, {HOST: server.base}))
    archived = {r["url"] for r in rows(db, "select url from posts")}
    assert archived == {f"http://{HOST}/{p}/" for p, _, _ in dated} | {f"http://{HOST}/{p}/" for p, _ in undated}
    judged = {r["url"]: r["kind"] for r in rows(db, "select url, kind from pages")}
    assert judged[f"http://{HOST}/page/2/"] == judged[f"http://{HOST}/page/3/"] == "listing"


# The text key of a post, as it was defined: NFKC, white space collapsed, stripped, hashed after the title.
def _reference_key(title: str, text: str) -> str | None:
    def normal(s: str) -> str:
        return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", s)).strip()

    if len(normal(text)) < copies.MIN_CHARS:
        return None
    return hashlib.sha256(f"{normal(title)}\n{normal(text)}".encode()).hexdigest()


@settings(max_examples=300, deadline=None)
@given(title=st.text(max_size=20), text=st.text(alphabet=st.sampled_from(["a", "é", "ﬁ", " ", "\n", "\u3000", "\t", "字"]),
                                                max_size=400), chunk=st.integers(1, 9))
def test_the_text_key_read_a_part_at_a_time_is_the_key_of_the_whole_text(title: str, text: str, chunk: int) -> None:
    original = copies.CHUNK
    copies.CHUNK = chunk  # parts of a few characters: runs of white space across every boundary
    try:
        assert copies.text_key(title, text) == _reference_key(title, text)
    finally:
        copies.CHUNK = original


def test_the_text_key_of_a_15_mb_post_holds_no_list_of_its_words() -> None:
    text = ("The archive keeps every paragraph of this long post.\n\n" * 300_000)[:15_000_000]
    tracemalloc.start()
    try:
        copies.text_key("A very long post", text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the whole text's white space replaced at once built a list of its words and spaces: 190 MB
    assert peak < 16 * 1024 * 1024, f"{peak / 2**20:.0f} MB"
