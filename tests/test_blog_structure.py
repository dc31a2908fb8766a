"""Post or not by what the blog's own pages say of each other (issue 48), crawled end to end.

Two blogs written as real generators and themes write them, served on 127.0.0.1:

- a static export of a client framework (as Nuxt's): no feed, no sitemap, its articles under
  ``/articles/SLUG/`` with no date, no ``og:type`` and no JSON-LD, its home page a list of them,
  each with its date; one article points to another with a lone "Read more", one to another site;
- a theme that calls every page an article (``og:type article`` and a ``BlogPosting`` with its
  ``datePublished`` on the home page and its listings too, as Hugo's and Hexo Icarus' do), whose
  feed lists its three newest posts and, as Hugo's does, its site pages with the zero date
  ``Mon, 01 Jan 0001`` (resume, plan, projects, guest book); its ``/all-archives/`` and
  ``/all-tags/`` pages list the posts.

The verdicts (``pages.kind``, ``pages.reason``) and the archives are the same whatever order the
pages answer in.
"""

import time
from pathlib import Path

import pytest
from conftest import ShuffledHandler, StaticServer, rows, run_cli

ARTICLE = "".join(f"<p>Paragraph {i} of the article, which says what it has to say at some length.</p>" for i in range(6))


def write(root: Path, path: str, text: str) -> None:
    target = root / path.strip("/") / "index.html" if path.endswith("/") else root / path.strip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


# -- a static export of a client framework: the home page's dated list is all it has ----------------

NUXT_ARTICLES = [(f"note-{i}", f"Field note number {i}", f"Mar {i + 1}, 2024") for i in range(6)]


def nuxt_blog(root: Path) -> None:
    items = "".join(f'<li class="item"><a href="/articles/{slug}/">{title}</a> <span class="date">{day}</span></li>'
                    for slug, title, day in NUXT_ARTICLES)
    write(root, "/", f'<html lang="en"><head><title>Notes</title></head><body><div id="__nuxt"><header>'
                     f'<a href="/">Notes</a> <a href="/about/">About</a></header><main><h1>All notes</h1>'
                     f'<ul>{items}</ul></main></div><script>window.__NUXT__={{}}</script></body></html>')
    write(root, "/about/", '<html lang="en"><head><title>About</title></head><body><main><h1>About</h1>'
                           '<p>Who writes these notes, and why.</p></main></body></html>')
    for i, (slug, title, _) in enumerate(NUXT_ARTICLES):
        more = {0: '<p><a href="/articles/note-1/">Read more</a></p>',
                1: '<p><a href="https://elsewhere.example/essay">Read more</a></p>'}.get(i, "")
        write(root, f"/articles/{slug}/", f'<html lang="en"><head><title>{title} - Notes</title></head><body>'
                                          f'<div id="__nuxt"><header><a href="/">Notes</a></header><main><article>'
                                          f'<h1>{title}</h1>{ARTICLE}{more}</article></main></div>'
                                          f'<script>window.__NUXT__={{}}</script></body></html>')


@pytest.mark.slow
def test_a_feedless_export_s_articles_are_posts_by_its_home_page_s_dated_list(tmp_path):
    site, db = tmp_path / "site", tmp_path / "a.db"
    nuxt_blog(site)
    with StaticServer(site) as server:
        run_cli("crawl", "http://notes.test/", "--db", str(db), "--map-host", f"notes.test={server.base}",
                "--delay", "0", "--media", "off")
    posts = {p["url"]: p for p in rows(db, "select url, title from posts")}
    assert set(posts) == {f"http://notes.test/articles/{slug}/" for slug, _, _ in NUXT_ARTICLES}
    pages = {p["url"]: p for p in rows(db, "select url, kind, reason from pages")}
    assert pages["http://notes.test/articles/note-2/"]["reason"] == "an entry of a listing of the blog, with its date"
    # a lone "Read more" to another article, or to another site, is a pointer, not a listing's teaser
    assert pages["http://notes.test/articles/note-0/"]["kind"] == "post"
    assert pages["http://notes.test/articles/note-1/"]["kind"] == "post"
    assert pages["http://notes.test/about/"]["kind"] == "page"


# -- a theme that calls every page an article -----------------------------------------------------

POSTS = [(f"post-{i}", f"Post number {i}", f"2024-0{i + 1}-1{i}") for i in range(7)]
SITE_PAGES = {"resume": "Resume", "plan": "Plan", "projects": "Projects", "guestbook": "Guest book"}
LISTINGS = ("all-archives", "all-tags")


