"""A string that is no URL is no link: never an error of a page, a post or a crawl.

Property tests (Hypothesis) over the URL functions and the parsers that read URLs from pages,
feeds, sitemaps, OPML lists and WARC files; then crawls of blogs served on 127.0.0.1 whose
links, image sources, feed links, guids, sitemap locations, canonical links, ``<base href>``,
redirects and meta refreshes are malformed URLs and the Big List of Naughty Strings
(``tests/naughty/``).
"""

import io
import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import pytest
from blogsite import RouteServer, html_page, redirect, text_page, xml_page
from conftest import crawl_args, free_port, run_cli
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from lxml import html as lxml_html
from scrapy import Request
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from archive.core.urls import host_of, is_http_url, normalize_url, parse_url, url_key
from archive.formats.opml import parse_opml
from archive.formats.warc import check_warc

from crawler.discover.feeds import FeedError, parse_feed
from crawler.discover.incremental import sitemap_entries
from crawler.extract.article_media import article_media, page_images
from crawler.extract.post import extract_post
from crawler.judge.pages import SectionStats, term_kind
from crawler.spiders.spill import SpillDict, SpillSet
from crawler.spiders.state import SourceState

NAUGHTY = json.loads((Path(__file__).parent / "naughty" / "blns.json").read_text(encoding="utf-8"))
# What the issue met on real and test blogs: a Hexo autolink of "http://ip:port", a bracket left open...
MALFORMED = ["http://ip:port", "http://[::1", "http://1.2.3.4:abc/x.png", "http://[::1]:99999/", "http://host:-1/",
             "https://[", "http://example.com:+80/", "http://a:65536/", "http://[v1.x]/", "http://ex ample.com/",
             "http://a\u2028b/", "//[::1/x", "http://host: 80/", "http://[:::1]/"]
BASES = ["http://blog.test/p/1/", "https://blog.test:8443/a/b.html?x=1", "http://[::1]:8080/", "http://127.0.0.1/"]

# URL-shaped text: schemes, hosts, ports and paths from the naughty list and the malformed forms,
# as well as any text at all.
_piece = st.one_of(st.sampled_from(NAUGHTY), st.text(max_size=12))
url_like = st.one_of(
    st.sampled_from(NAUGHTY + MALFORMED),
    st.text(),
    st.builds(lambda scheme, host, port, path: f"{scheme}{host}{port}{path}",
              st.sampled_from(["http://", "https://", "HTTP://", "//", "http:", "ftp://", ""]),
              st.one_of(st.sampled_from(["blog.test", "[::1]", "[::1", "127.0.0.1", "xn--", "bücher.de", ""]), _piece),
              st.one_of(st.sampled_from(["", ":", ":80", ":443", ":0", ":65535", ":65536", ":-1", ":+80", ":port"]),
                        _piece.map(lambda p: ":" + p)),
              st.one_of(st.sampled_from(["/", "/index.html", "/p/1/?utm_source=x#frag", ""]), _piece.map(lambda p: "/" + p))),
)


def _xml_text(text: str) -> str:
    """``text`` as XML 1.0 can hold it (no control characters, no lone surrogates)."""
    kept = "".join(c for c in text if c in "\t\n\r" or (" " <= c and not "\ud800" <= c <= "\udfff" and c not in "\ufffe\uffff"))
    return escape(kept)


# -- the URL functions ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", MALFORMED)
def test_a_malformed_url_is_no_link(text):
    assert parse_url(text) is None
    assert parse_url(text, "http://blog.test/p/1/") is None
    assert not is_http_url(text)
    host_of(text)  # answers, whatever it is


def test_no_link_is_counted():
    bad: list[str] = []
    assert parse_url("http://ip:port", on_bad=bad.append) is None
    assert parse_url("mailto:someone@example.com", on_bad=bad.append) is None  # another scheme: not a bad URL
    assert bad == ["http://ip:port"]


