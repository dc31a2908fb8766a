"""The archive in a real headless Chromium, as a visitor sees it.

Debian's ``chromium`` and ``chromium-driver`` (.ci/run installs them) are driven
by Selenium through ``/usr/bin/chromedriver``; no browser is downloaded.
``BLOGARCHIVE_SCREENSHOTS=docs/screenshots`` keeps the screenshots of the front
page, the posts table, a post and a Chinese search, at 1,280 x 900 and at a phone's
width, for the README (a temporary folder otherwise). Each page is checked as a
visitor first sees it: what is above the fold, the first 900 (or 844) pixels.
"""

import contextlib
import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import quote, unquote

import pytest
from conftest import EXPECTED, HOSTILE, IMG_PAYLOAD, SCRIPT_PAYLOAD, serving
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

import archive

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1280,900", "--hide-scrollbars", "--force-device-scale-factor=1",
]
NEWEST_FIRST = [p["title"] for p in sorted(EXPECTED["posts"], key=lambda p: p["published"], reverse=True)]
ZH_TITLES = sorted(p["title"] for p in EXPECTED["posts"] if p["lang"] == "zh")
ATOM = "{http://www.w3.org/2005/Atom}"
DESKTOP, PHONE = (1280, 900), (390, 844)  # a window's inner width and height: what is above the fold
VIEWPORTS = [pytest.param(DESKTOP, id="desktop"), pytest.param(PHONE, id="phone")]
# an archive as real blogs leave it: a post under a percent-encoded Chinese URL, and an error
# about an image on another host whose URL is longer than a window is wide
ROUGH_URL = "https://rough.test/2024/05/%E5%86%85%E5%AD%98%E6%B3%84%E6%BC%8F/"
ROUGH_ERROR = "DNS lookup failed for https://images.another.example/uploads/" + "%E5%86%85%E5%AD%98" * 12 + ".png"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and chromedriver):
        why = "Debian's chromium and chromium-driver are not installed (.ci/run installs them)"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in [*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # CSP violations are console errors
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = os.environ.get("BLOGARCHIVE_SCREENSHOTS")
    return Path(folder) if folder else tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="module")
def site(example_datasette, example_archive):
    """The example archive: its base URL and its database's."""
    return example_datasette, example_datasette + "/" + example_archive.stem


@pytest.fixture(scope="module")
def rough_site(tmp_path_factory: pytest.TempPathFactory):
    """An archive with a post under ``ROUGH_URL`` and a crawl whose error is ``ROUGH_ERROR``,
    served: its base URL and its database's."""
    path = tmp_path_factory.mktemp("rough") / "rough.db"
    db = archive.open_archive(path)
    source = archive.ensure_source(db, "https://rough.test/")
    run = archive.start_run(db, [source["id"]])
    archive.save_post(db, {"url": ROUGH_URL, "title": "内存泄漏", "text": "一次内存泄漏的排查。", "lang": "zh",
                           "published": "2024-05-18T00:00:00Z", "tags": ["笔记"], "source_id": source["id"]}, run_id=run)
    archive.save_error(db, run_id=run, source_id=source["id"], url=ROUGH_URL, kind="media", message=ROUGH_ERROR)
    archive.finish_run(db, run, status="finished", seconds=1, pages=1)
    archive.update_source(db, source["id"], last_crawl_at=archive.get_run(db, run)["finished_at"], last_status="ok, 1 errors")
    db.close()
    with serving(path) as base:
        yield base, base + "/" + path.stem


@contextlib.contextmanager
def viewport(browser: WebDriver, size: tuple[int, int]):
    """The browser's window with an inner ``size`` (width, height), 1,280 x 900 again after."""
    chrome = browser.execute_script("return [window.outerWidth - window.innerWidth, window.outerHeight - window.innerHeight]")
    browser.set_window_size(size[0] + chrome[0], size[1] + chrome[1])
    assert browser.execute_script("return [window.innerWidth, window.innerHeight]") == list(size)
    try:
        yield
    finally:
        browser.set_window_size(DESKTOP[0] + chrome[0], DESKTOP[1] + chrome[1])


def screenshot(browser: WebDriver, path: Path, *, down_to: str = "footer") -> None:
    """Save the page, from its top to the end of the element ``down_to``, as a PNG, at the window's width."""
    width, height = browser.execute_script(
        "const box = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return [window.innerWidth, Math.ceil(box.bottom + window.scrollY + 16)]", down_to)
    with viewport(browser, (width, height)):
        browser.save_screenshot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 20_000


