"""A blog under a path of a host it shares: its scope is its folder, its declared feed is
fetched even outside it, and a WordPress feed is read page after page with ?paged=N."""

import sqlite3
from urllib.parse import urlsplit

from blogsite import RouteServer, html_page, xml_page
from conftest import crawl_args, run_cli

HOST = "shared.test"
POSTS = {n: f"Post number {n} of the blog under a path" for n in range(1, 8)}


def post_page(n: int) -> str:
    return f"""<html lang="en"><head><title>{POSTS[n]}</title>
      <meta property="og:type" content="article"><meta property="og:title" content="{POSTS[n]}">
      <meta property="article:published_time" content="2024-0{n}-0{n}T10:00:00+00:00"></head>
      <body><article><h1>{POSTS[n]}</h1>
      <p>{' '.join(f'This is sentence {i} of post {n}, long enough to be an article.' for i in range(12))}</p>
      <p><a href="/shop/item-{n}">Buy the thing mentioned in post {n}</a> <a href="/blog/">Back</a></p>
      </article></body></html>"""


def feed(numbers: list[int]) -> str:
    items = "".join(
        f"<item><title>{POSTS[n]}</title><link>http://{HOST}/blog/{n}/</link><guid isPermaLink=\"false\">post-{n}</guid>"
        f"<pubDate>Mon, 0{n} Jan 2024 10:00:00 +0000</pubDate></item>"
        for n in numbers
    )
    return (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Shared</title>'
        f"<link>http://{HOST}/blog/</link><generator>https://wordpress.org/?v=6.5</generator>{items}</channel></rss>"
    )


def routes() -> dict:
    home = "".join(f'<li><a href="/blog/{n}/">{POSTS[n]}</a></li>' for n in (7, 6))
    table = {
        "/blog/": html_page(
            f'<html><head><title>Shared blog</title><link rel="alternate" type="application/rss+xml" '
            f'href="/feeds/blog.xml"></head><body><ul>{home}</ul><a href="/shop/">Shop</a> '
            f'<a href="/">Company home</a></body></html>'
        ),
        # WordPress: newest three, then ?paged=2 and ?paged=3 for the older ones
        "/feeds/blog.xml": xml_page(feed([7, 6, 5])),
        "/feeds/blog.xml?paged=2": xml_page(feed([4, 3, 2])),
        "/feeds/blog.xml?paged=3": xml_page(feed([1])),
        "/": html_page('<html><body><a href="/shop/">Shop</a><a href="/blog/">Blog</a></body></html>'),
        "/shop/": html_page('<html><body><a href="/shop/item-1">Item</a></body></html>'),
    }
    table.update({f"/blog/{n}/": html_page(post_page(n)) for n in POSTS})
    return table


def test_scope_is_the_blogs_folder_and_paged_feeds_are_followed(tmp_path):
    db = tmp_path / "scope.db"
    with RouteServer(routes()) as server:
        run_cli(*crawl_args(f"http://{HOST}/blog/", db, {HOST: server.base}))
        requested = server.paths()
    conn = sqlite3.connect(db)
    urls = sorted(urlsplit(u).path for (u,) in conn.execute("select url from posts"))
    guids = {g for (g,) in conn.execute("select guid from posts")}
    conn.close()
    assert urls == [f"/blog/{n}/" for n in sorted(POSTS)]
    assert guids == {f"post-{n}" for n in POSTS}  # every post came through a feed page
    assert "/feeds/blog.xml" in requested  # declared by the blog, though outside its folder
    assert not [p for p in requested if p == "/" or p.startswith("/shop")]
