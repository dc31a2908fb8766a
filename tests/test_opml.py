"""OPML subscription lists of two feed readers in, and back out, with nothing lost.

``tests/opml/`` holds a Thunderbird and a FreshRSS export, written by hand after
their documented formats: nested folders, a feed in two folders, a feed-less
outline, two feeds with one title, and titles in Chinese and French.
"""

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import EXPECTED, rows, run_cli

LISTS = Path(__file__).parent / "opml"


def outlines(xml: str | bytes) -> set[tuple[str, str, str | None, str | None]]:
    """(folder path, title, xmlUrl, htmlUrl) of every subscription, read with the standard library."""
    found = set()

    def walk(node: ET.Element, path: list[str]) -> None:
        for o in node.findall("outline"):
            feed, site = o.get("xmlUrl"), o.get("htmlUrl")
            title = o.get("title") or o.get("text")
            if feed or site:
                found.add(("/".join(path), title, feed, site))
            else:
                walk(o, [*path, title])

    walk(ET.fromstring(xml).find("body"), [])
    return found


@pytest.mark.parametrize("reader", ["thunderbird", "freshrss"])
def test_a_readers_list_comes_back_out_whole(reader, db_path, tmp_path):
    given = outlines((LISTS / f"{reader}.opml").read_bytes())
    proc = run_cli("add", "--opml", str(LISTS / f"{reader}.opml"), "--db", str(db_path))
    assert len(proc.stdout.splitlines()) == len({o[2] or o[3] for o in given})  # a feed in two folders: one source
    out = tmp_path / "out.opml"
    run_cli("export", "opml", "-o", str(out), "--db", str(db_path))
    written = out.read_text(encoding="utf-8")
    assert written.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<opml version="2.0">')
    back = outlines(written)
    for folder, title, feed, site in given:  # a list without htmlUrl gets one: the feed's folder
        assert any(b[:3] == (folder, title, feed) and (site is None or b[3] == site) for b in back), (folder, title)
    assert len(back) == len(given)
    again = tmp_path / "again.db"
    run_cli("add", "--opml", str(out), "--db", str(again))
    fields = "select name, url, folder, title, kind, site_url from sources order by url"
    first, second = rows(db_path, fields), rows(again, fields)
    assert [{**a, "site_url": a["site_url"] or b["site_url"]} for a, b in zip(first, second)] == second


def test_titles_name_the_sources_where_free_and_folders_are_kept(db_path):
    proc = run_cli("add", "--opml", str(LISTS / "thunderbird.opml"), "--db", str(db_path))
    sources = {r["url"]: r for r in rows(db_path, "select * from sources")}
    simon = sources["https://simonwillison.net/atom/everything/"]
    assert (simon["name"], simon["folder"], simon["kind"]) == ("Simon Willison's Weblog", "Programming/Python\nProgramming/Databases", "feed")
    assert sources["https://sqlite.example.org/news.rss"]["name"] == "Blog"
    friend = sources["https://friend.example.net/feed.xml"]
    assert (friend["name"], friend["title"]) == ("friend.example.net", "Blog")  # "Blog" was taken
    assert sources["https://jvns.ca/atom.xml"]["folder"] is None
    assert "source Simon Willison's Weblog: https://simonwillison.net/atom/everything/  [Programming/Python, Programming/Databases]" in proc.stdout
    again = run_cli("add", "--opml", str(LISTS / "thunderbird.opml"), "--db", str(db_path))
    assert all(line.endswith("(known)") for line in again.stdout.splitlines())
    assert rows(db_path, "select count(*) n from sources")[0]["n"] == len(sources)


def test_a_feedless_outline_is_a_site_and_non_ascii_titles_stay(db_path):
    run_cli("add", "--opml", str(LISTS / "freshrss.opml"), "--db", str(db_path))
    sources = {r["url"]: r for r in rows(db_path, "select * from sources")}
    village = sources["https://village.example.fr/annonces"]
    assert (village["name"], village["kind"], village["folder"]) == ("Petites annonces du village", None, "Écrits")
    assert sources["https://www.ruanyifeng.com/blog/atom.xml"]["name"] == "阮一峰的网络日志"
    assert sources["https://www.ruanyifeng.com/blog/atom.xml"]["folder"] == "技术博客"
    out = run_cli("export", "opml", "--db", str(db_path)).stdout
    assert '<outline text="Petites annonces du village" title="Petites annonces du village" htmlUrl="https://village.example.fr/annonces"/>' in out


@pytest.mark.parametrize("content, error", [
    (b'<?xml version="1.0"?><opml version="2.0"><body><outline text="a" xmlUrl="https://a.test/feed"',
     "not well-formed XML"),
    (b'<?xml version="1.0"?><rss version="2.0"><channel><title>x</title></channel></rss>',
     "not an OPML subscription list (its root is <rss>, with no <body>)"),
    (b'<?xml version="1.0"?><opml version="2.0"><body><outline text="folder only"/></body></opml>',
     "no feed or site in this OPML list"),
])
def test_a_bad_list_is_one_line_and_leaves_the_archive_byte_identical(content, error, example_archive, tmp_path):
    db = tmp_path / "archive.db"
    shutil.copy(example_archive, db)
    before = db.read_bytes()
    bad = tmp_path / "list.opml"
    bad.write_bytes(content)
    proc = run_cli("add", "--opml", str(bad), "--db", str(db), check=False)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"Error: {bad}: {error}") and len(proc.stderr.splitlines()) == 1
    assert db.read_bytes() == before
    assert not (tmp_path / "archive.db-wal").exists() or (tmp_path / "archive.db-wal").stat().st_size == 0


def test_a_failed_list_on_a_new_path_creates_no_archive(db_path, tmp_path):
    bad = tmp_path / "list.opml"
    bad.write_bytes(b"<opml")
    assert run_cli("add", "--opml", str(bad), "--db", str(db_path), check=False).returncode == 1
    assert not db_path.exists()


def test_a_crawled_blog_exports_its_feed_and_home(example_archive):
    out = run_cli("export", "opml", "--db", str(example_archive)).stdout
    host = EXPECTED["host"]
    assert outlines(out) == {("", host, f"http://{host}/feed.xml", f"http://{host}/")}


def test_url_and_opml_exclude_each_other(db_path):
    proc = run_cli("add", "https://a.test/", "--opml", str(LISTS / "freshrss.opml"), "--db", str(db_path), check=False)
    assert proc.returncode == 2 and "give a URL or --opml FILE" in proc.stderr
