"""Post images shown from the archive: the Datasette route, its headers, and a real Chromium
reading the post pages after the blog's servers have stopped."""

import urllib.error
import urllib.request
from email.message import Message
from pathlib import Path

import pytest
from conftest import rows, serving
from mediablog import CDN, HOST, SVG_SCRIPT, SiteServer, media_blog, media_cdn
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from test_browser import browser  # noqa: F401  (the module's headless Chromium)
from test_media import media_crawl

BASE = f"http://{HOST}"


@pytest.fixture(scope="module")
def archived(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The media blog crawled, its servers stopped: only the archive has its images now."""
    db = tmp_path_factory.mktemp("media-pages") / "archive.db"
    with SiteServer(media_blog()) as blog, SiteServer(media_cdn()) as cdn:
        media_crawl(db, blog, cdn)
    return db


@pytest.fixture(scope="module")
def served(archived: Path):
    with serving(archived) as base:
        yield base, archived.stem


def media_id(db: Path, url: str) -> int:
    return rows(db, "select id from media where url = ?", (url,))[0]["id"]


def post_id(db: Path, path: str) -> int:
    return rows(db, "select id from posts where url = ?", (BASE + path,))[0]["id"]


def get(url: str) -> tuple[int, Message, bytes]:
    """Status, headers (their names in any case) and body."""
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def natural_widths(browser, css: str) -> list[int]:  # noqa: F811  (the fixture's name)
    """The natural widths of the images ``css`` selects, once each has loaded (they load lazily)."""
    images = browser.find_elements(By.CSS_SELECTOR, css)
    for image in images:
        browser.execute_script("arguments[0].scrollIntoView()", image)
        WebDriverWait(browser, 10).until(lambda b, i=image: b.execute_script("return arguments[0].complete", i))
    return [browser.execute_script("return arguments[0].naturalWidth", i) for i in images]


def test_an_image_is_served_from_the_archive_with_a_strict_policy(archived, served) -> None:
    base, database = served
    status, headers, body = get(f"{base}/-/blogarchive/{database}/media/{media_id(archived, BASE + '/img/diagram.png')}")
    assert (status, headers["content-type"], body) == (200, "image/png", media_blog()["/img/diagram.png"][1])
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["content-security-policy"] == "default-src 'none'; style-src 'unsafe-inline'; sandbox"


def test_the_svg_is_served_as_an_image_under_sandbox(archived, served) -> None:
    base, database = served
    status, headers, body = get(f"{base}/-/blogarchive/{database}/media/{media_id(archived, BASE + '/img/drawing.svg')}")
    assert (status, headers["content-type"], body) == (200, "image/svg+xml", SVG_SCRIPT)
    assert "sandbox" in headers["content-security-policy"] and "default-src 'none'" in headers["content-security-policy"]


@pytest.mark.parametrize("path", ["/img/fake.jpg", "/img/missing.png", "/v/clip.mp4"])
def test_what_is_not_archived_is_not_served(archived, served, path: str) -> None:
    base, database = served
    assert get(f"{base}/-/blogarchive/{database}/media/{media_id(archived, BASE + path)}")[0] == 404


def test_the_post_page_shows_its_archived_images_with_the_blog_gone(browser, archived, served) -> None:  # noqa: F811
    base, database = served
    browser.get(f"{base}/{database}/posts/{post_id(archived, '/p/1/')}")
    images = browser.find_elements(By.CSS_SELECTOR, "article.post img")
    assert [i.get_attribute("alt") for i in images] == ["A diagram", "A photo", ""]
    assert all(src.startswith(f"{base}/-/blogarchive/{database}/media/") for src in (i.get_attribute("src") for i in images))
    assert natural_widths(browser, "article.post img") == [64, 1280, 600]


def test_a_missing_image_shows_its_alt_text(browser, archived, served) -> None:  # noqa: F811
    base, database = served
    browser.get(f"{base}/{database}/posts/{post_id(archived, '/p/3/')}")
    missing = browser.find_element(By.CSS_SELECTOR, ".media-missing")
    assert "The missing one" in missing.text and "http 404" in missing.text
    assert natural_widths(browser, "article.post img") == [100]


def test_the_svg_script_never_runs(browser, archived, served) -> None:  # noqa: F811
    base, database = served
    browser.get(f"{base}/{database}/posts/{post_id(archived, '/p/2/')}")
    assert natural_widths(browser, "article.post img[alt='A drawing']") == [120]
    browser.get(browser.find_element(By.CSS_SELECTOR, "article.post img[alt='A drawing']").get_attribute("src"))  # opened on its own, where a script could run
    assert browser.find_element(By.ID, "box").get_attribute("data-ran") is None
    with SiteServer(media_blog()) as blog:  # the control: as the blog served it, its script runs
        browser.get(blog.base + "/img/drawing.svg")
        assert browser.find_element(By.ID, "box").get_attribute("data-ran") == "yes"


def test_the_cdn_image_is_served_from_the_archive_too(archived, served) -> None:
    base, database = served
    status, headers, _ = get(f"{base}/-/blogarchive/{database}/media/{media_id(archived, f'http://{CDN}/c/remote.png')}")
    assert (status, headers["content-type"]) == (200, "image/png")
