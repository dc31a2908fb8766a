"""One post at two URLs of one blog is one post with an alias, whatever the URL shapes (issue 48).

tests/test_post_identity.py serves a byte-for-byte copy of a post's page at ``/post/post/``; the real
copies that stayed second posts in real crawls were not byte-for-byte copies:

- Hexo renders a copy of a post's Markdown left in its asset folder as a post of its own, one folder
  deeper (``/Y/M/D/slug/slug/``), with the same title, date and body, in the feed and on the listing
  beside the original, and with its own neighbours: the "previous" and "next" links at the foot of its
  article name other posts than the original's, so the two extracted texts differ by those lines.
- A link with a query string the server ignores (``/post/a/?from=home``): the same page at a URL
  whose path is as long as the post's own, so "the shorter path" did not decide which is the post's
  and the URL saved first stayed the post's.

Which URL is the post's own: the one a feed lists (the post has the feed's guid) before one no
feed lists, then the shorter path, then the URL without a query string (or the shorter query), then
the URL that sorts first: never the order in which the pages answered (``archive.core.copies.outranks``).
"""

from pathlib import Path

from blogsite import RouteServer, html_page, text_page, xml_page
from conftest import rows, run_cli
from test_post_identity import Late

HOST = "hexo.test"
BODY = ("<p>Hexo keeps a post's images in a folder named after the post, beside its Markdown file. "
        "When that folder holds a copy of the Markdown file itself, Hexo renders the copy as a second post, "
        "one folder deeper, with the same title, date and text.</p>"
        "<p>A reader of the blog sees the same post twice on the listing, and a feed reader gets it twice. "
        "An archive of the blog should keep it once, with the second address as an alias.</p>")
POSTS = [(f"2024/0{n}/0{n}/note-{n}", f"Note {n} on generators", f"2024-0{n}-0{n}") for n in range(1, 6)]
COPY = ("2024/02/02/note-2/note-2", "Note 2 on generators", "2024-02-02")  # Hexo's copy of note 2


def body(n: str) -> str:
    return BODY + f"<p>This is the note called {n}, and what it says is its own: {n} in particular.</p>"


def page(post: tuple[str, str, str], prev: tuple | None, nxt: tuple | None) -> str:
    path, title, day = post
    nav = "".join(f"<a href='/{p[0]}/' rel='{rel}'>{p[1]}</a>" for p, rel in ((prev, "prev"), (nxt, "next")) if p)
    return (f"<html><head><title>{title} | Hexo notes</title><meta property='og:type' content='article'>"
            f"<link rel='alternate' type='application/atom+xml' href='/atom.xml'></head><body>"
            f"<header><a href='/'>Hexo notes</a></header><main><article class='post'>"
            f"<header><h1 class='post-title'>{title}</h1><time datetime='{day}T08:00:00+08:00'>{day}</time></header>"
            f"<div class='post-body'>{body(title)}</div>"
            f"<footer class='post-footer'><div class='post-nav'>{nav}</div></footer></article></main>"
            f"<footer>© 2024 Hexo notes</footer></body></html>")


def hexo_routes() -> dict:
    # Hexo sorts by date, the copy right beside note 2: each has its own neighbours
    ordered = [POSTS[0], POSTS[1], COPY, *POSTS[2:]]
    pages = {f"/{p[0]}/": html_page(page(p, ordered[i - 1] if i else None, ordered[i + 1] if i + 1 < len(ordered) else None))
             for i, p in enumerate(ordered)}
    entries = "".join(
        f"<entry><title>{t}</title><link href='http://{HOST}/{p}/'/><id>http://{HOST}/{p}/</id>"
        f"<published>{d}T00:00:00Z</published><updated>{d}T00:00:00Z</updated>"
        f"<content type='html'><![CDATA[{body(t)}]]></content></entry>" for p, t, d in reversed(ordered))
    items = "".join(f"<li><a href='/{p}/'>{t}</a> <time>{d}</time></li>" for p, t, d in reversed(ordered))
    return {
        "/": html_page(f"<html><head><title>Hexo notes</title><link rel='alternate' type='application/atom+xml' "
                       f"href='/atom.xml'></head><body><header><a href='/'>Hexo notes</a></header>"
                       f"<main><ul>{items}</ul></main></body></html>"),
        "/atom.xml": xml_page("<?xml version='1.0' encoding='utf-8'?><feed xmlns='http://www.w3.org/2005/Atom'>"
                              f"<title>Hexo notes</title><id>http://{HOST}/</id><updated>2024-05-05T00:00:00Z</updated>"
                              f"{entries}</feed>", "application/atom+xml"),
        "/robots.txt": text_page("User-agent: *\nAllow: /\n"),
        **pages,
    }


def archived(db: Path) -> dict:
    return {
        "posts": {r["url"]: r["title"] for r in rows(db, "select url, title from posts")},
        "aliases": {(r["alias"], r["url"], r["why"]) for r in rows(
            db, "select a.alias, p.url, a.why from post_aliases a join posts p on p.id = a.post_id")},
    }


