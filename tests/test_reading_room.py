"""The reading room on real blogs: corpus blogs (tests/corpus) crawled into an archive, served by
a real ``blogarchive serve`` and opened in a real headless Chromium. A post's page reads like the
post, compared with the blog's own page served from its copy; the front page, a post, a search
and Recent changes fit a desktop's and a phone's window, light and dark, their content above the
fold. ``BLOGARCHIVE_SCREENSHOTS=docs/screenshots`` keeps those pages' screenshots
(``reading-PAGE-desktop|phone-light|dark.png``).

The corpus keeps no image files: the copy's server answers each image path the blog's pages
show with a picture drawn for it, as the blog's server answered with the author's, so the crawl
archives them and the post page shows the archived copies. Images on other hosts (the
internet's) are asked of a closed port on 127.0.0.1, never of the DNS.
"""

import io
import json
import os
import re
import sqlite3
from pathlib import Path

import pytest
from conftest import QuietHandler, StaticServer, crawl_args, free_port, run_cli, serving
from mediablog import image
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from test_browser import DESKTOP, PHONE, browser, console, fits, viewport  # noqa: F401 (browser: the fixture)

import archive
from archive.tables.history import record_version

CORPUS = Path(__file__).parent / "corpus"
BLOGS = ["leventarican-zola-en", "tmzh-hugo-en", "yuqingc-hugo-zh"]
# real posts with a list, a table, code and images: the blog, the post's path, its article on the blog's page
POSTS = {
    "leventarican-zola-en": ("/android-architecture/", "div.container"),
    "tmzh-hugo-en": ("/post/2023-06-24-llm-powered-faq-chat-bot/", "div.post-content"),
}
FLAT = "return arguments[0].textContent.replace(/\\s+/g, '').toLowerCase()"
# the text just before each image of an element, whitespace removed, in the element's order
TEXT_BEFORE_IMAGES = """
const root = arguments[0], found = [];
let text = '';
const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT | NodeFilter.SHOW_ELEMENT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  if (node.nodeType === Node.TEXT_NODE) {
    if (!node.parentElement.closest('script, style, figcaption, pre::before')) text += node.textContent;
  } else if (node.tagName === 'IMG') {
    found.push([node.getAttribute('src'), text.replace(/\\s+/g, '').toLowerCase().slice(-30)]);
  }
}
return found;
"""


class ImagesDrawn(QuietHandler):
    """A corpus blog's copy, each image its pages show (absent from the corpus) drawn on the fly."""

    def send_head(self):
        path = self.path.split("?")[0]
        if path.lower().endswith((".png", ".gif", ".jpg")) and not Path(self.translate_path(self.path)).exists():
            kind = "GIF" if path.lower().endswith(".gif") else "PNG"
            body = image(kind, (640, 360), len(path))
            self.send_response(200)
            self.send_header("Content-Type", f"image/{kind.lower()}")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return io.BytesIO(body)
        return super().send_head()


