"""A post's title as its author wrote it, quotation marks and all, on every path: a crawl of a real
Pelican blog and ``blogarchive extract`` of its saved pages (issue 48).

tests/corpus/erickbytes-pelican-en: titles such as ``"Git" The Basics: A Version Control Cheat Sheet``;
every page's ``<title>`` is ``Lo-Fi Python | TITLE`` and its first ``<h1>`` the site's logo, a link to
``https://lofipython.com/`` (written out whole) whose text is the site's name. Before, the unit tests of
titles gave ``choose_title`` the page's own site names (``site_name_parts``), which the real paths never
did: ``extract`` of a single page chose the logo's "Lo-Fi Python", and a crawl knew the site's name only
once it had learned it from other pages and feeds.
"""

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import StaticServer, rows, run_cli
from lxml import html as lxml_html

from crawler.extract.post import extract_post

BLOG = Path(__file__).parent / "corpus" / "erickbytes-pelican-en"
INFO = json.loads((BLOG / "blog.json").read_text())
TRUTH = json.loads((BLOG / "truth.json").read_text())["posts"]
HOME = INFO["original_site"]
QUOTED = [p for p in TRUTH if '"' in p["title"]]


def page_file(post: dict) -> Path:
    return BLOG / "site" / post["path"].lstrip("/")


def test_the_blog_has_quoted_titles() -> None:
    assert len(QUOTED) >= 3
    assert any(p["title"].startswith('"') for p in QUOTED)


@pytest.mark.parametrize("with_url", [True, False], ids=["url", "file"])
def test_extract_keeps_the_quotation_marks_and_never_gives_the_site_name(with_url: bool) -> None:
    files = [str(page_file(p)) for p in TRUTH]
    args = ["extract", *files, "--format", "ndjson"]
    if with_url:  # one URL for all: the page's host is what matters (its name is the site's, "lofipython")
        args += ["--url", HOME + "post.html"]
    out = [json.loads(line) for line in run_cli(*args).stdout.splitlines()]
    got = {Path(o["file"]).name: o["title"] for o in out}
    assert got == {page_file(p).name: p["title"] for p in TRUTH}


def test_a_single_page_knowing_nothing_of_its_site_takes_its_heading_not_the_logo() -> None:
    # the extraction alone, no site learned, no feed, no URL of the site: the <h1> linking to the
    # home page's absolute URL is the logo, and the <title>'s other part is the article's heading
    post = next(p for p in TRUTH if p["title"].startswith('"Git"'))
    got = extract_post("file:///saved/page.html", page_file(post).read_text())
    assert got is not None and got.title == post["title"]


def test_a_logo_heading_linking_to_the_home_page_is_no_title_candidate() -> None:
    from crawler.judge.titles import title_candidates

    for href in ("https://example.com/", "//example.com", "/", "./", "https://example.com/index.html"):
        root = lxml_html.fromstring(f'<html><body><h1><a href="{href}">My Site</a></h1>'
                                    '<article><h2>A post</h2><p>Text.</p></article></body></html>')
        assert ("My Site", "first <h1>") not in title_candidates(root), href
    for href in ("", "https://example.com/a-post/", "#top", "/?p=12"):  # a permalink is the post's own
        root = lxml_html.fromstring(f'<html><body><h1><a href="{href}">A post</a></h1><p>Text.</p></body></html>')
        assert ("A post", "first <h1>") in title_candidates(root), href


def served_copy(to: Path) -> Path:
    """The blog's site/ with its links to pages the corpus trimmed away (which answer 404) made
    ``#``: a crawl at the default politeness then asks for the blog's pages, not 600 missing ones."""
    site = to / "site"
    shutil.copytree(BLOG / "site", site)
    host = re.escape(HOME.rstrip("/"))

    def keep(match: re.Match) -> str:
        path = match.group(2).split("#")[0].split("?")[0].lstrip("/")
        exists = not path or (site / path).is_file() or (site / path / "index.html").is_file()
        return match.group(0) if exists else f'{match.group(1)}"#"'

    for page in site.rglob("*.html"):
        text = page.read_text()
        page.write_text(re.sub(rf'(<a\b[^>]*?href=)"(?:{host})?(/?[^"#:]*)"', keep, text))
    return site


def test_a_crawl_at_the_default_politeness_keeps_the_authors_quotation_marks(tmp_path: Path) -> None:
    site = served_copy(tmp_path)
    db = tmp_path / "archive.db"
    with StaticServer(site) as server:
        run_cli("crawl", HOME, "--db", str(db), "--map-host", f"{INFO['internal_hosts'][0]}={server.base}",
                timeout=600)
    archived = {r["url"].removeprefix(HOME.rstrip("/")): r["title"] for r in rows(db, "select url, title from posts")}
    assert archived == {p["path"]: p["title"] for p in TRUTH}