def fold_shot(browser: WebDriver, path: Path) -> None:
    """Save what the window shows, the page's top above the fold, as a PNG."""
    browser.save_screenshot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000


def box(browser: WebDriver, element: WebElement) -> dict[str, float]:
    """Where ``element`` is in the page as it opens (top, bottom, left, right, in CSS pixels)."""
    return browser.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return {top: r.top + window.scrollY, bottom: r.bottom + window.scrollY, left: r.left, right: r.right}", element)


def above_the_fold(browser: WebDriver, element: WebElement, size: tuple[int, int]) -> bool:
    """Whether ``element`` starts in the window as the page opens, neither below it nor off to its right."""
    where = box(browser, element)
    return where["top"] < size[1] and where["left"] < size[0] and element.is_displayed()


def fits(browser: WebDriver, size: tuple[int, int]) -> bool:
    """Whether the page is no wider than the window (nothing to scroll sideways to)."""
    return browser.execute_script("return document.documentElement.scrollWidth") <= size[0]


def follow(browser: WebDriver, link: WebElement) -> None:
    """Click a link (or submit) and wait for the next page."""
    page = browser.find_element(By.TAG_NAME, "html")
    link.click()
    WebDriverWait(browser, 20).until(expected_conditions.staleness_of(page))


def column(browser: WebDriver, name: str) -> list[str]:
    """The visible texts of a results table's column."""
    return [td.text for td in browser.find_elements(By.CSS_SELECTOR, f"table.rows-and-columns td.col-{name}")]


def search_in_table(browser: WebDriver, url: str, words: str) -> list[str]:
    browser.get(url)
    box = browser.find_element(By.ID, "_search")
    box.send_keys(words)
    page = browser.find_element(By.TAG_NAME, "html")
    box.send_keys(Keys.ENTER)
    WebDriverWait(browser, 20).until(expected_conditions.staleness_of(page))
    return sorted(column(browser, "title"))


def wait_for_rows(browser: WebDriver) -> None:
    """Wait until the page shows a results table with rows; fail with what it shows instead."""
    try:
        WebDriverWait(browser, 20).until(lambda b: b.execute_script("return document.readyState") == "complete"
                                         and b.find_elements(By.CSS_SELECTOR, "table.rows-and-columns td"))
    except TimeoutException:
        pytest.fail(f"no rows on {browser.current_url}: {browser.title!r}, "
                    f"{browser.find_element(By.TAG_NAME, 'body').text[:500]!r}")


def shoot(browser: WebDriver, screenshots: Path, name: str, size: tuple[int, int], *, down_to: str = "footer") -> None:
    """The README's screenshot of a page: ``NAME.png``, the page down to ``down_to`` at 1,280 px;
    ``NAME-phone.png``, what a phone shows of it."""
    if size == DESKTOP:
        screenshot(browser, screenshots / f"{name}.png", down_to=down_to)
    else:
        fold_shot(browser, screenshots / f"{name}-phone.png")


@pytest.mark.parametrize("size", VIEWPORTS)
def test_front_page_above_the_fold(browser, site, screenshots, size):
    base, _ = site
    with viewport(browser, size):
        browser.get(base + "/")
        assert above_the_fold(browser, browser.find_element(By.ID, "archive-search"), size)
        newest = browser.find_elements(By.CSS_SELECTOR, ".archive-newest .post-title")
        assert newest[0].text == NEWEST_FIRST[0] and above_the_fold(browser, newest[0], size)
        assert fits(browser, size)
        shoot(browser, screenshots, "front-page", size)


@pytest.mark.parametrize("size", VIEWPORTS)
def test_front_page_fits_the_window_whatever_its_errors(browser, rough_site, size):
    base, _ = rough_site
    with viewport(browser, size):
        browser.get(base + "/")
        assert "rough.test" in browser.find_element(By.CSS_SELECTOR, ".archive-blogs").text
        assert fits(browser, size)


