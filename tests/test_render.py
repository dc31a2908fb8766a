"""Pages whose scripts write their text (issue 37, docs/rendering.md): judged from their HTTP answer,
rendered by Debian's Chromium only then, and archived as any page.

The blogs of tests/rendered are served on 127.0.0.1: a docsify blog (docsify 4.13.1 itself, MIT,
vendored from its npm package with its licence) whose Markdown its script fetches and whose sidebar
routes by ``#/post``, and a single-page app that fetches its posts as JSON. The crawls drive the real
browser; where no Chromium is installed they are skipped.
"""

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EXPECTED, ROOT, SITE, QuietHandler, StaticServer, copy_archive, crawl_args, rows, run_cli
from lxml import etree, html
from warcio.archiveiterator import ArchiveIterator

from archive.core.urls import normalize_url, url_key
from archive.tables.sources import parse_setting

from crawler.judge.pages import PageEvidence, SectionStats, decide, listing_reason, routed
from crawler.judge.render import render_reason, visible_text
from crawler.judge.titles import choose_title, title_candidates
from crawler.memory import lanes

RENDERED = ROOT / "tests" / "rendered"
DOCSIFY, SPA = "field-notes.test", "tidewater.test"
needs_chromium = pytest.mark.skipif(not (shutil.which("chromium") or shutil.which("chromium-browser")),
                                    reason="no Chromium on this machine (Debian's chromium package): nothing to render with")
ARTICLE = "".join(f"<p>Paragraph {i} of a post whose text is in its HTML, as a static blog sends it.</p>" for i in range(6))


def tree(text: str) -> html.HtmlElement:
    return html.fromstring(text)


# -- the judgement, from the HTTP answer alone --------------------------------------------------

def test_a_docsify_shell_and_a_javascript_app_need_a_browser():
    docsify = (RENDERED / "docsify" / "index.html").read_text()
    assert render_reason(tree(docsify)) == "a client-side renderer boots it (window.$docsify)"
    spa = (RENDERED / "spa" / "posts" / "mending-the-dinghy" / "index.html").read_text()
    assert render_reason(tree(spa)) == "its <noscript> asks for JavaScript"
    bundle = '<html><body><div id="app"></div><script src="/assets/index-4f2a.js"></script></body></html>'
    assert render_reason(tree(bundle)) == "an empty mount element (#app) and a script bundle"


def test_a_page_with_its_text_needs_none():
    for page in ("p/101/index.html", "index.html", "about/index.html"):
        assert render_reason(tree((SITE / page).read_text()), blog_has_text=True) is None, page
    # a short page (a 404) with a search box whose results go into an empty element: a widget's, not a shell
    search = ('<html><body><h1>Page not found</h1><div class="search"><input type="text" id="search">'
              '<div id="results"></div></div><script src="/assets/js/main.min.js"></script></body></html>')
    assert render_reason(tree(search), blog_has_text=False) is None
    search = search.replace('<input type="text" id="search">', '<div class="field"><input type="text"></div>')
    assert render_reason(tree(search), blog_has_text=False) is None
    # a single-page app mounts beside the site's header, whose search form does not make it a widget
    app = ('<html><body><header><form><input name="q"></form></header><div id="app"></div>'
           '<script src="/assets/index-4f2a.js"></script></body></html>')
    assert render_reason(tree(app)) == "an empty mount element (#app) and a script bundle"
    # an empty div and a script beside the article are a widget's, not a shell
    post = f'<html><body><article>{ARTICLE}</article><div id="comments"></div><script src="/c.js"></script></body></html>'
    assert render_reason(tree(post), blog_has_text=True) is None


def test_a_page_nested_deeper_than_pythons_stack_is_judged():
    # 50,000 nested elements (tests/test_faults.py serves such a page): before, the text was read
    # by recursion, and the page was recorded as a bug (RecursionError)
    root = etree.Element("html")
    element = etree.SubElement(root, "body")
    for _ in range(50_000):
        element = etree.SubElement(element, "div")
    element.text = "Deep."
    assert visible_text(root) == "Deep."
    assert render_reason(root, blog_has_text=True) is None  # no script: nothing a browser would add