def test_an_ipv6_address_keeps_its_brackets():
    assert normalize_url("http://[::1]:8080/a") == "http://[::1]:8080/a"
    assert host_of("http://[::1]:8080/a") == "[::1]:8080"


@settings(max_examples=600, deadline=None)
@given(url_like, st.sampled_from(["", *BASES]))
@example("http://[::1]:8080/", "")
@example("http://ip:port", "http://blog.test/")
@example("HTTP://\u02d8", "")  # IDNA makes the breve " \u0306": its normal form would hold a space
def test_a_parsed_url_is_read_by_every_url_function(text, base):
    host_of(text)
    is_http_url(text)
    url = parse_url(text, base)
    if url is None:
        return
    normal = normalize_url(url)
    assert normalize_url(normal) == normal  # the canonical form is its own
    assert url_key(url) == url_key(normal)
    assert parse_url(normal) == normal
    assert host_of(normal) and is_http_url(normal)
    Request(url)  # Scrapy fetches it
    Request(normal)


@settings(max_examples=300, deadline=None)
@given(url_like)
def test_term_kind_reads_any_href(text):
    term_kind(text)


def _state() -> SourceState:
    return SourceState(id=1, url="http://blog.test/", scope="http://blog.test/", origin="http://blog.test",
                       aliases={"blog.test"}, bases={"http://127.0.0.1:9"}, max_pages=100, max_depth=10,
                       max_links=100, max_query_variants=10, sections=SectionStats(), seen=SpillSet(100),
                       parsed=SpillDict(100), entries=SpillDict(100), listed=SpillDict(100), dated_entries=SpillSet(100),
                       lacking=SpillDict(100), unsure=SpillDict(100))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(url_like, st.sampled_from(["utf-8", "gbk", "latin-1"]))
def test_the_spiders_links_are_urls_or_none(text, encoding):
    state = _state()
    for found in (state.link("http://blog.test/p/1/", text, encoding), state.own(text),
                  state.own(text, "http://blog.test/p/1/")):
        assert found is None or normalize_url(found) == found


def test_the_spider_counts_what_is_no_url():
    state = _state()
    for text in MALFORMED[:3]:
        assert state.link("http://blog.test/p/1/", text, "utf-8") is None
    assert state.own("mailto:a@b.c") is None
    assert (state.bad_urls, state.first_bad_url) == (3, MALFORMED[0])


@settings(max_examples=200, deadline=None)
@given(st.lists(url_like, min_size=1, max_size=6))
def test_a_pages_media_are_urls(srcs):
    tags = "".join(f"<img src={quoteattr(s)}><a href={quoteattr(s + '.pdf')}>f</a><video src={quoteattr(s)}></video>"
                   for s in srcs)
    root = lxml_html.fromstring(f"<html><head><meta property='og:image' content={quoteattr(srcs[0])}>"
                                f"</head><body><article>{tags}</article></body></html>".replace("\x00", ""))
    for url in [*page_images(root, "http://blog.test/p/1/"),
                *(m["url"] for m in article_media(root, "http://blog.test/p/1/", srcs[0].replace("\x00", "")))]:
        assert normalize_url(url)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(url_like, min_size=1, max_size=6))
@example(["http://[::1]:99999/", "https://["])
def test_the_extraction_reads_a_post_whatever_its_links(hrefs):
    # the body's links are weighed (a list of links off the site is text): a link that is no URL is none
    links = "".join(f"<li><a href={quoteattr(h)}>a link</a></li><img src={quoteattr(h)}>" for h in hrefs)
    text = " ".join(f"Sentence {i} of a post about the links below, long enough to be read." for i in range(12))
    page = (f"<html><head><title>Links</title><link rel='canonical' href={quoteattr(hrefs[0])}></head><body>"
            f"<article><h1>Links</h1><p>{text}</p><ul>{links}</ul></article></body></html>").replace("\x00", "")
    post = extract_post("http://blog.test/p/1/", page)
    assert post is not None and "Sentence 11" in post.text