@pytest.mark.parametrize("size", VIEWPORTS)
def test_posts_table_opens_on_the_posts(browser, site, screenshots, size):
    _, database = site
    with viewport(browser, size):
        browser.get(database + "/posts")
        wait_for_rows(browser)
        first = browser.find_element(By.CSS_SELECTOR, "table.rows-and-columns tbody tr")
        cells = first.find_elements(By.TAG_NAME, "td")
        assert [c.get_attribute("class").split()[0] for c in cells[:4]] == [
            "col-title", "col-source_id", "col-published", "col-tags"]
        title = cells[0].find_element(By.TAG_NAME, "a")
        assert title.text == NEWEST_FIRST[0] and title.get_attribute("href").startswith(database + "/posts/")
        assert all(above_the_fold(browser, cell, size) for cell in cells[:4]) and fits(browser, size)
        # the facets beside the posts or below them, never above
        facets, rows = (box(browser, browser.find_element(By.CSS_SELECTOR, s)) for s in ("#facet-lang", ".table-wrapper"))
        assert facets["left"] >= rows["right"] or facets["top"] >= rows["bottom"]
        shoot(browser, screenshots, "posts-table", size, down_to=".table-and-facets")
        # every column is still there, its description one click away
        columns = {th.get_attribute("data-column") for th in browser.find_elements(By.CSS_SELECTOR, "table.rows-and-columns th")}
        assert {"id", "url", "author", "lang", "word_count", "first_seen"} <= columns
        descriptions = browser.find_element(By.CSS_SELECTOR, "dl.column-descriptions")
        assert not descriptions.is_displayed()
        browser.find_element(By.CSS_SELECTOR, "details.column-descriptions summary").click()
        assert descriptions.is_displayed() and "ISO 639-1" in descriptions.text


def test_urls_read_decoded_in_the_posts_table_and_on_a_post(browser, rough_site):
    _, database = rough_site
    browser.get(database + "/posts")
    wait_for_rows(browser)
    link = browser.find_element(By.CSS_SELECTOR, "td.col-url a")
    assert link.text == unquote(ROUGH_URL) and link.get_attribute("href") == ROUGH_URL
    follow(browser, browser.find_element(By.CSS_SELECTOR, "td.col-title a"))
    link = browser.find_element(By.CSS_SELECTOR, ".post-original a")
    assert link.text == unquote(ROUGH_URL) and link.get_attribute("href") == ROUGH_URL


@pytest.mark.parametrize("size", VIEWPORTS)
def test_post_page_above_the_fold(browser, site, screenshots, size):
    base, _ = site
    with viewport(browser, size):
        browser.get(base + "/")
        follow(browser, browser.find_element(By.LINK_TEXT, "Notes on SQLite WAL Mode"))
        for selector in ("article.post h1", ".post-byline", ".post-tags", ".post-body p"):
            assert above_the_fold(browser, browser.find_element(By.CSS_SELECTOR, selector), size), selector
        assert fits(browser, size)
        shoot(browser, screenshots, "post-page", size, down_to="details.post-fields")


@pytest.mark.parametrize("size", VIEWPORTS)
def test_chinese_search_reads_as_search_results(browser, site, screenshots, size):
    base, _ = site
    with viewport(browser, size):
        browser.get(base + "/")
        browser.find_element(By.ID, "archive-search").send_keys("内存")
        follow(browser, browser.find_element(By.CSS_SELECTOR, "form.archive-search input[type=submit]"))
        assert column(browser, "title") == ["记一次 Node.js 服务的内存泄漏排查"]
        for selector in ("td.col-title a", "td.col-snippet mark"):
            assert above_the_fold(browser, browser.find_element(By.CSS_SELECTOR, selector), size), selector
        text = browser.find_element(By.TAG_NAME, "body").text
        assert "1 result" in text and "Custom SQL query" not in text and "select" not in browser.title
        assert browser.find_element(By.CSS_SELECTOR, "form.canned-query input[name=q]").get_attribute("value") == "内存"
        assert [b.get_attribute("value") for b in browser.find_elements(By.CSS_SELECTOR, "input[type=submit]")] == ["Search"]
        assert fits(browser, size)
        shoot(browser, screenshots, "search", size, down_to=".table-wrapper")


def test_a_searchs_sql_is_one_click_away(browser, site):
    _, database = site
    browser.get(database + "/search?q=" + quote("内存"))
    assert not browser.find_elements(By.ID, "sql-query")
    follow(browser, browser.find_element(By.LINK_TEXT, "show the SQL"))
    assert "posts_search_has" in browser.find_element(By.ID, "sql-query").text
    assert column(browser, "title") == ["记一次 Node.js 服务的内存泄漏排查"]