def test_a_body_far_shorter_than_its_feed_entry_or_the_blogs_other_pages():
    teaser = '<html><body><article><p>The first lines only.</p></article><script src="/app.js"></script></body></html>'
    assert render_reason(tree(teaser)) is None
    assert render_reason(tree(teaser), feed_text="x " * 600).startswith("its text (21 characters) is far shorter")
    # a paragraph of its own is the page's text: short, not a shell, unless the feed says the post is longer
    assert render_reason(tree(teaser), blog_has_text=True) is None
    empty = '<html><body><nav><a href="/">Home</a></nav><div class="post"></div><script src="/app.js"></script></body></html>'
    assert render_reason(tree(empty), blog_has_text=True) == "no article text, where the blog's other pages have one"
    # without a script, nothing a browser would run could add to it
    assert render_reason(tree('<html><body><nav><a href="/">Home</a></nav></body></html>'), blog_has_text=True) is None
    # the title its feed entry gives it, absent from a page with a footer's paragraph: a shell all the same
    footer = empty.replace("</body>", "<footer><p>© 2024 Jane</p></footer></body>")
    assert render_reason(tree(footer), title="Mending the dinghy", blog_has_text=True) is not None
    assert render_reason(tree(footer.replace("<nav>", "<nav><h1>Mending the “dinghy”</h1>")),
                         title='Mending the "dinghy"', blog_has_text=True) is None


# Comment widgets as their services tell authors to paste them into a static page (issue 46): an
# empty element with an id, a script, and (Disqus) a <noscript> that asks for JavaScript
WIDGETS = {
    "discourse": '<div id="discourse-comments"></div><script>DiscourseEmbed = {discourseUrl: "https://forum.example/"};'
                 '(function() { var d = document.createElement("script"); d.src = DiscourseEmbed.discourseUrl + '
                 '"javascripts/embed.js"; document.body.appendChild(d); })();</script><div id="completion-status"></div>',
    "disqus": '<div id="disqus_thread"></div><script>var disqus_config = function () {};</script>'
              '<script src="https://example.disqus.com/embed.js" async></script>'
              '<noscript>Please enable JavaScript to view the comments powered by Disqus.</noscript>',
    "giscus": '<div id="giscus-container"></div><script src="https://giscus.app/client.js" data-repo="a/b" async></script>',
    "utterances": '<div id="comments"></div><script src="https://utteranc.es/client.js" repo="a/b" async></script>',
    "waline": '<div id="waline"></div><script src="https://unpkg.com/@waline/client/dist/waline.js"></script>'
              '<script>Waline.init({el: "#waline"})</script>',
}


@pytest.mark.parametrize("widget", sorted(WIDGETS))
def test_a_short_static_page_with_a_comment_widget_needs_no_browser(widget):
    # a short post (a photo, a note) or a site page: little text, all of it in the HTML
    short = (f'<html><body><header><a href="/">Notes</a></header><main><h1>Gone fishing</h1>'
             f'<p>Back on Monday.</p></main>{WIDGETS[widget]}<script src="/js/theme.min.js"></script></body></html>')
    assert render_reason(tree(short)) is None
    assert render_reason(tree(short), title="Gone fishing", blog_has_text=True) is None
    # a feed entry that says the post is no longer than that: nothing more for a browser to find
    assert render_reason(tree(short), feed_text="Back on Monday.", title="Gone fishing", blog_has_text=True) is None
    # the same widget on a shell that shows nothing of its own is no reason to keep it from the browser
    shell = f'<html><body><div id="app"></div><script src="/assets/index.js"></script>{WIDGETS[widget]}</body></html>'
    assert render_reason(tree(shell)) is not None


def test_hash_routes_are_pages_and_their_anchors_are_not():
    assert normalize_url("http://Field-Notes.test/#/river-in-spring") == "http://field-notes.test/#/river-in-spring"
    assert normalize_url("http://field-notes.test/#/river-in-spring?id=the-river") == "http://field-notes.test/#/river-in-spring"
    assert normalize_url("http://field-notes.test/#/") == normalize_url("http://field-notes.test/#top") == "http://field-notes.test/"
    # a sidebar's relative link (./notes/a.md) is routed as #/./notes/a: the page #/notes/a
    assert normalize_url("http://field-notes.test/#/./notes/a") == "http://field-notes.test/#/notes/a"
    assert normalize_url("http://field-notes.test/#!/notes/../a") == "http://field-notes.test/#!/a"
    assert normalize_url("http://field-notes.test/#/./") == "http://field-notes.test/"
    assert url_key("http://field-notes.test/#/a") != url_key("http://field-notes.test/#/b")
    assert routed("http://field-notes.test/notes/#/2024/river") == "http://field-notes.test/notes/2024/river"
    assert listing_reason("http://field-notes.test/#/tags/river", "http://field-notes.test/") == "a listing URL (/tags/)"