def test_a_generators_copy_one_folder_deeper_with_its_own_neighbours_is_an_alias(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    with RouteServer(hexo_routes()) as server:  # the default politeness: no --delay
        run_cli("crawl", f"http://{HOST}/", "--db", str(db), "--map-host", f"{HOST}={server.base}", timeout=600)
    got = archived(db)
    assert got["posts"] == {f"http://{HOST}/{p}/": t for p, t, _ in POSTS}
    assert (f"http://{HOST}/{COPY[0]}/", f"http://{HOST}/{POSTS[1][0]}/", "the same text") in got["aliases"]


def query_routes(late: str) -> dict:
    """A blog whose home page links post 1 with a query string its server ignores; ``late``: the URL
    of the two that answers after the other was saved."""
    routes = hexo_routes()
    routes = {k: v for k, v in routes.items() if COPY[0] not in k}
    original = routes[f"/{POSTS[0][0]}/"]
    gate = Late(original)
    first, second = (f"/{POSTS[0][0]}/?from=home", f"/{POSTS[0][0]}/") if late == "post" else \
        (f"/{POSTS[0][0]}/", f"/{POSTS[0][0]}/?from=home")
    routes[first], routes[second] = gate.first(original), gate
    home = routes["/"].body.decode().replace(f"href='/{POSTS[0][0]}/'", f"href='/{POSTS[0][0]}/?from=home'")
    routes["/"] = html_page(home)
    # the feed holds the newest four: note 1 is in no feed, its plain URL only in note 2's "previous" link
    feed = routes["/atom.xml"].body.decode()
    start = feed.index(f"<entry><title>{POSTS[0][1]}")
    routes["/atom.xml"] = xml_page(feed[:start] + feed[feed.index("</entry>", start) + len("</entry>"):],
                                   "application/atom+xml")
    return routes


def test_a_query_string_the_server_ignores_is_an_alias_whichever_answers_first(tmp_path: Path) -> None:
    results = []
    for late in ("post", "query"):
        db = tmp_path / f"{late}.db"
        with RouteServer(query_routes(late)) as server:
            run_cli("crawl", f"http://{HOST}/", "--db", str(db), "--map-host", f"{HOST}={server.base}",
                    "--delay", "0", timeout=600)
        results.append(archived(db))
    query_first, post_first = results
    assert query_first == post_first
    assert set(post_first["posts"]) == {f"http://{HOST}/{p}/" for p, _, _ in POSTS}
    assert (f"http://{HOST}/{POSTS[0][0]}/?from=home", f"http://{HOST}/{POSTS[0][0]}/", "the same text") \
        in post_first["aliases"]


SHORT = "A line or two: the generator copied this note too."


def short_routes() -> dict:
    """Notes of a line (no text_key of their own), one copied one folder deeper, and two stubs of the
    same words and day under other titles, which stay two posts."""
    notes = [("notes/n1", "First note", "2024-03-01", SHORT), ("notes/notes/n1", "First note", "2024-03-01", SHORT),
             ("notes/s1", "Stub one", "2024-03-02", "Coming soon."), ("notes/s2", "Stub two", "2024-03-02", "Coming soon.")]
    pages = {f"/{p}/": html_page(f"<html><head><title>{t} | Notes</title><meta property='og:type' content='article'>"
                                 f"</head><body><header><a href='/'>Notes</a></header><article><h1>{t}</h1>"
                                 f"<time datetime='{d}'>{d}</time><p>{x}</p></article></body></html>")
             for p, t, d, x in notes}
    urls = "".join(f"<url><loc>http://{HOST}/{p}/</loc></url>" for p, *_ in notes)
    items = "".join(f"<li><a href='/{p}/'>{t}</a> <time>{d}</time></li>" for p, t, d, _ in notes)
    return {
        "/": html_page(f"<html><head><title>Notes</title></head><body><main><ul>{items}</ul></main></body></html>"),
        "/sitemap.xml": xml_page("<?xml version='1.0'?><urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
                                 f"{urls}</urlset>"),
        "/robots.txt": text_page(f"Sitemap: http://{HOST}/sitemap.xml\n"),
        **pages,
    }


def test_a_short_note_at_two_urls_is_one_post_and_stubs_of_other_titles_stay_apart(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    with RouteServer(short_routes()) as server:
        run_cli("crawl", f"http://{HOST}/", "--db", str(db), "--map-host", f"{HOST}={server.base}", "--delay", "0",
                timeout=600)
    got = archived(db)
    assert set(got["posts"]) == {f"http://{HOST}/notes/{n}/" for n in ("n1", "s1", "s2")}
    assert (f"http://{HOST}/notes/notes/n1/", f"http://{HOST}/notes/n1/", "the same text") in got["aliases"]