@settings(max_examples=200, deadline=None)
@given(st.lists(url_like, min_size=1, max_size=5), url_like)
def test_feed_links_and_guids_that_are_no_url(links, guid):
    items = "".join(f"<item><title>t{i}</title><link>{_xml_text(link)}</link><guid>{_xml_text(guid)}</guid>"
                    f"<description>text {i}</description></item>" for i, link in enumerate(links))
    rss = (f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">'
           f'<channel><title>t</title><atom:link rel="next" href="{_xml_text(links[0])}"/>{items}</channel></rss>')
    atom = ('<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>'
            + "".join(f'<entry><title>t</title><link href="{_xml_text(link)}"/><id>{_xml_text(guid)}</id></entry>'
                      for link in links) + "</feed>")
    as_json = json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "t", "next_url": links[0],
                          "items": [{"id": guid, "url": link, "content_text": "x"} for link in links]}).encode()
    for body in (rss.encode(), atom.encode(), as_json):
        try:
            feed = parse_feed(body, "http://blog.test/feed.xml")
        except FeedError:
            continue
        for entry in feed["entries"]:
            assert entry["url"] is None or normalize_url(entry["url"])


@settings(max_examples=200, deadline=None)
@given(st.lists(url_like, min_size=1, max_size=6))
def test_sitemap_locations_that_are_no_url(locs):
    body = ('<?xml version="1.0" encoding="utf-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            + "".join(f"<url><loc>{_xml_text(loc)}</loc></url>" for loc in locs) + "</urlset>").encode()
    state = _state()
    for entry in sitemap_entries(body):
        url = state.own(entry["loc"])
        assert url is None or normalize_url(url) == url


def test_a_json_feed_link_that_is_not_text_is_no_link():
    body = json.dumps({"version": "https://jsonfeed.org/version/1.1", "next_url": {"a": 1},
                       "items": [{"id": "1", "url": 42, "content_text": "x"}]}).encode()
    feed = parse_feed(body, "http://blog.test/feed.json")
    assert feed["entries"][0]["url"] is None and feed["next"] == []


@settings(max_examples=200, deadline=None)
@given(st.lists(url_like, min_size=1, max_size=6))
def test_an_opml_list_of_urls_that_are_no_url(urls):
    outlines = "".join(f'<outline text="o{i}" xmlUrl={quoteattr(_xml_text(u))} htmlUrl={quoteattr(_xml_text(u))}/>'
                       for i, u in enumerate(urls))
    entries, _ = parse_opml(f'<opml version="2.0"><body>{outlines}</body></opml>'.encode())
    for entry in entries:  # the others are skipped, each with its reason (the second value)
        assert normalize_url(entry["url"])


def test_a_warc_record_whose_target_is_no_url_is_skipped(tmp_path):
    path = tmp_path / "bad.warc.gz"
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        for url in ("http://[::1/x", "http://blog.test/"):
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(b"<html>hi</html>"),
                                                          length=15, http_headers=headers))
    assert check_warc(str(path))["captures"] == 1


# -- crawls ----------------------------------------------------------------------------------------

HOST = "naughty.test"


def _post(n: int, extra: str = "", head: str = "") -> str:
    title = f"Post number {n} of the blog with naughty links"
    return f"""<html lang="en"><head><title>{title}</title>{head}
      <meta property="og:type" content="article"><meta property="og:title" content="{title}">
      <meta property="article:published_time" content="2024-03-{n:02d}T10:00:00+00:00"></head>
      <body><article><h1>{title}</h1>
      <p>{' '.join(f'This is sentence {i} of post {n}, long enough to be an article.' for i in range(12))}</p>
      <p>{extra}</p></article><a href="/">Home</a></body></html>"""


def _home(count: int, head: str = "", extra: str = "") -> str:
    items = "".join(f'<li><a href="/p/{n}/">Post {n}</a></li>' for n in range(1, count + 1))
    return (f'<html><head><title>Naughty blog</title><link rel="alternate" type="application/rss+xml" '
            f'href="/feed.xml">{head}</head><body><ul>{items}</ul>{extra}</body></html>')