def test_a_hash_routes_one_article_is_a_post_without_a_date_or_a_feed():
    # docsify's notes: no date, no feed, no og:type; the page a route shows holds one article
    ev = PageEvidence(articles=1)
    judged = decide("http://field-notes.test/#/notes/a", "http://field-notes.test/", ev, in_feed=False,
                    dated_text=False, sections=SectionStats())
    assert judged == ("post", "the one article of a hash route's page")
    assert decide("http://field-notes.test/notes/a", "http://field-notes.test/", ev, in_feed=False,
                  dated_text=False, sections=SectionStats())[0] == "page"


def test_a_notes_title_is_its_first_heading_not_the_logo_in_main():
    page = tree('<html><head><title>Field Notes</title></head><body><main><aside><h1><a href="/">Field Notes</a></h1>'
                '</aside><article id="main"><h3>The river in spring</h3><p>Text.</p><h4>More</h4></article></main></body></html>')
    assert ("The river in spring", "article <h3>-<h6>") in title_candidates(page)
    assert not [c for c in title_candidates(page) if c[1] == "article <h1>"]
    assert choose_title(title_candidates(page), site_parts=["Field Notes"]) == ("The river in spring", "article <h3>-<h6>")


def test_render_is_a_source_setting():
    assert parse_setting("render", "Never") == "never"
    assert parse_setting("render", "default") is None
    with pytest.raises(ValueError, match="one of auto, always, never"):
        parse_setting("render", "sometimes")


# -- crawls with the browser ---------------------------------------------------------------------

def crawl(blog: str, host: str, db: Path, *options: str) -> tuple[subprocess.CompletedProcess, str]:
    """``blogarchive crawl`` of a blog of tests/rendered (or tests/site): its output and its log."""
    log = db.with_suffix(".log")
    with StaticServer(RENDERED / blog if blog != "site" else SITE) as server:
        proc = run_cli(*crawl_args(f"http://{host}/", db, {host: server.base}), "--log-file", str(log), *options)
    return proc, log.read_text()


