"""The archive in a real headless Chromium, as a visitor sees it.

Debian's ``chromium`` and ``chromium-driver`` (.ci/run installs them) are driven
by Selenium through ``/usr/bin/chromedriver``; no browser is downloaded.
``BLOGARCHIVE_SCREENSHOTS=docs/screenshots`` keeps the front page, posts table
and post page screenshots for the README (a temporary folder otherwise).
"""

import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import EXPECTED, HOSTILE, IMG_PAYLOAD, SCRIPT_PAYLOAD
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1280,900", "--hide-scrollbars", "--force-device-scale-factor=1",
]
NEWEST_FIRST = [p["title"] for p in sorted(EXPECTED["posts"], key=lambda p: p["published"], reverse=True)]
ZH_TITLES = sorted(p["title"] for p in EXPECTED["posts"] if p["lang"] == "zh")
ATOM = "{http://www.w3.org/2005/Atom}"


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


def screenshot(browser: WebDriver, path: Path, *, down_to: str = "footer") -> None:
    """Save the page, from its top to the end of the element ``down_to``, as a PNG."""
    height = browser.execute_script(
        "const box = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return Math.ceil(box.bottom + window.scrollY + 16)", down_to)
    browser.set_window_size(1280, height + browser.execute_script("return window.outerHeight - window.innerHeight"))
    browser.save_screenshot(str(path))
    browser.set_window_size(1280, 900)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 20_000


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


def test_front_page(browser, site, screenshots):
    base, database = site
    browser.get(base + "/")
    assert browser.find_element(By.TAG_NAME, "h1").text == "blogarchive"
    newest = [a.text for a in browser.find_elements(By.CSS_SELECTOR, ".archive-newest .post-title")]
    assert newest == NEWEST_FIRST
    blog = browser.find_element(By.CSS_SELECTOR, ".archive-blogs tbody tr").text
    assert EXPECTED["host"] in blog and " 7 " in f" {blog} " and "ok" in blog
    assert "finished" in browser.find_element(By.CSS_SELECTOR, ".archive-last-crawl").text
    assert browser.find_element(By.LINK_TEXT, "Crawl health per blog").get_attribute("href") == database + "/crawl_health"
    screenshot(browser, screenshots / "front-page.png")


def wait_for_rows(browser: WebDriver) -> None:
    """Wait until the page shows a results table with rows; fail with what it shows instead."""
    try:
        WebDriverWait(browser, 20).until(lambda b: b.execute_script("return document.readyState") == "complete"
                                         and b.find_elements(By.CSS_SELECTOR, "table.rows-and-columns td"))
    except TimeoutException:
        pytest.fail(f"no rows on {browser.current_url}: {browser.title!r}, "
                    f"{browser.find_element(By.TAG_NAME, 'body').text[:500]!r}")


def test_posts_table_and_a_facet_click(browser, site, screenshots):
    _, database = site
    browser.get(database + "/posts")
    wait_for_rows(browser)
    assert column(browser, "title") == NEWEST_FIRST
    assert browser.find_element(By.CSS_SELECTOR, "#facet-lang").is_displayed()
    screenshot(browser, screenshots / "posts-table.png", down_to=".table-wrapper")
    follow(browser, browser.find_element(By.CSS_SELECTOR, "#facet-lang").find_element(By.LINK_TEXT, "zh"))
    assert "lang=zh" in browser.current_url
    assert sorted(column(browser, "title")) == ZH_TITLES


def test_post_page_and_its_tag_links(browser, site, screenshots):
    base, _ = site
    browser.get(base + "/")
    follow(browser, browser.find_element(By.LINK_TEXT, "Notes on SQLite WAL Mode"))
    assert browser.find_element(By.CSS_SELECTOR, "article.post h1").text == "Notes on SQLite WAL Mode"
    byline = browser.find_element(By.CSS_SELECTOR, ".post-byline").text
    assert "Dana Whitfield" in byline and EXPECTED["host"] in byline and "2023-09-03 09:30:00 UTC" in byline
    original = browser.find_element(By.CSS_SELECTOR, ".post-original a")
    assert original.get_attribute("href") == f"http://{EXPECTED['host']}/p/103/"
    paragraphs = browser.find_elements(By.CSS_SELECTOR, ".post-body p")
    assert len(paragraphs) >= 3 and "WAL" in browser.find_element(By.CSS_SELECTOR, ".post-body").text
    assert not browser.find_element(By.CSS_SELECTOR, "details.post-fields").get_attribute("open")
    screenshot(browser, screenshots / "post-page.png", down_to="details.post-fields")
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
