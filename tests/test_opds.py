"""The OPDS catalogue of ``blogarchive serve``, read by a real HTTP client as an e-reader app reads it:
an English and a Chinese blog, each offered as its EPUB."""

import urllib.error
import urllib.request
from pathlib import Path

import pytest
from conftest import EXPECTED, rows, run_cli, serving
from ebooklib import epub
from lxml import etree
from test_epub import epubcheck
from testblogs import hexo_chinese

NS = {"atom": "http://www.w3.org/2005/Atom", "dc": "http://purl.org/dc/terms/"}
ACQUISITION = "http://opds-spec.org/acquisition"
BLOGS = {"Example Notes": f"http://{EXPECTED['host']}/", "默之笔记": "http://hexo.test/"}


def get(url: str) -> tuple[int, str, bytes]:
    request = urllib.request.Request(url, headers={"User-Agent": "KOReader/2024.11", "Accept": "application/atom+xml"})
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return r.status, r.headers["content-type"], r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["content-type"], e.read()


@pytest.fixture(scope="module")
def two_blogs(site_server, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An English and a Chinese blog, added from a subscription list that names them, then crawled."""
    folder = tmp_path_factory.mktemp("opds")
    opml = folder / "blogs.opml"
    outlines = "".join(f'<outline text="{title}" title="{title}" htmlUrl="{url}"/>' for title, url in BLOGS.items())
    opml.write_text(f'<?xml version="1.0" encoding="UTF-8"?><opml version="2.0"><body>{outlines}</body></opml>',
                    encoding="utf-8")
    db = folder / "blogs.db"
    run_cli("add", "--opml", str(opml), "--db", str(db))
    hexo = hexo_chinese()
    with hexo.serve() as server:
        run_cli("crawl", "--db", str(db), "--delay", "0", "--concurrency", "8",
                "--map-host", f"{EXPECTED['host']}={site_server.base}", "--map-host", f"{hexo.host}={server.base}")
    return db


def test_an_e_reader_subscribes_to_the_catalogue_and_gets_each_blog_as_a_book(two_blogs: Path, tmp_path: Path) -> None:
    with serving(two_blogs) as base:
        status, kind, body = get(base + "/-/opds")
        assert status == 200 and kind == "application/atom+xml;profile=opds-catalog;kind=acquisition; charset=utf-8"
        feed = etree.fromstring(body)
        assert feed.find("atom:link[@rel='self']", NS).get("href") == base + "/-/opds"
        entries = feed.findall("atom:entry", NS)
        assert [e.findtext("atom:title", namespaces=NS) for e in entries] == list(BLOGS)
        assert [e.findtext("dc:language", namespaces=NS) for e in entries] == ["en", "zh"]
        assert [e.find("atom:link[@rel='alternate']", NS).get("href") for e in entries] == list(BLOGS.values())
        books: list[Path] = []
        for entry, (title, url) in zip(entries, BLOGS.items(), strict=True):
            link = entry.find(f"atom:link[@rel='{ACQUISITION}']", NS)
            assert link.get("type") == "application/epub+zip"
            status, kind, book = get(link.get("href"))
            assert (status, kind) == (200, "application/epub+zip")
            path = tmp_path / f"{len(list(tmp_path.iterdir()))}.epub"
            path.write_bytes(book)
            read = epub.read_epub(str(path))
            assert read.get_metadata("DC", "title") == [(title, {})]
            assert read.get_metadata("DC", "source") == [(url, {})]
            assert read.get_metadata("DC", "identifier")[0][0] == entry.findtext("atom:id", namespaces=NS)
            posts = rows(two_blogs, "select count(*) n from posts join sources s on s.id = source_id where s.url = ?",
                         (url,))[0]["n"]
            assert len([uid for uid, _ in read.spine if uid != "nav"]) == posts > 0
            books.append(path)
        chinese = entries[1].find(f"atom:link[@rel='{ACQUISITION}']", NS).get("href")
        assert chinese == base + "/-/blogarchive/blogs/epub/%E9%BB%98%E4%B9%8B%E7%AC%94%E8%AE%B0.epub"
        assert get(base + "/-/blogarchive/blogs/epub/nothing.epub")[0] == 404
        assert get(base + "/-/blogarchive/nothing/epub/Example%20Notes.epub")[0] == 404
    for path in books:
        epubcheck(path)