@pytest.fixture(scope="module")
def docsify(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("docsify") / "a.db"
    crawl("docsify", DOCSIFY, db)
    return db


@pytest.fixture(scope="module")
def spa(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("spa") / "a.db"
    crawl("spa", SPA, db, "--memory-mb", "1100")  # a budget that holds a browser (docs/rendering.md)
    return db


@needs_chromium
@pytest.mark.slow
def test_a_docsify_blog_is_archived_with_no_option_given(docsify):
    posts = {p["url"]: p for p in rows(docsify, "select * from posts")}
    want = {"river-in-spring": ("The river in spring", "2024-04-12"),
            "weather-station": ("Rebuilding the weather station", "2024-02-03"),
            "kitchen-birds": ("Birds from the kitchen window", "2023-12-20")}
    # the sidebar exists only once rendered: its #/ routes are the posts, its heading anchors are not
    assert set(posts) == {f"http://{DOCSIFY}/#/{slug}" for slug in want}
    for slug, (title, day) in want.items():
        post = posts[f"http://{DOCSIFY}/#/{slug}"]
        markdown = (RENDERED / "docsify" / "posts" / f"{slug}.md").read_text()
        assert post["title"] == title
        assert post["published"].startswith(day)
        last = markdown.strip().splitlines()[-1]
        assert last in post["text"] and "Published" not in post["text"]
    pages = rows(docsify, "select url, fetched_via from pages")
    assert pages and all(p["fetched_via"].startswith("browser: ") for p in pages)
    assert {p["fetched_via"] for p in pages} >= {"browser: a client-side renderer boots it (window.$docsify)"}


@needs_chromium
@pytest.mark.slow
def test_a_docsify_blog_is_archived_alike_at_the_default_delay_and_at_a_small_one(tmp_path):
    # a rendered page's requests once waited on its host's download slot, whose clock they had set
    # 56 years ahead: with any delay, the crawl stalled after its first rendered page (issue 46);
    # its pages arrive in another order at another delay, and the archive is the same
    archived = []
    for delay in (None, "0.2"):
        db = tmp_path / f"{delay}.db"
        with StaticServer(RENDERED / "docsify") as server:
            proc = run_cli("crawl", f"http://{DOCSIFY}/", "--db", str(db), "--map-host", f"{DOCSIFY}={server.base}",
                           *(("--delay", delay) if delay else ()), timeout=120)
        assert " 0 errors on the blogs" in proc.stdout
        posts = rows(db, "select url, title, published, author, tags, text_hash from posts order by url")
        assert [p["url"] for p in posts] == [f"http://{DOCSIFY}/#/{slug}" for slug in ("kitchen-birds", "river-in-spring", "weather-station")]
        assert {p["fetched_via"] for p in rows(db, "select fetched_via from pages where kind = 'post'")} == {
            "browser: a hash route, which only the page's scripts show"}
        archived.append(posts)
    assert archived[0] == archived[1]


@needs_chromium
@pytest.mark.slow
def test_a_rendered_page_keeps_both_captures(docsify):
    home = f"http://{DOCSIFY}/"
    captures = {c["fetched_via"]: c for c in rows(docsify, "select * from captures where url = ?", (home,))}
    assert set(captures) == {None, "browser"}  # the HTTP answer (the shell), and the HTML the browser rendered
    bodies = {via: rows(docsify, "select size from capture_bodies where sha256 = ?", (c["sha256"],))[0]["size"]
              for via, c in captures.items()}
    assert bodies["browser"] > bodies[None] + 500
    # a hash route is asked of the browser at once: over HTTP it is the home page's shell again
    route = rows(docsify, "select * from captures where url = ?", (f"{home}#/kitchen-birds",))
    assert [c["fetched_via"] for c in route] == ["browser"]
    (page,) = rows(docsify, "select * from pages where url = ?", (f"{home}#/kitchen-birds",))
    assert page["fetched_via"] == "browser: a hash route, which only the page's scripts show"


@needs_chromium
@pytest.mark.slow
def test_a_rendered_page_is_a_conversion_of_its_response_in_the_warc(docsify, tmp_path):
    out = tmp_path / "a.warc.gz"
    run_cli("export", "warc", "-o", str(out), "--db", str(docsify))
    home, records = f"http://{DOCSIFY}/", {}
    with out.open("rb") as f:
        for record in ArchiveIterator(f):
            if record.rec_headers.get_header("WARC-Target-URI") == home:
                records[record.rec_type] = (record.rec_headers, record.content_stream().read())
    assert set(records) == {"response", "request", "conversion"}
    headers, body = records["conversion"]
    assert headers.get_header("WARC-Refers-To") == records["response"][0].get_header("WARC-Record-ID")
    assert b"Rebuilding the weather station" in body and b"Rebuilding the weather station" not in records["response"][1]


@needs_chromium
@pytest.mark.slow
def test_a_single_page_app_is_archived_with_no_option_given(spa):
    posts = {p["url"]: p for p in rows(spa, "select * from posts")}
    assert set(posts) == {f"http://{SPA}/posts/salt-marsh-survey/", f"http://{SPA}/posts/mending-the-dinghy/"}
    post = posts[f"http://{SPA}/posts/mending-the-dinghy/"]
    assert post["title"] == "Mending the dinghy"
    assert post["published"] == "2024-03-02T16:00:00Z"
    assert post["author"] == "Ines Marlowe"
    assert "riveted it to the frames with copper nails" in post["text"]
    reasons = {p["fetched_via"] for p in rows(spa, "select fetched_via from pages")}
    assert reasons == {"browser: its <noscript> asks for JavaScript"}


@needs_chromium
@pytest.mark.slow
def test_the_browser_takes_its_share_of_the_memory_budget(docsify, spa):
    # the default budget cannot hold one: the crawl says what it would need
    assert "a crawl that renders wants --memory-mb 1080" in docsify.with_suffix(".log").read_text()
    log = spa.with_suffix(".log").read_text()
    assert "wants --memory-mb" not in log
    workers, before = map(int, re.search(r"memory budget: 1100 MB, (\d+) extraction workers, (\d+) lanes", log).groups())
    after = int(re.search(r"memory budget: a browser started, about 600 MB; (\d+) lanes", log).group(1))
    assert (before, after) == (lanes(1100, workers), lanes(1100 - 600, workers))
    assert before > after or before == 1


@needs_chromium
@pytest.mark.slow
def test_a_blog_that_needed_the_browser_gets_it_at_once_in_its_next_crawl(spa, tmp_path):
    assert rows(spa, "select rendered from sources")[0]["rendered"] == "browser"
    db = copy_archive(spa, tmp_path / "again.db")
    proc, log = crawl("spa", SPA, db, "--full")
    assert "posts 0 new, 0 updated, 2 unchanged" in proc.stdout
    learned = "browser: the blog's pages needed it in its last crawl"
    assert {p["fetched_via"] for p in rows(db, "select fetched_via from pages where url like '%/posts/%'")} == {learned}
    assert "render/needed" not in log  # no page was asked over HTTP first and judged


@needs_chromium
@pytest.mark.slow
def test_a_static_blog_never_starts_a_browser(tmp_path):
    proc, log = crawl("site", "example-notes.test", tmp_path / "a.db")
    assert "posts 7 new" in proc.stdout
    assert "render/" not in log and "playwright" not in log.lower()
    assert {p["fetched_via"] for p in rows(tmp_path / "a.db", "select fetched_via from pages")} == {"http"}


@needs_chromium
@pytest.mark.slow
def test_short_static_pages_with_a_script_and_a_search_box_start_no_browser(tmp_path):
    # a tag's page of one post and a 404 page: short, with the theme's scripts and its search box's
    # empty results element (as Hexo's and Jekyll's themes have them), on a blog whose posts have text;
    # the tag's page asks for JavaScript in a <noscript>, as a comments widget does
    site = tmp_path / "site"
    shutil.copytree(SITE, site)
    search = ('<div class="modal"><div class="field"><input type="text" id="search-input"></div>'
              '<div id="search-result"></div></div><script src="/assets/js/search.js"></script>')
    for folder, body in (("tags/short", '<h1>Tag: short</h1><ul><li><a href="/p/101/">A post</a></li></ul>'
                                        "<noscript>Please enable JavaScript to view the comments.</noscript>"),
                         ("404", "<h1>Page not found</h1>")):
        (site / folder).mkdir(parents=True)
        (site / folder / "index.html").write_text(f"<html><body>{body}{search}</body></html>", encoding="utf-8")
    for post in (site / "p").glob("*/index.html"):  # read after the posts whose text the blog has
        post.write_text(post.read_text().replace("</body>", '<a href="/tags/short/">short</a> <a href="/404/">?</a></body>'))
    log = tmp_path / "a.log"
    with StaticServer(site) as server:
        proc = run_cli(*crawl_args("http://example-notes.test/", tmp_path / "a.db", {"example-notes.test": server.base}),
                       "--log-file", str(log), "--delay", "0.2")  # the posts' text known when the short pages come
    assert "posts 7 new" in proc.stdout
    assert {p["url"] for p in rows(tmp_path / "a.db", "select url from pages")} >= {
        "http://example-notes.test/tags/short/", "http://example-notes.test/404/"}
    assert "render/" not in log.read_text()
    assert {p["fetched_via"] for p in rows(tmp_path / "a.db", "select fetched_via from pages")} == {"http"}


@needs_chromium
@pytest.mark.slow
def test_comment_widgets_on_a_static_blog_start_no_browser_at_the_default_delay(tmp_path):
    # every post and a short page carry Discourse's and Disqus's embeds as their services give them
    # (before: each short page with them was rendered, and the crawl stalled after the first)
    site = tmp_path / "site"
    shutil.copytree(SITE, site)
    widgets = WIDGETS["discourse"] + WIDGETS["disqus"] + '<script src="/js/theme.min.js"></script>'
    (site / "notes" / "short").mkdir(parents=True)
    (site / "notes" / "short" / "index.html").write_text(
        f"<html><body><h1>Gone fishing</h1><p>Back on Monday.</p>{widgets}</body></html>", encoding="utf-8")
    for post in (site / "p").glob("*/index.html"):
        post.write_text(post.read_text().replace("</body>", f'<a href="/notes/short/">note</a>{widgets}</body>'))
    log, db = tmp_path / "a.log", tmp_path / "a.db"
    with StaticServer(site) as server:
        proc = run_cli("crawl", "http://example-notes.test/", "--db", str(db), "--map-host",
                       f"example-notes.test={server.base}", "--log-file", str(log), timeout=200)
    assert "posts 7 new" in proc.stdout
    assert "http://example-notes.test/notes/short/" in {p["url"] for p in rows(db, "select url from pages")}
    assert "render/" not in log.read_text()
    assert {p["fetched_via"] for p in rows(db, "select fetched_via from pages")} == {"http"}


@needs_chromium
@pytest.mark.slow
def test_a_short_page_no_feed_lists_starts_no_browser_whenever_it_comes(tmp_path):
    # a static blog's near-empty page with the theme's script (a story of two lines, as Nikola's
    # stories/ have them), which no feed lists, read after the posts whose text the blog has: its
    # shortness is its own, not its scripts' (before, it was rendered whenever it came after two
    # posts with text, and not when it came before them)
    site = tmp_path / "site"
    shutil.copytree(SITE, site)
    (site / "stories").mkdir()
    (site / "stories" / "note.html").write_text(
        '<html><body><h1>A note</h1><p>Two lines.</p><script src="/assets/js/theme.js"></script></body></html>',
        encoding="utf-8")
    for post in (site / "p").glob("*/index.html"):
        post.write_text(post.read_text().replace("</body>", '<a href="/stories/note.html">note</a></body>'))
    log = tmp_path / "a.log"
    with StaticServer(site) as server:
        proc = run_cli(*crawl_args("http://example-notes.test/", tmp_path / "a.db", {"example-notes.test": server.base}),
                       "--log-file", str(log), "--delay", "0.2")  # the posts' text known when the note comes
    assert "posts 7 new" in proc.stdout
    assert "http://example-notes.test/stories/note.html" in {p["url"] for p in rows(tmp_path / "a.db", "select url from pages")}
    assert "render/" not in log.read_text()
    assert {p["fetched_via"] for p in rows(tmp_path / "a.db", "select fetched_via from pages")} == {"http"}


@needs_chromium
@pytest.mark.slow
def test_render_always_renders_a_static_blog_to_the_same_posts(tmp_path):
    proc, log = crawl("site", "example-notes.test", tmp_path / "a.db", "--render", "always")
    assert "posts 7 new" in proc.stdout
    titles = {p["title"] for p in rows(tmp_path / "a.db", "select title from posts")}
    assert titles == {p["title"] for p in EXPECTED["posts"]}
    assert {p["fetched_via"] for p in rows(tmp_path / "a.db", "select fetched_via from pages")} == {"browser: render=always"}


@needs_chromium
@pytest.mark.slow
def test_render_never_archives_the_shell_as_fetched(tmp_path):
    proc, log = crawl("docsify", DOCSIFY, tmp_path / "a.db", "--render", "never")
    assert "playwright" not in log.lower()
    assert not rows(tmp_path / "a.db", "select * from posts")
    assert {p["fetched_via"] for p in rows(tmp_path / "a.db", "select fetched_via from pages")} == {"http"}
    assert rows(tmp_path / "a.db", "select render from sources")[0]["render"] == "never"  # the source keeps it


def scrapy_crawl(db: Path, host: str, base: str, *settings: str) -> subprocess.CompletedProcess:
    """``scrapy crawl blog`` of ``http://HOST/``, served from ``base``, with more Scrapy settings."""
    command = [sys.executable, "-m", "scrapy", "crawl", "blog", "-a", f"url=http://{host}/", "-s", f"ARCHIVE_PATH={db}",
               "-s", f'ARCHIVE_MAP_HOSTS={{"{host}": "{base}"}}', "-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=0",
               "-s", "LOG_LEVEL=INFO"]
    for setting in settings:
        command += ["-s", setting]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


class CountingHandler(QuietHandler):
    asked: list[str] = []

    def do_GET(self) -> None:
        CountingHandler.asked.append(self.path)
        super().do_GET()


class TimedHandler(QuietHandler):
    asked: list[tuple[float, str]] = []

    def do_GET(self) -> None:
        TimedHandler.asked.append((time.monotonic(), self.path))
        super().do_GET()


@needs_chromium
@pytest.mark.slow
def test_a_rendered_page_reaches_no_host_but_its_blogs(tmp_path):
    internal, site = tmp_path / "internal", tmp_path / "site"
    internal.mkdir(), site.mkdir()
    (internal / "secret.json").write_text('{"title": "Internal secret"}')
    (internal / "x.js").write_text('document.title = "Internal script"')
    with StaticServer(internal, CountingHandler) as other:
        # the page's scripts ask an internal server that no one typed: for data, and for a script
        (site / "index.html").write_text(
            '<html><head><title>Shell</title></head><body><noscript>Please enable JavaScript.</noscript>'
            f'<div id="app"></div><script src="{other.base}/x.js"></script>'
            f'<script>fetch("{other.base}/secret.json").then(r => r.json()).then(d => {{'
            'document.getElementById("app").innerHTML = "<article><h1>" + d.title + "</h1></article>"}).catch(() => 0)</script>'
            '</body></html>')
        db = tmp_path / "a.db"
        with StaticServer(site) as server:
            proc = scrapy_crawl(db, "shell.test", server.base)
    assert CountingHandler.asked == []
    assert "'render/aborted': 2" in proc.stderr
    (page,) = rows(db, "select * from pages where url = 'http://shell.test/'")
    assert page["fetched_via"] == "browser: its <noscript> asks for JavaScript"
    assert not rows(db, "select * from posts")


@needs_chromium
@pytest.mark.slow
def test_a_rendered_page_asks_nothing_the_blogs_robots_txt_forbids(tmp_path):
    # the page's scripts ask the blog for two JSON files; its robots.txt forbids one folder of them
    site = tmp_path / "site"
    for folder in ("open", "private"):
        (site / folder).mkdir(parents=True)
        (site / folder / "post.json").write_text(f'{{"title": "From {folder}"}}')
    (site / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    show = ('fetch("/{}/post.json").then(r => r.json()).then(d => {{document.getElementById("app").innerHTML += '
            '"<article><h1>" + d.title + "</h1><p>" + "A paragraph long enough to be an article. ".repeat(20) + '
            '"</p></article>"}}).catch(() => 0);')
    (site / "index.html").write_text(
        '<html><head><title>Shell</title></head><body><noscript>Please enable JavaScript.</noscript>'
        f'<div id="app"></div><script>{show.format("private")}{show.format("open")}</script></body></html>')
    CountingHandler.asked = []
    with StaticServer(site, CountingHandler) as server:
        proc = scrapy_crawl(tmp_path / "a.db", "shell.test", server.base)
    assert "/open/post.json" in CountingHandler.asked  # the browser did ask the blog
    assert "/private/post.json" not in CountingHandler.asked
    assert "'render/robots': 1" in proc.stderr


@needs_chromium
@pytest.mark.slow
def test_a_page_that_never_settles_is_archived_as_fetched_with_an_error(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    # a client that polls ten times a second for ever: the page never falls quiet; its HTTP answer holds a post all the same
    (site / "index.html").write_text(
        '<html lang="en"><head><title>Always busy</title><meta property="og:type" content="article">'
        '<meta property="article:published_time" content="2024-05-01T10:00:00+00:00">'
        '<link rel="alternate" type="application/rss+xml" href="/feed.xml"></head><body>'
        '<noscript>Please enable JavaScript for the comments.</noscript><div id="app"></div>'
        '<div class="lede">Short.</div>'  # no heading, no paragraph: it shows no text of its own
        '<script>setInterval(() => fetch("/ping?" + Date.now()).catch(() => 0), 100)</script></body></html>')
    db = tmp_path / "a.db"
    with StaticServer(site, TimedHandler) as server:
        scrapy_crawl(db, "busy.test", server.base, "ARCHIVE_RENDER_TIMEOUT=3", "DOWNLOAD_DELAY=0.5", "ARCHIVE_RENDER_BURST=3")
    (page,) = rows(db, "select * from pages where url = 'http://busy.test/'")
    assert page["fetched_via"].startswith("http: not rendered: ")
    (error,) = rows(db, "select * from crawl_errors where kind = 'render'")
    assert error["url"] == "http://busy.test/"
    assert "not rendered" in error["message"] and "archived as its HTTP answer has it" in error["message"]
    # past the host's burst of 3, the page's requests kept the host's delay (0.5 s),
    # not the script's ten a second
    pings = [when for when, path in TimedHandler.asked if path.startswith("/ping")][3:]
    assert len(pings) >= 2
    assert (pings[-1] - pings[0]) / (len(pings) - 1) > 0.4