def _crawl(routes: dict, tmp_path: Path, elsewhere: Iterable[str] = ()) -> tuple[Path, object]:
    """Crawl the blog of ``routes``; the hosts ``elsewhere`` are mapped to a closed port of 127.0.0.1,
    so that a post's image on one of them is asked of no host on the internet."""
    db = tmp_path / "archive.db"
    with RouteServer(routes) as server:
        closed = f"http://127.0.0.1:{free_port()}"
        proc = run_cli(*crawl_args(f"http://{HOST}/", db, {HOST: server.base, **dict.fromkeys(elsewhere, closed)}),
                       check=False)
    return db, proc


def _posts_and_errors(db: Path) -> tuple[set[str], list[tuple[str, str]]]:
    conn = sqlite3.connect(db)
    posts = {u for (u,) in conn.execute("select url from posts")}
    errors = list(conn.execute("select kind, message from crawl_errors"))
    conn.close()
    return posts, errors


def test_the_four_posts_of_the_issue_are_all_archived(tmp_path):
    """``<a href="http://[::1">``, ``<img src="http://1.2.3.4:abc/x.png">``, a Hexo autolink of
    ``http://ip:port``, and the forms normalize_url raised on: four posts, four archived."""
    extras = {
        1: '<a href="http://[::1">the loopback</a>',
        2: '<img src="http://1.2.3.4:abc/x.png" alt="a picture">',
        3: 'Run it at <a href="http://ip:port">http://ip:port</a> and see.',
        4: "".join(f'<a href="{u}">x</a><img src="{u}">' for u in ("http://[::1]:99999/", "http://host:-1/", "https://[",
                                                                    "http://example.com:+80/")),
    }
    items = "".join(f"<item><title>Post {n}</title><link>http://{HOST}/p/{n}/</link></item>" for n in extras)
    routes = {"/": html_page(_home(4)), "/feed.xml": xml_page(f"<rss version='2.0'><channel><title>t</title>{items}</channel></rss>")}
    routes |= {f"/p/{n}/": html_page(_post(n, extra)) for n, extra in extras.items()}
    db, proc = _crawl(routes, tmp_path)
    posts, errors = _posts_and_errors(db)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert posts == {f"http://{HOST}/p/{n}/" for n in extras}
    assert [kind for kind, _ in errors] == ["bad-url"]  # one row for the source, the first one met named
    assert "not a URL, taken as no link" in errors[0][1]


