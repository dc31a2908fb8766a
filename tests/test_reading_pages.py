"""Pages that show their content, not their plumbing, in a real headless Chromium on a real
``blogarchive serve``: Recent changes as a page (the grade a choice, the diff as deletions and
insertions, the share as a percentage, the title a link to the archived post and its history),
no SQL on any query the front page links to unless asked, the front page's undated posts last and
saying so in full, its dates as dates."""

import re

import pytest
from conftest import serving
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait
from test_browser import browser  # noqa: F401 (the fixture)

import archive
from archive.tables.history import record_version

URL = "https://changing.test/p/1"
TEXT = " ".join(f"Sentence {i} of a post about databases and their write-ahead logs." for i in range(40))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """An archive whose post was edited twice, with an undated page among dated posts; served."""
    path = tmp_path_factory.mktemp("changes") / "changes.db"
    db = archive.open_archive(path)
    source = archive.ensure_source(db, "https://changing.test/")

    def save(url: str, **fields) -> None:
        post = {"source_id": source["id"], "url": url, "title": "Write-ahead logs", "text": TEXT, "markdown": TEXT,
                "published": "2024-03-12T08:00:00Z", **fields}
        run = archive.start_run(db, [source["id"]])
        archive.save_post(db, post, run_id=run)
        record_version(db, url, run_id=run)
        archive.finish_run(db, run, status="finished", seconds=1, pages=1)

    save(URL)
    save(URL, text=TEXT.replace("databases", "databse", 1))
    save(URL, text=TEXT.replace("databases", "databse", 1).replace("Sentence 3 of", "Sentence three, rewritten at length, of"))
    save("https://changing.test/resume", title="Resume", published=None, text="My resume.", markdown="My resume.")
    save("https://changing.test/p/0", title="An older post", published="2023-01-05T00:00:00Z")
    db.close()
    with serving(path) as base:
        yield base, base + "/" + path.stem


def test_recent_changes_read_as_a_page(browser, site):  # noqa: F811
    base, database = site
    browser.get(database + "/changes")
    assert not browser.find_elements(By.ID, "sql-query")  # no SQL until asked
    grade = Select(browser.find_element(By.CSS_SELECTOR, "select[name=min_grade]"))
    assert [o.text for o in grade.options] == ["typo", "edit", "title", "retraction", "gone"]
    edit = browser.find_element(By.XPATH, "//tr[td[contains(@class, 'col-grade') and normalize-space() = 'edit']]")
    assert edit.find_element(By.CSS_SELECTOR, ".col-word_diff ins").text == "three, rewritten at length,"
    assert edit.find_element(By.CSS_SELECTOR, ".col-word_diff del").text == "3"
    assert "[-" not in edit.text and "{+" not in edit.text
    assert re.fullmatch(r"\d{1,2} [A-Z][a-z]+ \d{4}, \d\d:\d\d UTC", edit.find_element(By.CSS_SELECTOR, ".col-at").text)
    share = edit.find_element(By.CSS_SELECTOR, ".col-changed_share").text
    assert share.endswith(" %") and 0 < float(share.removesuffix(" %").lstrip("< ")) < 5
    links = {a.text: a.get_attribute("href") for a in edit.find_elements(By.CSS_SELECTOR, ".col-title a")}
    assert links["Write-ahead logs"].startswith(database + "/posts/")
    assert links["history"].startswith(database + "/post_versions?post_id=")
    grade.select_by_visible_text("edit")
    browser.find_element(By.CSS_SELECTOR, "form.canned-query input[type=submit]").click()
    WebDriverWait(browser, 20).until(lambda b: b.current_url.endswith("min_grade=edit"))  # the form's answer, loaded
    grades = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "td.col-grade")]
    assert grades == ["edit"]
    assert Select(browser.find_element(By.CSS_SELECTOR, "select[name=min_grade]")).first_selected_option.text == "edit"
    browser.find_element(By.LINK_TEXT, "show the SQL").click()  # asked: there it is
    assert "post_versions" in browser.find_element(By.ID, "sql-query").text


def test_no_query_the_front_page_links_to_shows_its_sql(browser, site):  # noqa: F811
    base, database = site
    browser.get(base + "/")
    queries = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, ".archive-explore dt a")
               if "/" not in a.get_attribute("href").removeprefix(database + "/").split("?")[0] and
               a.get_attribute("href").startswith(database + "/")]
    queries = [q for q in queries if q.split("/")[-1] not in {"posts", "sources", "pages", "crawl_runs", "crawl_errors",
                                                               "post_aliases", "post_versions", "captures", "media",
                                                               "post_media", "capture_bodies", "fetches", "hosts",
                                                               "cluster_ingest", "notify_state"}]
    assert len(queries) >= 10 and any(q.endswith("/changes") for q in queries)
    for query in queries:
        browser.get(query)
        assert not browser.find_elements(By.ID, "sql-query"), query


def test_the_front_page_lists_undated_posts_last_and_reads_dates_as_dates(browser, site):  # noqa: F811
    base, _ = site
    browser.get(base + "/")
    items = [li.text for li in browser.find_elements(By.CSS_SELECTOR, ".archive-newest li")]
    titles = [a.text for a in browser.find_elements(By.CSS_SELECTOR, ".archive-newest li .post-title")]
    assert titles == ["Write-ahead logs", "An older post", "Resume"]
    assert "changing.test · 12 March 2024" in items[0] and "5 January 2023" in items[1]
    assert items[2].endswith("date unknown")
    last_crawl = browser.find_element(By.CSS_SELECTOR, ".archive-last-crawl").text
    assert "T" not in last_crawl.split("started ")[1][:12] and " UTC" in last_crawl
    browser.get(base + "/changes/latest")  # and in a query's results
    assert [td.text for td in browser.find_elements(By.CSS_SELECTOR, "td.col-published")][:2] == ["12 March 2024", "5 January 2023"]
