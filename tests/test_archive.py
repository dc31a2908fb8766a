"""The archive library: schema, idempotent writes, search in English and Chinese."""


import json

import pytest

from archive import (
    ArchiveError,
    ensure_source,
    open_archive,
    save_post,
    search_posts,
    start_run,
)
from archive.core.schema import migrations


@pytest.fixture
def db(db_path):
    db = open_archive(db_path)
    yield db
    db.close()


def post(**fields):
    return {"source_id": 1, "url": "https://blog.test/p/1", "title": "Hello", "text": "Hello world", "tags": ["a"], **fields}


def test_tables_and_foreign_keys(db):
    assert {"sources", "posts", "pages", "crawl_runs", "crawl_errors", "posts_fts", "post_aliases", "provenance"} <= set(db.table_names())
    assert {(fk.column, fk.other_table) for fk in db["posts"].foreign_keys} == {("source_id", "sources")}
    assert {(fk.column, fk.other_table) for fk in db["crawl_errors"].foreign_keys} == {
        ("run_id", "crawl_runs"), ("source_id", "sources")}
    assert db.journal_mode == "wal"


def test_migrating_twice_is_a_no_op(db_path):
    open_archive(db_path).close()
    first = [m.name for m in migrations.applied(open_archive(db_path))]
    db = open_archive(db_path)
    assert migrations.pending(db) == []
    assert [m.name for m in migrations.applied(db)] == first
    assert first[0] == "create_core_tables" and len(set(first)) == len(first) > 3


def test_missing_directory_and_non_database_file(tmp_path):
    with pytest.raises(ArchiveError, match="directory does not exist"):
        open_archive(tmp_path / "nope" / "a.db")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(ArchiveError, match="not a database"):
        open_archive(junk)
    assert junk.read_bytes() == b"this is not sqlite" * 100


def test_sources_are_added_once(db):
    first = ensure_source(db, "https://Example.com/blog/")
    assert (first["name"], first["scope"]) == ("example.com/blog", "https://example.com/blog/")
    assert ensure_source(db, "https://example.com/blog/")["id"] == first["id"]
    with pytest.raises(ValueError, match="already exists"):
        ensure_source(db, "https://example.com/blog/feed.xml", name="example.com/blog")
    with pytest.raises(ValueError, match="not an http"):
        ensure_source(db, "file:///etc/passwd")


def test_save_post_is_idempotent_and_counts_outcomes(db):
    ensure_source(db, "https://blog.test/")
    run = start_run(db, [1])
    assert save_post(db, post(), run_id=run) == "new"
    assert save_post(db, post(url="https://blog.test/p/1#comments"), run_id=run) == "unchanged"
    assert save_post(db, post(title="Hello again"), run_id=run) == "updated"
    assert db["posts"].count == 1
    row = db.execute("select posts_new, posts_updated, posts_unchanged from crawl_runs").fetchone()
    assert row == (1, 1, 1)


def test_aliases_lead_to_the_post_and_provenance_is_replaced(db):
    ensure_source(db, "https://blog.test/")
    run = start_run(db, [1])
    prov = [{"field": "title", "value": "Hello", "origin": "og:title", "chosen": 1},
            {"field": "tags", "value": ["a", "b"], "origin": "feed", "chosen": 0}]
    save_post(db, post(aliases=[{"alias": "https://blog.test/old-url", "why": "redirect 301"}], provenance=prov), run_id=run)
    assert save_post(db, post(url="https://blog.test/old-url", provenance=prov[:1]), run_id=run) == "unchanged"
    assert db["posts"].count == 1
    assert list(db.query("select alias, why from post_aliases")) == [{"alias": "https://blog.test/old-url", "why": "redirect 301"}]
    assert list(db.query("select field, value, origin, chosen from provenance")) == [
        {"field": "title", "value": "Hello", "origin": "og:title", "chosen": 1}]


def test_feed_guid_makes_two_urls_one_post(db):
    ensure_source(db, "https://blog.test/")
    run = start_run(db, [1])
    save_post(db, post(guid="tag:1", url="https://blog.test/?p=1"), run_id=run)
    assert save_post(db, post(guid="tag:1", url="https://blog.test/p/1"), run_id=run) == "unchanged"
    assert db["posts"].count == 1


def test_search_english_and_chinese(db):
    ensure_source(db, "https://blog.test/")
    run = start_run(db, [1])
    save_post(db, post(url="https://blog.test/p/1", title="WAL notes", text="SQLite in WAL mode"), run_id=run)
    save_post(db, post(url="https://blog.test/p/2", title="内存泄漏", text="一次内存泄漏的排查"), run_id=run)
    save_post(db, post(url="https://blog.test/p/3", title="索引", text="数据库索引的笔记"), run_id=run)
    assert [r["url"] for r in search_posts(db, "sqlite")] == ["https://blog.test/p/1"]
    assert [r["url"] for r in search_posts(db, "内存")] == ["https://blog.test/p/2"]  # two characters: LIKE
    assert [r["url"] for r in search_posts(db, "数据库")] == ["https://blog.test/p/3"]  # trigram index
    assert [r["url"] for r in search_posts(db, "内存 排查")] == ["https://blog.test/p/2"]
    assert search_posts(db, "   ") == []
    # FTS stays in sync when a post changes
    save_post(db, post(url="https://blog.test/p/1", title="WAL notes", text="Nothing about databases"), run_id=run)
    assert search_posts(db, "sqlite") == []


def test_values_come_back_byte_exact(db):
    ensure_source(db, "https://blog.test/")
    run = start_run(db, [1])
    title = "Robert'); DROP TABLE posts;-- <script>alert(1)</script> 𝔘𝔫𝔦𝔠𝔬𝔡𝔢"
    save_post(db, post(title=title), run_id=run)
    assert db.execute("select title from posts").fetchone()[0] == title


NAUGHTY = ["\x00nul inside", "ZWJ 👩‍💻 and RTL ‮text", "Ω≈ç√∫", "' OR 1=1 --", "%s %d {0} ${x}", "a" * 100_000]


def test_naughty_strings_round_trip_byte_exact(db):
    ensure_source(db, "https://blog.test/")
    run = start_run(db, [1])
    for i, text in enumerate(NAUGHTY):
        save_post(db, post(url=f"https://blog.test/n/{i}", title=text, text=text, tags=[text]), run_id=run)
    got = {r["url"]: r for r in db.query("select url, title, text, tags from posts")}
    for i, text in enumerate(NAUGHTY):
        row = got[f"https://blog.test/n/{i}"]
        assert row["title"] == row["text"] == text and json.loads(row["tags"]) == [text]


def test_lone_surrogates_are_refused_with_a_clear_error(db):
    ensure_source(db, "https://blog.test/")
    run = start_run(db, [1])
    with pytest.raises(ValueError, match=r"title of https://blog.test/p/1 is not valid Unicode \(surrogates not allowed\)"):
        save_post(db, post(title="bad \ud800 title"), run_id=run)
    assert db["posts"].count == 0