def test_front_page(browser, site):
    base, database = site
    browser.get(base + "/")
    assert browser.find_element(By.TAG_NAME, "h1").text == "blogarchive"
    newest = [a.text for a in browser.find_elements(By.CSS_SELECTOR, ".archive-newest .post-title")]
    assert newest == NEWEST_FIRST
    blog = browser.find_element(By.CSS_SELECTOR, ".archive-blogs tbody tr").text
    assert EXPECTED["host"] in blog and " 7 " in f" {blog} " and "ok" in blog
    assert "finished" in browser.find_element(By.CSS_SELECTOR, ".archive-last-crawl").text
    assert browser.find_element(By.LINK_TEXT, "Crawl health per blog").get_attribute("href") == database + "/crawl_health"


def test_posts_table_and_a_facet_click(browser, site):
    _, database = site
    browser.get(database + "/posts")
    wait_for_rows(browser)
    assert column(browser, "title") == NEWEST_FIRST
    assert browser.find_element(By.CSS_SELECTOR, "#facet-lang").is_displayed()
    follow(browser, browser.find_element(By.CSS_SELECTOR, "#facet-lang").find_element(By.LINK_TEXT, "zh"))
    assert "lang=zh" in browser.current_url
    assert sorted(column(browser, "title")) == ZH_TITLES


def test_post_page_and_its_tag_links(browser, site):
    base, _ = site
    browser.get(base + "/")
    follow(browser, browser.find_element(By.LINK_TEXT, "Notes on SQLite WAL Mode"))
    assert browser.find_element(By.CSS_SELECTOR, "article.post h1").text == "Notes on SQLite WAL Mode"
    byline = browser.find_element(By.CSS_SELECTOR, ".post-byline").text
    assert "Dana Whitfield" in byline and EXPECTED["host"] in byline and "published 3 September 2023" in byline
    original = browser.find_element(By.CSS_SELECTOR, ".post-original a")
    assert original.get_attribute("href") == f"http://{EXPECTED['host']}/p/103/"
    paragraphs = browser.find_elements(By.CSS_SELECTOR, ".post-body p")
    assert len(paragraphs) >= 3 and "WAL" in browser.find_element(By.CSS_SELECTOR, ".post-body").text
    assert not browser.find_element(By.CSS_SELECTOR, "details.post-fields").get_attribute("open")
    follow(browser, browser.find_element(By.CSS_SELECTOR, ".post-tags").find_element(By.LINK_TEXT, "databases"))
    assert sorted(column(browser, "title")) == sorted(p["title"] for p in EXPECTED["posts"] if "databases" in p["tags"])


def test_english_search(browser, site):
    _, database = site
    found = search_in_table(browser, database + "/posts", "sqlite")
    assert "Notes on SQLite WAL Mode" in found and "Being a Polite Crawler with Scrapy" not in found


def test_chinese_search_of_two_characters(browser, site):
    _, database = site
    assert search_in_table(browser, database + "/posts", "内存") == ["记一次 Node.js 服务的内存泄漏排查"]


def test_front_page_search_highlights_snippets(browser, site):
    base, _ = site
    browser.get(base + "/")
    box = browser.find_element(By.ID, "archive-search")
    box.send_keys("内存")
    follow(browser, browser.find_element(By.CSS_SELECTOR, "form.archive-search input[type=submit]"))
    assert column(browser, "title") == ["记一次 Node.js 服务的内存泄漏排查"]
    marks = browser.find_elements(By.CSS_SELECTOR, "td.col-snippet mark")
    assert marks and {m.text for m in marks} == {"内存"}
    assert not browser.find_elements(By.CSS_SELECTOR, "td.col-atom_content_html")[0].is_displayed()


def fetch(browser: WebDriver, url: str) -> str:
    """The body of ``url``, fetched by the page the browser shows."""
    return browser.execute_async_script(
        "const done = arguments[1]; fetch(arguments[0]).then(r => r.text()).then(done)", url)


def test_atom_feed_link(browser, site):
    _, database = site
    browser.get(database + "/latest")
    feed = browser.find_element(By.LINK_TEXT, "atom").get_attribute("href")
    entries = ET.fromstring(fetch(browser, feed).encode()).findall(ATOM + "entry")
    assert [e.find(ATOM + "title").text for e in entries] == NEWEST_FIRST