def marked(title: str, body: str, published: str) -> str:
    """A page as the theme writes every page: og:type article, a BlogPosting dated ``published``."""
    ld = ('{"@context": "https://schema.org", "@type": "BlogPosting", "headline": "%s", "datePublished": "%sT10:00:00+00:00"}'
          % (title, published))
    return (f'<html lang="en"><head><title>{title} | Marked</title><meta property="og:type" content="article">'
            f'<meta property="og:site_name" content="Marked"><script type="application/ld+json">{ld}</script>'
            f'<link rel="alternate" type="application/rss+xml" href="/index.xml"></head><body><header><nav>'
            + "".join(f'<a href="/{name}/">{label}</a> ' for name, label in SITE_PAGES.items())
            + "".join(f'<a href="/{name}/">{name}</a> ' for name in LISTINGS)
            + f"</nav></header><main>{body}</main></body></html>")


def marked_blog(root: Path) -> None:
    build = "2024-09-01"  # the date the theme stamps on every page that has none of its own
    entries = "".join(f'<li><span>{day}</span> <a href="/posts/{slug}/">{title}</a></li>' for slug, title, day in POSTS)
    write(root, "/", marked("Marked", f"<h1>Marked</h1><ul>{entries}</ul>", build))
    for name in LISTINGS:
        write(root, f"/{name}/", marked(name, f"<h1>{name}</h1><ul>{entries}</ul>", build))
    for name, label in SITE_PAGES.items():
        write(root, f"/{name}/", marked(label, f"<article><h1>{label}</h1>{ARTICLE}</article>", build))
    for slug, title, day in POSTS:
        write(root, f"/posts/{slug}/", marked(title, f'<article><h1>{title}</h1><p class="meta">Posted on {day}</p>'
                                                     f"{ARTICLE}</article>", day))
    items = "".join(f"<item><title>{title}</title><link>http://marked.test/posts/{slug}/</link>"
                    f"<pubDate>{time.strftime('%a, %d %b %Y', time.strptime(day, '%Y-%m-%d'))} 10:00:00 +0000</pubDate></item>"
                    for slug, title, day in POSTS[-3:])
    # Hugo's site feed: every regular page, an undated one with the zero date
    items += "".join(f"<item><title>{label}</title><link>http://marked.test/{name}/</link>"
                     f"<pubDate>Mon, 01 Jan 0001 00:00:00 +0000</pubDate></item>" for name, label in SITE_PAGES.items())
    write(root, "/index.xml", f'<?xml version="1.0"?><rss version="2.0"><channel><title>Marked</title>'
                              f"<link>http://marked.test/</link>{items}</channel></rss>")


def crawl_marked(tmp_path: Path, seed: str, *options: str) -> tuple[list[dict], list[dict]]:
    site, db = tmp_path / "site", tmp_path / f"{seed}.db"
    if not site.exists():
        marked_blog(site)
    ShuffledHandler.seed = seed
    with StaticServer(site, ShuffledHandler) as server:
        run_cli("crawl", "http://marked.test/", "--db", str(db), "--map-host", f"marked.test={server.base}",
                "--media", "off", *options, timeout=200)
    return (rows(db, "select url, title, published from posts order by url"),
            rows(db, "select url, kind, reason from pages order by url"))


@pytest.mark.slow
def test_marks_every_page_carries_are_the_theme_s_and_a_feed_s_undated_loners_are_site_pages(tmp_path):
    posts, pages = crawl_marked(tmp_path, "first")  # at the default delay, as users run it
    assert [p["url"] for p in posts] == [f"http://marked.test/posts/{slug}/" for slug, _, _ in POSTS]
    assert [p["published"][:10] for p in posts] == [day for _, _, day in POSTS]
    kinds = {p["url"]: (p["kind"], p["reason"]) for p in pages}
    for name in SITE_PAGES:
        kind, reason = kinds[f"http://marked.test/{name}/"]
        assert kind == "page", (name, reason)
    assert "its feed entry, undated in a URL shape of no dated entry, is a site page's" in kinds["http://marked.test/plan/"][1]
    for name in LISTINGS:
        assert kinds[f"http://marked.test/{name}/"][0] in ("listing", "page"), name
    # another order of answers, the same verdicts and the same archive
    posts_again, pages_again = crawl_marked(tmp_path, "second", "--delay", "0", "--concurrency", "8")
    assert posts_again == posts
    assert pages_again == pages
