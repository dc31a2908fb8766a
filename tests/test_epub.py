"""``blogarchive export epub``: a blog as an EPUB 3 book, read back with EbookLib and checked by epubcheck."""

import os
import shutil
import subprocess
from pathlib import Path

import ebooklib
import pytest
from conftest import EXPECTED, GONE, HOSTILE, IMG_PAYLOAD, copy_archive, run_cli
from ebooklib import epub
from lxml import html
from mediablog import SiteServer, media_blog, media_cdn
from test_media import media_crawl

import archive
from archive.core.urls import feed_item_url

EXAMPLE = EXPECTED["host"]
IN_ORDER = sorted(EXPECTED["posts"], key=lambda p: p["published"])


def epubcheck(path: Path) -> None:
    """Run epubcheck on the book and fail on any error or warning it reports."""
    found = shutil.which("epubcheck")
    if not found:
        pytest.skip("epubcheck is not on PATH (the Debian package epubcheck)")
    jar = os.path.realpath(found)  # Debian's is the jar itself, which needs binfmt-support to run as is
    # a short-lived JVM: the client compiler and the serial collector halve its CPU time
    java = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-jar", jar]
    proc = subprocess.run([*java, str(path)] if jar.endswith(".jar") else [found, str(path)],
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0 and "No errors or warnings detected" in proc.stdout, proc.stdout + proc.stderr


def export(db: Path, out: Path, *args: str) -> epub.EpubBook:
    run_cli("export", "epub", "-o", str(out), "--db", str(db), *args)
    return epub.read_epub(str(out))


def chapters(book: epub.EpubBook) -> list[epub.EpubHtml]:
    return [book.get_item_with_id(uid) for uid, _ in book.spine if uid != "nav"]


def page(chapter: epub.EpubHtml) -> html.HtmlElement:
    return html.fromstring(chapter.content)  # as written: get_content() makes the page again


def titles(book: epub.EpubBook) -> list[str]:
    return [page(c).findtext(".//h1") for c in chapters(book)]


@pytest.fixture(scope="module")
def example_book(example_archive: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("epub") / "example.epub"
    export(example_archive, out)
    return out


def test_one_chapter_per_post_in_publication_order_with_its_metadata(example_book: Path) -> None:
    book = epub.read_epub(str(example_book))
    found = chapters(book)
    assert titles(book) == [p["title"] for p in IN_ORDER]
    for chapter, post in zip(found, IN_ORDER, strict=True):
        doc = page(chapter)
        assert doc.get("lang") == post["lang"]
        about = dict(zip(doc.xpath("//dt/text()"), doc.xpath("//dd"), strict=True))
        assert about["Author"].text == post["author"] and about["Published"].text == post["published"]
        assert about["Tags"].text == ", ".join(post["tags"])
        assert about["Original"].find("a").get("href") == f"http://{EXAMPLE}{post['path']}"
        assert doc.xpath("//h1/text()") == [post["title"]]  # once: the Markdown's own heading is not repeated
    chinese = page(found[-1]).text_content()
    assert "索引" in chinese and "李明" in chinese


def test_the_book_names_the_blog_and_its_authors(example_book: Path) -> None:
    book = epub.read_epub(str(example_book))
    assert book.get_metadata("DC", "title") == [(EXAMPLE, {})]
    assert book.get_metadata("DC", "source") == [(f"http://{EXAMPLE}/", {})]
    assert book.get_metadata("DC", "language") == [("en", {})]  # five posts of seven
    assert [a for a, _ in book.get_metadata("DC", "creator")] == ["Dana Whitfield", "Marcus Lee", "李明"]


def test_the_table_of_contents_is_by_year(example_book: Path) -> None:
    book = epub.read_epub(str(example_book))
    nav = html.fromstring(book.get_item_with_id("nav").get_content())
    years = nav.xpath("//nav/ol/li")
    assert [li.find("a").text for li in years] == ["2023", "2024"]
    assert [[a.text for a in li.xpath("ol/li/a")] for li in years] == [
        [p["title"] for p in IN_ORDER if p["published"].startswith(year)] for year in ("2023", "2024")]


def test_the_book_passes_epubcheck(example_book: Path) -> None:
    epubcheck(example_book)


def test_since_keeps_the_posts_published_since(example_archive: Path, tmp_path: Path) -> None:
    book = export(example_archive, tmp_path / "2024.epub", "--since", "2024-03-01", "--source", EXAMPLE)
    assert titles(book) == [p["title"] for p in IN_ORDER if p["published"] >= "2024-03-01"]


def test_an_archive_of_several_blogs_needs_source(example_archive: Path, tmp_path: Path) -> None:
    db = copy_archive(example_archive, tmp_path / "two.db")
    run_cli("add", "https://another.example/", "--db", str(db))
    proc = run_cli("export", "epub", "-o", str(tmp_path / "x.epub"), "--db", str(db), check=False)
    assert proc.returncode == 2 and "the archive holds 2 blogs: give --source NAME" in proc.stderr
    proc = run_cli("export", "epub", "-o", str(tmp_path / "x.epub"), "--db", str(db), "--source", "another.example",
                   check=False)
    assert proc.returncode == 1 and "another.example has no post to make a book of" in proc.stderr
    assert not list(tmp_path.glob("*.epub")) and not list(tmp_path.glob(".*.partial"))


def test_posts_that_live_only_in_a_feed_are_a_chapter_each(tmp_path: Path) -> None:
    db = archive.open_archive(tmp_path / "feed.db")
    source = archive.ensure_source(db, "https://feed.test/feed.xml")
    run = archive.start_run(db, [source["id"]])
    for guid in ("a", "b"):  # one URL, the feed's, told apart by the fragment only
        archive.save_post(db, {"url": feed_item_url("https://feed.test/feed.xml", guid), "guid": guid,
                               "title": f"Item {guid}", "text": f"Text {guid}", "markdown": f"Text {guid}",
                               "published": "2024-01-01T00:00:00Z", "source_id": source["id"]}, run_id=run)
    archive.finish_run(db, run, status="finished", seconds=1, pages=1)
    db.close()
    out = tmp_path / "feed.epub"
    book = export(tmp_path / "feed.db", out)
    assert titles(book) == ["Item a", "Item b"]
    epubcheck(out)


def test_the_archived_images_are_in_the_book_and_nothing_is_fetched(tmp_path: Path) -> None:
    db = tmp_path / "media.db"
    with SiteServer(media_blog()) as blog, SiteServer(media_cdn()) as cdn:
        media_crawl(db, blog, cdn)
    blog.take_hits()
    out = tmp_path / "media.epub"
    book = export(db, out)
    images = {i.file_name: i for i in book.get_items_of_type(ebooklib.ITEM_IMAGE)}
    first = page(chapters(book)[titles(book).index("Post 1 with pictures")])
    srcs = [(img.get("src"), img.get("alt")) for img in first.iter("img")]
    assert srcs[0][1] == "A diagram" and images[srcs[0][0]].content == media_blog()["/img/diagram.png"][1]
    assert all(src in images for src, _ in srcs)
    assert not {i.media_type for i in images.values()} - {"image/png", "image/jpeg", "image/gif"}  # no WebP, no SVG
    texts = [page(c) for c in chapters(book)]
    assert not [img for doc in texts for img in doc.iter("img") if img.get("src").startswith("http")]
    third = page(chapters(book)[titles(book).index("Post 3 with pictures")])
    assert [img.get("alt") for img in third.iter("img")] == ["Shared"]  # the 404 is not in the book
    assert not blog.take_hits()
    epubcheck(out)


def test_scripts_and_markup_of_a_hostile_post_leave_a_valid_book(hostile_archive: Path, tmp_path: Path) -> None:
    out = tmp_path / "hostile.epub"
    book = export(hostile_archive, out)
    docs = [page(c) for c in chapters(book)]
    assert not [e for doc in docs for e in doc.iter("script", "img")]
    assert not [a for doc in docs for e in doc.iter() for a in e.attrib if a.startswith("on")]
    assert [a.get("href") for doc in docs for a in doc.iter("a")] == [GONE["url"], HOSTILE["url"], None]
    assert "Removed from the blog" in docs[0].xpath("//dt/text()")
    text = docs[1].text_content()
    assert "hover me" in text and f"Mallory {IMG_PAYLOAD}" in text  # markup in the metadata is text
    epubcheck(out)