def _naughty_routes(strings: list[str], posts: int) -> dict:
    chunks = [strings[i::posts] for i in range(posts)]

    def links(chunk: list[str]) -> str:
        variants = [v for s in chunk for v in (s, f"http://{s}", f"http://{HOST}:{s}/", f"http://[{s}", f"//{s}")]
        images = [v for s in chunk for v in (s, f"http://[{s}", f"http://127.0.0.1:{s}/x.png")]
        return ("".join(f"<a href={quoteattr(v)}>link</a> " for v in variants)
                + "".join(f"<img src={quoteattr(v)} alt='i'> " for v in images))

    routes: dict = {f"/p/{n}/": html_page(_post(n, links(chunk))) for n, chunk in enumerate(chunks, 1)}
    # a page's own head: a canonical, a <base href>, a declared feed and a refresh that are no URL
    routes["/p/1/"] = html_page(_post(1, links(chunks[0]), head='<link rel="canonical" href="http://example.com:+80/">'))
    routes["/p/2/"] = html_page(_post(2, links(chunks[1]), head='<base href="http://[::1">'))
    routes["/p/3/"] = html_page(_post(3, links(chunks[2]), head='<link rel="alternate" type="application/rss+xml" '
                                                               'href="http://ip:port/feed">'))
    routes["/refresh/"] = html_page('<html><head><meta http-equiv="refresh" content="0; url=http://[::1"></head>'
                                    '<body>moved</body></html>')
    routes["/old/"] = redirect("http://[::1")
    routes["/moved/"] = redirect("http://1.2.3.4:abc/")
    real = [f"http://{HOST}/p/{n}/" for n in range(1, posts + 1)]
    items = "".join(f"<item><title>Post {n}</title><link>{url}</link><guid>{_xml_text(strings[n])}</guid></item>"
                    for n, url in enumerate(real, 1))
    items += "".join(f"<item><title>{_xml_text(s)}</title><link>{_xml_text(v)}</link><guid>{_xml_text(s)}</guid></item>"
                     for s in strings for v in (f"http://{s}", f"http://{HOST}:{s}/", f"http://[{s}") if s.strip())
    routes["/feed.xml"] = xml_page(
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel>'
        '<title>Naughty blog</title><atom:link rel="next" href="http://[::1"/>'
        f"<atom:link rel=\"next\" href=\"http://{HOST}:port/feed.xml?page=2\"/>{items}</channel></rss>")
    locs = [*real, *(v for s in strings for v in (s, f"http://{s}", f"http://{HOST}:{s}/", f"http://[{s}"))]
    routes["/sitemap.xml"] = xml_page('<?xml version="1.0" encoding="utf-8"?>'
                                      '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                                      + "".join(f"<url><loc>{_xml_text(loc)}</loc></url>" for loc in locs) + "</urlset>")
    routes["/robots.txt"] = text_page("User-agent: *\nAllow: /\nSitemap: http://[::1\nSitemap: /sitemap.xml\n"
                                      f"Sitemap: http://{HOST}/sitemap.xml\n")
    routes["/"] = html_page(_home(posts, head='<link rel="alternate" type="application/rss+xml" href="http://[::1">',
                                  extra='<a href="/refresh/">r</a><a href="/old/">o</a><a href="/moved/">m</a>'))
    return routes


def test_a_blog_of_naughty_strings_is_archived_whole(tmp_path):
    posts = 6
    # the strings that are URLs ("http://www.cum.qc.ca/") are images of the posts, on hosts of the internet
    elsewhere = {host_of(s) for s in NAUGHTY if is_http_url(s)}
    db, proc = _crawl(_naughty_routes(NAUGHTY, posts), tmp_path, elsewhere)
    archived, errors = _posts_and_errors(db)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert {f"http://{HOST}/p/{n}/" for n in range(1, posts + 1)} <= archived
    assert not [e for e in errors if e[0] == "bug"]
    assert [kind for kind, _ in errors].count("bad-url") == 1


def test_a_real_hexo_blog_whose_post_autolinks_ip_and_port_is_archived_whole(tmp_path):
    """tests/corpus/tardfyou-hexo-zh: a post autolinks ``http://IP:端口/...``, a port that is no number."""
    from fidelity import archived_posts, crawl, load_blog, path_key

    blog = load_blog("tardfyou-hexo-zh")
    db = tmp_path / "archive.db"
    proc = crawl(blog, db)
    assert proc.returncode == 0, proc.stderr[-3000:]
    archived = {path_key(p["url"]) for p in archived_posts(db)}
    assert {p.path for p in blog.posts if p.linked} <= archived
    _, errors = _posts_and_errors(db)
    assert [kind for kind, _ in errors if kind in ("bug", "bad-url")] == ["bad-url"]
    assert "IP:端口" in next(message for kind, message in errors if kind == "bad-url")


@pytest.mark.parametrize("url", ["http://ip:port", "http://[::1", "http://example.com:+80/"])
def test_a_typed_url_that_is_no_url_is_refused_before_the_archive_is_made(tmp_path, url):
    db = tmp_path / "archive.db"
    proc = run_cli("crawl", url, "--db", str(db), check=False)
    assert proc.returncode == 2
    assert proc.stderr == f"Error: not an http(s) URL: {url}\n"
    assert not db.exists()