def image_hosts(site: Path, internal: list[str]) -> set[str]:
    """The other hosts a blog's pages show images from."""
    hosts = set()
    for page in site.rglob("*.html"):
        hosts.update(re.findall(r"<img[^>]+?src=[\"']?https?://([^/\"'\s>:]+)", page.read_text(encoding="utf-8", errors="replace")))
    return hosts - set(internal)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Each blog of BLOGS crawled from its copy into one archive (images archived), one of its
    posts edited by its author and crawled again, served; the copies still served:
    ``{blog: (copy's base URL, original host)}``, the archive's URL and its path."""
    db = tmp_path_factory.mktemp("corpus") / "corpus.db"
    servers, blogs = [], {}
    try:
        for name in BLOGS:
            info = json.loads((CORPUS / name / "blog.json").read_text())
            server = StaticServer(CORPUS / name / "site", ImagesDrawn).__enter__()
            servers.append(server)
            hosts = {h: server.base for h in info["internal_hosts"]}
            hosts |= {h: f"http://127.0.0.1:{free_port()}" for h in image_hosts(CORPUS / name / "site", info["internal_hosts"])}
            run_cli(*crawl_args(info["original_site"], db, hosts))
            blogs[name] = (server.base, info["original_site"].rstrip("/"))
        edited(db, blogs["leventarican-zola-en"][1] + POSTS["leventarican-zola-en"][0])
        with serving(db) as base:
            yield blogs, base + "/" + db.stem, db
    finally:
        for server in servers:
            server.__exit__(None, None, None)


def edited(path: Path, url: str) -> None:
    """The post at ``url`` as its author edited it: a word fixed, then a sentence rewritten (two versions)."""
    db = archive.open_archive(path)
    try:
        post = db.execute("select * from posts where url = ?", [url]).fetchone()
        post = dict(zip([c[0] for c in db.execute("select * from posts limit 0").description], post, strict=True))
        text, markdown = post["text"], post["markdown"]
        for old, new in (("Latetely", "Lately"), ("There are also 3rd party libraries which are commonly used.",
                                                    "Third-party libraries, such as Retrofit and Glide, are common too.")):
            text, markdown = text.replace(old, new, 1), markdown.replace(old, new, 1)
            run = archive.start_run(db, [post["source_id"]])
            archive.save_post(db, {**{k: post[k] for k in ("url", "title", "published", "source_id", "lang", "author")},
                                   "text": text, "markdown": markdown}, run_id=run)
            record_version(db, url, run_id=run)
            archive.finish_run(db, run, status="finished", seconds=1, pages=1)
    finally:
        db.close()


def post_id(db: Path, url: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("select id from posts where url = ?", [url]).fetchone()[0]
    finally:
        conn.close()


def flat(browser, element) -> str:  # noqa: F811
    return browser.execute_script(FLAT, element)


def open_both(browser, corpus, name):  # noqa: F811
    """The blog's own page of the post, then its archived page: each page's article (as flat
    texts and elements through ``read``)."""
    blogs, site, db = corpus
    base, original = blogs[name]
    path, selector = POSTS[name]
    browser.get(base + path)
    mine = browser.find_element(By.CSS_SELECTOR, selector)
    return mine, site + f"/posts/{post_id(db, original + path)}"


@pytest.mark.parametrize("name", POSTS)
def test_lists_and_their_links_read_as_on_the_blog(browser, corpus, name):  # noqa: F811
    article, page = open_both(browser, corpus, name)
    theirs = [(flat(browser, li), [(a.text.strip(), a.get_attribute("href").split("/")[-1])
                                   for a in li.find_elements(By.CSS_SELECTOR, "a")])
              for li in article.find_elements(By.CSS_SELECTOR, "li")]
    browser.get(page)
    body = browser.find_element(By.CSS_SELECTOR, ".post-body")
    text = flat(browser, body)
    ours = [(flat(browser, li), [(a.text.strip(), a.get_attribute("href").split("/")[-1])
                                 for a in li.find_elements(By.CSS_SELECTOR, "a")])
            for li in body.find_elements(By.CSS_SELECTOR, "li")]
    kept = [item for item in theirs if item[0] and item[0] in text]  # the items the extraction kept
    assert kept, "the post has a list"
    same = [item for item in ours if item[0] in {k[0] for k in kept}]
    assert [text for text, _ in same] == [text for text, _ in kept]
    for (_, our_links), (_, their_links) in zip(same, kept):  # each link of the blog's (a bare URL may be one too)
        assert set(their_links) <= set(our_links)
    bullets = {browser.execute_script("return getComputedStyle(arguments[0]).listStyleType", li)
               for li in body.find_elements(By.CSS_SELECTOR, "ul > li")}
    assert bullets and "none" not in bullets


@pytest.mark.parametrize("name", POSTS)
def test_tables_read_as_on_the_blog(browser, corpus, name):  # noqa: F811
    article, page = open_both(browser, corpus, name)
    theirs = [[flat(browser, th) for th in table.find_elements(By.CSS_SELECTOR, "th")]
              for table in article.find_elements(By.CSS_SELECTOR, "table") if table.find_elements(By.CSS_SELECTOR, "th")]
    browser.get(page)
    ours = [[flat(browser, th) for th in table.find_elements(By.CSS_SELECTOR, "th")]
            for table in browser.find_elements(By.CSS_SELECTOR, ".post-body table")]
    assert theirs and all(headers in ours for headers in theirs)


def test_code_blocks_keep_their_language_and_text(browser, corpus):  # noqa: F811
    article, page = open_both(browser, corpus, "leventarican-zola-en")
    theirs = [(code.get_attribute("data-lang") or "", flat(browser, code)) for code in article.find_elements(By.CSS_SELECTOR, "pre > code")]
    browser.get(page)
    ours = [(pre.get_attribute("data-language") or "", flat(browser, pre.find_element(By.CSS_SELECTOR, "code")))
            for pre in browser.find_elements(By.CSS_SELECTOR, ".post-body pre")]
    assert len(theirs) > 10 and ours == theirs
    label = browser.execute_script("return getComputedStyle(arguments[0], '::before').content",
                                   browser.find_element(By.CSS_SELECTOR, ".post-body pre[data-language]"))
    assert label == '"kotlin"'


@pytest.mark.parametrize("name", POSTS)
def test_images_sit_where_the_author_put_them_from_the_archive(browser, corpus, name):  # noqa: F811
    article, page = open_both(browser, corpus, name)
    theirs = browser.execute_script(TEXT_BEFORE_IMAGES, article)
    browser.get(page)
    ours = browser.execute_script(TEXT_BEFORE_IMAGES, browser.find_element(By.CSS_SELECTOR, ".post-body"))
    assert len(theirs) >= 2 and len(ours) == len(theirs)
    for (_, before), (src, ours_before) in zip(theirs, ours):
        assert re.fullmatch(r"/-/blogarchive/corpus/media/\d+", src)
        assert before[-12:] == ours_before[-12:]  # after the same words as on the blog
    for img in browser.find_elements(By.CSS_SELECTOR, ".post-body img"):  # lazy: each loads once scrolled to
        browser.execute_script("arguments[0].scrollIntoView()", img)
        WebDriverWait(browser, 10).until(lambda _, img=img: browser.execute_script(
            "return arguments[0].complete && arguments[0].naturalWidth > 0", img))
    assert not browser.find_elements(By.CSS_SELECTOR, ".post-media img")  # none left under the text
    assert not [e for e in console(browser) if "Content Security Policy" in e]


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """An archive of posts written for the page's promises: Markdown escapes, a list of links
    right after a paragraph, an image that was not archived, three posts of one blog."""
    path = tmp_path_factory.mktemp("made") / "made.db"
    db = archive.open_archive(path)
    source = archive.ensure_source(db, "https://made.test/")
    other = archive.ensure_source(db, "https://other.test/")
    run = archive.start_run(db, [source["id"], other["id"]])
    posts = [
        ("https://made.test/a", "第一篇", "2024-01-01T00:00:00Z", source, "zh", "今天不写代码了\\~ 休息一下。\n"),
        ("https://made.test/b", "Links", "2024-03-12T08:00:00Z", source, "en",
         "Where to look:\n- [Known Issues](https://made.test/issues)\n- [Pricing](https://made.test/pricing)\n\n"
         "![A missing chart](https://made.test/chart.png)\n\n" + "word " * 700),
        ("https://other.test/x", "Elsewhere", "2024-02-01T00:00:00Z", other, "en", "Another blog.\n"),
        ("https://made.test/c", "Third", "2024-05-01T00:00:00Z", source, "en", "The newest.\n"),
    ]
    for url, title, published, src, lang, markdown in posts:
        archive.save_post(db, {"url": url, "title": title, "published": published, "source_id": src["id"], "lang": lang,
                               "markdown": markdown, "text": markdown, "word_count": len(markdown.split())}, run_id=run)
    archive.finish_run(db, run, status="finished", seconds=1, pages=4)
    db.close()
    with serving(path) as base:
        yield base + "/" + path.stem, path


def test_markdown_escapes_read_as_their_characters_and_a_list_of_links_as_a_list(browser, made):  # noqa: F811
    site, db = made
    browser.get(f"{site}/posts/{post_id(db, 'https://made.test/a')}")
    assert "今天不写代码了~ 休息一下。" in browser.find_element(By.CSS_SELECTOR, ".post-body").text
    browser.get(f"{site}/posts/{post_id(db, 'https://made.test/b')}")
    items = browser.find_elements(By.CSS_SELECTOR, ".post-body ul > li > a")
    assert [(a.text, a.get_attribute("href")) for a in items] == [
        ("Known Issues", "https://made.test/issues"), ("Pricing", "https://made.test/pricing")]


def test_an_image_not_archived_is_its_alt_text_and_a_link_to_the_original(browser, made):  # noqa: F811
    site, db = made
    browser.get(f"{site}/posts/{post_id(db, 'https://made.test/b')}")
    missing = browser.find_element(By.CSS_SELECTOR, ".post-body .media-missing a")
    assert (missing.text, missing.get_attribute("href")) == ("A missing chart", "https://made.test/chart.png")
    assert not browser.find_elements(By.CSS_SELECTOR, ".post-body img")
    assert not [e for e in console(browser) if "Content Security Policy" in e]


def test_reading_time_and_the_blogs_previous_and_next_posts(browser, made):  # noqa: F811
    site, db = made
    browser.get(f"{site}/posts/{post_id(db, 'https://made.test/b')}")
    byline = browser.find_element(By.CSS_SELECTOR, ".post-byline").text
    assert "published 12 March 2024" in byline and "4 min read" in byline  # 702 words
    older = browser.find_element(By.CSS_SELECTOR, ".post-neighbours .post-older")
    newer = browser.find_element(By.CSS_SELECTOR, ".post-neighbours .post-newer")
    assert "第一篇" in older.text and older.get_attribute("href").endswith(f"/posts/{post_id(db, 'https://made.test/a')}")
    assert "Third" in newer.text  # not Elsewhere, of another blog, published between them
    browser.get(f"{site}/posts/{post_id(db, 'https://made.test/c')}")
    assert not browser.find_elements(By.CSS_SELECTOR, ".post-neighbours .post-newer")


def luminance(rgb: str) -> float:
    r, g, b = (int(v) for v in re.findall(r"\d+", rgb)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_page_follows_the_systems_colour_scheme(browser, corpus, scheme):  # noqa: F811
    _, page = open_both(browser, corpus, "leventarican-zola-en")
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
    try:
        browser.get(page)
        body = browser.find_element(By.TAG_NAME, "body")
        background = luminance(browser.execute_script("return getComputedStyle(arguments[0]).backgroundColor", body))
        text = luminance(browser.execute_script("return getComputedStyle(arguments[0]).color",
                                                browser.find_element(By.CSS_SELECTOR, ".post-body p")))
        assert (background < 60 and text > 180) if scheme == "dark" else (background > 200 and text < 80)
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


@pytest.mark.parametrize("name", POSTS)
def test_a_phone_reads_the_post_at_its_width(browser, corpus, name):  # noqa: F811
    _, page = open_both(browser, corpus, name)
    with viewport(browser, PHONE):
        browser.get(page)
        assert fits(browser, PHONE)  # wide tables and code scroll inside themselves
        first = browser.find_element(By.CSS_SELECTOR, ".post-body p")
        where = browser.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.left, r.width, r.top]", first)
        size = float(browser.execute_script("return parseFloat(getComputedStyle(arguments[0]).fontSize)", first))
        assert where[0] < 24 and where[1] > PHONE[0] * 0.85 and size >= 16 and where[2] < PHONE[1]


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:
    folder = os.environ.get("BLOGARCHIVE_SCREENSHOTS")
    return Path(folder) if folder else tmp_path_factory.mktemp("screenshots")


@pytest.fixture
def scheme(browser, request):  # noqa: F811
    """The system's colour scheme the browser reports to pages (``light`` or ``dark``)."""
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": request.param}]})
    yield request.param
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


# each page, and what must be above the fold on it
PAGES = {
    "front-page": ("/", ".archive-newest .post-title"),
    "post": ("/{db}/posts/{post}", ".post-body p"),
    "search": ("/{db}/search?q=%E9%83%A8%E7%BD%B2", "td.col-snippet"),
    "changes": ("/{db}/changes", "td.col-word_diff"),
}


@pytest.mark.parametrize("scheme", ["light", "dark"], indirect=True)
@pytest.mark.parametrize("size", [pytest.param(DESKTOP, id="desktop"), pytest.param(PHONE, id="phone")])
@pytest.mark.parametrize("page", PAGES)
def test_each_page_fits_the_window_its_content_above_the_fold(browser, corpus, screenshots, page, size, scheme):  # noqa: F811
    blogs, site, db = corpus
    base, database = site.rsplit("/", 1)
    post = post_id(db, blogs["leventarican-zola-en"][1] + POSTS["leventarican-zola-en"][0])
    path, first = PAGES[page]
    with viewport(browser, size):
        browser.get(base + path.format(db=database, post=post))
        # on a loaded machine the page may still be on its way when get() returns
        element = WebDriverWait(browser, 20).until(lambda b: b.find_element(By.CSS_SELECTOR, first))
        top = browser.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.top, r.left, r.right]", element)
        assert top[0] < size[1] - 40 and 0 <= top[1] < size[0] and element.is_displayed()
        assert fits(browser, size)
        background = luminance(browser.execute_script("return getComputedStyle(document.body).backgroundColor"))
        assert background < 60 if scheme == "dark" else background > 200
        name = f"reading-{page}-{'desktop' if size == DESKTOP else 'phone'}-{scheme}.png"
        browser.save_screenshot(str(screenshots / name))
        if page == "post":  # its list, table, code and images further down, each image loaded
            for img in browser.find_elements(By.CSS_SELECTOR, ".post-body img"):
                browser.execute_script("arguments[0].scrollIntoView()", img)
            browser.execute_script("arguments[0].scrollIntoView()", browser.find_element(By.CSS_SELECTOR, ".post-body ul"))
            browser.execute_script("window.scrollBy(0, -arguments[0])", size[1] // 4)
            browser.save_screenshot(str(screenshots / name.replace("-post-", "-post-body-")))
    assert not [e for e in console(browser) if "Content Security Policy" in e]
