"""Extraction, through `blogarchive extract` on saved pages, as a user runs it."""

import json

import pytest
from conftest import EXPECTED, SITE, run_cli
from truth import REAL_BLOGS

from crawler.extract.post import collapsed_length


def extract(*args: str) -> dict:
    return json.loads(run_cli("extract", *args).stdout)


@pytest.mark.parametrize("post", EXPECTED["posts"], ids=lambda p: p["path"])
def test_example_posts(post):
    got = extract(str(SITE / post["path"].strip("/") / "index.html"), "--url", f"http://{EXPECTED['host']}{post['path']}")
    assert got["title"] == post["title"]
    assert got["author"] == post["author"]
    assert got["published"] == post["published"]
    assert got["tags"] == post["tags"]
    assert got["lang"] == post["lang"]


def test_comments_are_not_in_the_text():
    got = extract(str(SITE / "p/101/index.html"))
    assert "plain Markdown file" in got["text"]
    assert "Great post, thanks" not in got["text"]
    assert "I disagree with the second point" not in got["markdown"]


def test_site_name_is_not_in_the_title():
    got = extract(str(SITE / "p/103/index.html"))
    assert got["title"] == "Notes on SQLite WAL Mode"
    assert "Example Notes" not in got["title"]


@pytest.mark.skipif(not REAL_BLOGS.is_dir(), reason=f"no real blogs at {REAL_BLOGS}")
def test_title_without_og_title_drops_the_site_name(tmp_path):
    # The Jekyll page's <title> is "Migrate to Github Pages - Hacking Tube 2.0".
    page = (REAL_BLOGS / "bruce30262-jekyll-en/site/Migrate-to-Github-Pages/index.html").read_text(encoding="utf-8")
    stripped = tmp_path / "page.html"
    stripped.write_text(page.replace('property="og:title"', 'property="x"').replace("<h1", "<h2"), encoding="utf-8")
    assert extract(str(stripped))["title"] == "Migrate to Github Pages"


def test_formats():
    page = str(SITE / "p/106/index.html")
    text = run_cli("extract", page, "--format", "text").stdout
    assert "内存" in text and "---" not in text.splitlines()[0]
    markdown = run_cli("extract", page, "--format", "markdown").stdout
    assert markdown.startswith("---\ntitle: 记一次 Node.js 服务的内存泄漏排查\n")
    lines = run_cli("extract", page, str(SITE / "p/107/index.html"), "--format", "ndjson").stdout.splitlines()
    assert [json.loads(line)["lang"] for line in lines] == ["zh", "zh"]


def test_gbk_page_is_decoded(tmp_path):
    page = tmp_path / "gbk.html"
    body = "<p>这是一篇关于内存管理的笔记，讲述了如何排查内存泄漏问题，以及垃圾回收的基本原理和常见的调优方法。</p>" * 6
    page.write_bytes(
        f'<html><head><meta charset="gbk"><title>内存笔记</title></head><body><article><h1>内存笔记</h1>{body}</article></body></html>'.encode("gbk")
    )
    got = extract(str(page))
    assert got["title"] == "内存笔记"
    assert "垃圾回收" in got["text"]


def test_a_page_without_article_is_an_error(tmp_path):
    empty = tmp_path / "empty.html"
    empty.write_text("<html><body></body></html>")
    proc = run_cli("extract", str(empty), check=False)
    assert proc.returncode == 1
    assert "no article text found" in proc.stderr


def test_unreadable_file_is_a_clear_error(tmp_path):
    proc = run_cli("extract", str(tmp_path / "missing.html"), check=False)
    assert proc.returncode == 2
    assert "does not exist" in proc.stderr and "Traceback" not in proc.stderr


def test_a_huge_post_is_extracted_whole_in_parts(monkeypatch):
    import crawler.extract.post as extract

    paragraphs = [f"Paragraph {i}: " + " ".join(f"word{(i * 7 + j) % 1000}" for j in range(120)) for i in range(3000)]
    page = ('<html lang="en"><head><title>A long post</title><meta property="og:type" content="article">'
            '<meta property="article:published_time" content="2024-05-01T10:00:00+00:00"></head><body><article>'
            "<h1>A long post</h1>" + "".join(f"<p>{p}</p>" for p in paragraphs) + "</article></body></html>")
    monkeypatch.setattr(extract, "PART_CHARS", 10 * len(page))
    monkeypatch.setattr(extract, "PART_BLOCKS", 10 * len(paragraphs))
    whole = extract.extract_post("https://b.test/p/1/", page)
    monkeypatch.setattr(extract, "PART_CHARS", len(page) // 5)  # five parts, and some
    parted = extract.extract_post("https://b.test/p/1/", page)
    assert parted.text.split("\n") == whole.text.split("\n") == paragraphs
    assert parted.title == whole.title == "A long post" and parted.published == whole.published
    assert parted.markdown == whole.markdown  # one blank line between two parts, as between two blocks


def test_an_article_of_many_blocks_is_extracted_in_parts_to_the_same_text(monkeypatch):
    import crawler.extract.post as extract

    def block(i: int) -> str:
        if i % 50 == 0:
            return f"<h2>Part {i}</h2>"
        if i % 7 == 0:
            return f'<ul><li>item {i}</li><li><a href="/x/{i}">a link {i}</a></li></ul>'
        if i % 11 == 0:
            return f"<pre><code>x = {i}\nprint(x)</code></pre>"
        return f'<p>Some text {i}, <em>with</em> <a href="/y">a link</a> and more words to read.</p>'

    page = ("<html><head><title>Notes</title></head><body><article><h1>Notes</h1>"
            + "".join(block(i) for i in range(5100)) + "</article></body></html>")
    monkeypatch.setattr(extract, "PART_BLOCKS", 10**6)
    whole = extract.extract_post("https://b.test/p/2/", page)
    monkeypatch.setattr(extract, "PART_BLOCKS", 1000)  # five parts, the short sixth one merged into the fifth
    parted = extract.extract_post("https://b.test/p/2/", page)
    assert "print(x)" in whole.markdown and "a link 4998" in whole.text
    assert (parted.text, parted.markdown) == (whole.text, whole.markdown)


@pytest.mark.parametrize("text", ["", " ", "word", "  two  words\n", "\t中文\u3000文字\xa0\n\nend ", "a\x1cb", "\n\n\n"])
def test_the_collapsed_length_of_a_text_is_that_of_its_words_joined_by_one_space(text):
    assert collapsed_length(text) == len(" ".join(text.split()))