@pytest.mark.parametrize("path", [
    pytest.param("/", id="front-page"),
    pytest.param("/{db}", id="database"),
    pytest.param("/{db}/posts", id="posts"),
    pytest.param("/{db}/posts/1", id="post"),
    pytest.param("/{db}/posts?_search=hostile", id="table-search"),
    pytest.param("/{db}/posts?_search=" + quote("<script>"), id="table-search-payload"),
    pytest.param("/{db}/posts?tags__arraycontains=" + quote(SCRIPT_PAYLOAD), id="tag-link"),
    pytest.param("/{db}/search?q=onerror", id="search-onerror"),
    pytest.param("/{db}/search?q=text", id="search-snippet"),
    pytest.param("/{db}/latest", id="latest"),
    pytest.param("/{db}/tag_cloud", id="tag-cloud"),
])
def test_archived_scripts_never_run(browser, hostile_datasette, path):
    base, database = hostile_datasette.rsplit("/", 1)
    browser.get(base + path.format(db=database))
    WebDriverWait(browser, 10).until(lambda b: b.execute_script("return document.readyState") == "complete")
    assert browser.execute_script("return window.__xss") is None
    assert browser.title != "pwned"
    assert not browser.find_elements(By.CSS_SELECTOR, "[onerror], [onmouseover], a[href^='javascript:']")
    assert not [s for s in browser.find_elements(By.TAG_NAME, "script") if "__xss" in (s.get_attribute("innerHTML") or "")]
    text = browser.find_element(By.TAG_NAME, "body").text
    assert SCRIPT_PAYLOAD in text or IMG_PAYLOAD in text


def test_hostile_post_page_shows_every_payload_as_text(browser, hostile_datasette):
    browser.get(hostile_datasette + "/posts/1")
    assert browser.find_element(By.CSS_SELECTOR, "article.post h1").text == HOSTILE["title"]
    assert IMG_PAYLOAD in browser.find_element(By.CSS_SELECTOR, ".post-byline").text
    assert [a.text for a in browser.find_elements(By.CSS_SELECTOR, ".post-tags a")] == HOSTILE["tags"]
    body = browser.find_element(By.CSS_SELECTOR, ".post-body").text
    assert SCRIPT_PAYLOAD in body and IMG_PAYLOAD in body and "hover me" in body
    assert browser.execute_script("return window.__xss") is None


def console(browser: WebDriver) -> list[str]:
    """The console's messages since the last call (reading them empties the log)."""
    return [entry["message"] for entry in browser.get_log("browser")]


@pytest.mark.parametrize("path, ran", [
    pytest.param("/", "true", id="front-page"),
    pytest.param("/{db}", "document.querySelector('.CodeMirror') !== null", id="database-sql-editor"),
    pytest.param("/{db}/posts", "document.querySelector('th svg.dropdown-menu-icon') !== null "
                                "&& DATASETTE_ALLOW_FACET === true", id="posts-column-menus"),
    pytest.param("/{db}/posts/1", "true", id="post"),
    pytest.param("/{db}/search?q=sqlite", "true", id="search"),
    pytest.param("/{db}/search?q=zzzqqqnothing", "true", id="search-nothing"),
    pytest.param("/{db}/tag_cloud", "true", id="tag-cloud"),
    pytest.param("/{db}?sql=select+1", "document.querySelector('.CodeMirror') !== null", id="sql"),
])
def test_pages_run_their_own_scripts_under_the_policy_and_no_other(browser, site, path, ran):
    base, database = site
    console(browser)
    browser.get(base + path.format(db=database.rsplit("/", 1)[1]))
    WebDriverWait(browser, 10).until(lambda b: b.execute_script("return document.readyState") == "complete")
    assert browser.execute_script(f"return {ran}")  # Datasette's own scripts ran
    assert not [m for m in console(browser) if "Content Security Policy" in m]
    # a script the page did not come with (as markup from an archived page would be) is refused
    browser.execute_script("const s = document.createElement('script'); s.textContent = 'window.__xss = 3';"
                           "document.body.appendChild(s)")
    assert browser.execute_script("return window.__xss") is None
    assert [m for m in console(browser) if "Content Security Policy" in m]
