"""Search through the two indexes: trigram for words of three characters or more, posts_grams for shorter ones."""

import gc
import re
import sqlite3
import tracemalloc

import pytest
from sqlite_utils import Database

from archive import ensure_source, open_archive, save_post, search_posts, start_run
from archive.core.schema import migrations
from archive.search.index import post_grams, post_ids_sql

POSTS = {
    "https://blog.test/p/1": ("WAL notes", "SQLite in WAL mode, go and C# too."),
    "https://blog.test/p/2": ("内存泄漏", "一次内存泄漏的排查。"),
    "https://blog.test/p/3": ("索引", "数据库索引的笔记"),
    "https://blog.test/p/4": ("笔记", "内容不多：存储与内核"),
}


def urls(rows):
    return sorted(r["url"] for r in rows)


@pytest.fixture
def db(db_path):
    db = open_archive(db_path)
    ensure_source(db, "https://blog.test/")
    run = start_run(db, [1])
    for url, (title, text) in POSTS.items():
        save_post(db, {"source_id": 1, "url": url, "title": title, "text": text}, run_id=run)
    yield db
    db.close()


def plan(db, words):
    """The steps of the query that finds the posts with every word: ``SCAN posts`` reads every post."""
    sql, params = post_ids_sql(words)
    return [r[3] for r in db.execute(f"explain query plan {sql}", params)]


def reads_every_post(steps):
    return any(step.split()[:2] == ["SCAN", "posts"] for step in steps)


def test_post_grams_are_the_one_and_two_character_pieces_of_each_run():
    assert set(post_grams("内存", "Go, C#! go", None).split()) == {"c", "g", "go", "o", "内", "内存", "存"}
    assert set(post_grams("Title", "secret text", "encrypted").split()) == set(post_grams("Title", None, None).split())


def test_a_huge_posts_grams_take_a_few_bytes_a_character():
    # a 15 MB post's grams, computed in the writer: listing every run of its text (millions of
    # them) or lower-casing it whole (12 bytes a character while it works) took 300 MB there
    text = "".join(f"第{i}段：数据库的内存与 İstanbul words {i} " for i in range(200_000))
    runs = set(re.findall(r"[^\W_]+", text.lower()))
    expected = {c for run in runs for c in run} | {run[i:i + 2] for run in runs for i in range(len(run) - 1)}
    tracemalloc.start()
    try:
        grams = post_grams(None, text, None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert set(grams.split()) == expected
    assert peak < 12 * len(text)  # the text lower-cased once (2 bytes a character here) and its distinct runs; 25 before


@pytest.mark.parametrize("query, expected", [
    ("内", ["https://blog.test/p/2", "https://blog.test/p/4"]),  # one character
    ("内存", ["https://blog.test/p/2"]),  # two characters
    ("内存 排查", ["https://blog.test/p/2"]),
    ("笔记", ["https://blog.test/p/3", "https://blog.test/p/4"]),  # in a title of its own, in a text
    ("存内", []),  # the two characters, but never side by side
    ("GO", ["https://blog.test/p/1"]),  # any case
])
def test_short_words_are_found_through_the_grams_index(db, query, expected):
    assert urls(search_posts(db, query)) == expected
    steps = plan(db, query.split())
    assert "SCAN posts_grams VIRTUAL TABLE INDEX 0:M1" in steps and not reads_every_post(steps), steps


def test_long_and_english_words_still_use_the_trigram_index(db):
    assert urls(search_posts(db, "sqlite")) == ["https://blog.test/p/1"]
    assert urls(search_posts(db, "数据库")) == ["https://blog.test/p/3"]
    assert urls(search_posts(db, "数据库 索引")) == ["https://blog.test/p/3"]
    assert urls(search_posts(db, "sqlite 内存")) == []
    assert urls(search_posts(db, "内存 泄漏的")) == ["https://blog.test/p/2"]  # both indexes, every word required
    steps = plan(db, ["内存", "泄漏的"])
    assert not reads_every_post(steps) and {"SCAN posts_fts VIRTUAL TABLE INDEX 0:M2", "SCAN posts_grams VIRTUAL TABLE INDEX 0:M1"} <= set(steps)


@pytest.mark.parametrize("words", [["内存"], ["sqlite"], ["内存", "泄漏的"], ["数据库", "索引"]])
def test_words_the_indexes_answer_are_found_without_reading_a_post(db, words):
    """Not even by id (``SEARCH posts``): a common word matches half the posts of an archive."""
    steps = plan(db, words)
    assert not any(step.split()[1:2] == ["posts"] for step in steps), steps


def test_a_short_word_of_punctuation_is_still_found_by_reading_the_posts(db):
    assert urls(search_posts(db, "C#")) == ["https://blog.test/p/1"]
    assert reads_every_post(plan(db, ["C#"]))


def test_the_index_follows_updates_and_deletes(db):
    run = start_run(db, [1])
    save_post(db, {"source_id": 1, "url": "https://blog.test/p/2", "title": "排查", "text": "网络问题"}, run_id=run)
    assert search_posts(db, "内存") == [] and urls(search_posts(db, "网络")) == ["https://blog.test/p/2"]
    db.execute("update posts set last_seen = 'later' where id = 2")  # no title or text change: not indexed again
    assert urls(search_posts(db, "网络")) == ["https://blog.test/p/2"]
    with db.atomic():
        db.execute("delete from posts where id = 2")
    assert search_posts(db, "网络") == [] and search_posts(db, "排查") == []
    db.execute("insert into posts_grams (posts_grams) values ('integrity-check')")


def test_a_protected_posts_body_is_never_indexed(db):
    run = start_run(db, [1])
    save_post(db, {"source_id": 1, "url": "https://blog.test/p/9", "title": "日记", "text": "密文",
                   "protected": "encrypted"}, run_id=run)
    assert search_posts(db, "密文") == []
    assert urls(search_posts(db, "日记")) == ["https://blog.test/p/9"]
    db.execute("update posts set protected = null where id = 5")  # readable after all: its body is indexed
    assert urls(search_posts(db, "密文")) == ["https://blog.test/p/9"]
    db.execute("update posts set protected = 'encrypted' where id = 5")
    assert search_posts(db, "密文") == []
    db.execute("insert into posts_grams (posts_grams) values ('integrity-check')")


def test_an_archive_from_before_the_index_is_migrated(db_path):
    old = Database(sqlite3.connect(db_path))
    migrations.apply(old, stop_before="add_short_word_index")
    old["sources"].insert({"id": 1, "name": "blog", "url": "https://blog.test/", "scope": "https://blog.test/", "enabled": 1})
    old["posts"].insert({"id": 1, "source_id": 1, "url": "https://blog.test/p/1", "title": "内存", "text": "泄漏"})
    old.close()
    db = open_archive(db_path)
    assert urls(search_posts(db, "泄漏")) == ["https://blog.test/p/1"]
    assert urls(search_posts(db, "内")) == ["https://blog.test/p/1"]
    assert not reads_every_post(plan(db, ["内"]))
    assert migrations.pending(db) == []
    assert list(db["posts"].columns_dict)[-3:] == ["summary", "text", "markdown"]  # the small columns first
    assert {t.name for t in db["posts"].triggers} == {
        "posts_ai", "posts_ad", "posts_au", "posts_grams_ai", "posts_grams_ad", "posts_grams_au"}
    assert db.execute("pragma foreign_key_check").fetchall() == []


# The facets' SQL (archive_facets, Datasette's column facet), over the rows of ``posts``.
FACET_SQL = {
    ("column", "source_id"): "select source_id, count(*) as count from posts where source_id is not null"
                             " group by source_id order by count desc, source_id",
    ("column", "lang"): "select lang, count(*) as count from posts where lang is not null group by lang order by count desc, lang",
    ("column", "tags"): "select tags, count(*) as count from posts where tags is not null group by tags order by count desc, tags",
    ("year", "published"): "select substr(published, 1, 4) as value, count(*) from posts where length(published) >= 4"
                           " group by value order by value desc",
    ("month", "published"): "select substr(published, 1, 7) as value, count(*) from posts where length(published) >= 7"
                            " group by value order by value desc",
    ("array", "tags"): "select j.value as value, count(*) as count from posts r, json_each(r.tags) j where not exists"
                       " (select 1 from json_each(r.tags) k where k.key < j.key and k.value = j.value)"
                       " group by j.value order by count desc, value",
}
ODD_POSTS = [  # (published, source_id, lang, tags)
    ("2024-05-01T00:00:00Z", 1, "en", '["a", "b", "a"]'),
    ("2024-05", 2, "zh-Hant", '["é", "a"]'),
    ("2024-0", 2, "", "[]"),
    ("2024", 10, "zh", None),
    ("202", 1, None, '["内存", "b"]'),
    (None, None, "en", '["b"]'),
    (20240501, 1, "en", '["Z", "a"]'),  # a number where a date should be: SQLite's substr() makes it text
    ("2023-12-31", 2, "ÉN", '["a"]'),
]


def summary_of(rows, ids=None):
    from archive.search.matches import Listing, Summary

    conn = sqlite3.connect(":memory:")
    conn.execute("create table posts (id integer primary key, published, source_id, lang, tags)")
    conn.executemany("insert into posts (published, source_id, lang, tags) values (?, ?, ?, ?)", rows)
    return conn, Summary(Listing(conn), frozenset(ids or range(1, len(rows) + 1)))


def test_a_summary_counts_each_facet_as_its_sql_does():
    conn, summary = summary_of(ODD_POSTS)
    assert summary.count == len(ODD_POSTS)
    assert gc.isenabled()  # paused while the listing was read, on again
    for (kind, column), sql in FACET_SQL.items():
        assert summary.facet(kind, column) == conn.execute(sql).fetchall(), (kind, column)
    assert summary.facet("column", "published") is None  # kept as its first 7 characters only
    assert summary.facet("year", "lang") is None and summary.facet("date", "published") is None


@pytest.mark.parametrize("column, value", [
    ("tags", "not json"), ("tags", '{"a": 1}'), ("tags", '["a", 1]'), ("tags", '"a"'), ("tags", '["\\ud800"]'),
    ("lang", 1.5), ("lang", b"en"), ("lang", "e\x00n"), ("published", b"2024"),
])
def test_a_summary_leaves_to_sql_a_facet_whose_values_python_would_count_otherwise(column, value):
    row = dict(zip(("published", "source_id", "lang", "tags"), ODD_POSTS[0]), **{column: value})
    _, summary = summary_of([*ODD_POSTS, tuple(row.values())])
    kinds = {"tags": ["array"], "lang": ["column"], "published": ["year", "month"]}[column]
    assert all(summary.facet(kind, column) is None for kind in kinds)


def test_a_summary_counts_the_posts_of_its_search_that_are_still_there():
    conn, summary = summary_of(ODD_POSTS, ids=[1, 2, 99])  # 99: a post deleted since the search
    assert summary.count == 2
    assert summary.facet("column", "lang") == [("en", 1), ("zh-Hant", 1)]


# The whole set of a search's matches, read in ranges of ids side by side (a connection and a thread each),
# and a search's first page answered from the matches of its newest posts' range while that set is
# computed (archive.search.matches): the same posts as one statement over the whole archive gives.
SEARCHES = ["sqlite", "kernel", "kernel note", "内存", "内", "内存 kernel", "C#", "GO", "zeppelin", "存内"]


@pytest.fixture
def many_posts(db_path):
    """330 posts, newest last (ids in their order of publication, as a crawl saves a blog's newest
    posts last), except the five oldest, saved last: ``kernel`` in every other one, ``内存`` in every
    third, ``zeppelin`` in the 300th, ``c#`` in every fifth."""
    db = open_archive(db_path)
    ensure_source(db, "https://blog.test/")
    run = start_run(db, [1])
    order = list(range(5, 330)) + list(range(5))
    for i in order:
        words = ["kernel" if i % 2 else "plain", "内存" if i % 3 == 0 else "数据", "zeppelin" if i == 300 else "text",
                 "c# go" if i % 5 == 0 else "note"]
        save_post(db, {"source_id": 1, "url": f"https://blog.test/p/{i}", "title": f"Post {i}", "text": " ".join(words),
                       "published": f"{2000 + i // 12}-{1 + i % 12:02d}-01T00:00:00Z"}, run_id=run)
    db.close()
    return db_path


def reader(path):
    return sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, check_same_thread=False)


def truth(path, query):
    """The ids of the posts that match ``query``, from one statement (post_ids_sql, as before the halves)."""
    from archive.search.matches import search_terms

    conn = reader(path)
    try:
        sql, params = post_ids_sql(search_terms(query))
        return frozenset(r[0] for r in conn.execute(sql, params))
    finally:
        conn.close()


def test_ids_read_in_ranges_side_by_side_are_those_of_one_statement(many_posts):
    from concurrent.futures import ThreadPoolExecutor

    from archive.search.matches import matching_post_ids, search_terms

    conn = reader(many_posts)
    for ranges in (2, 4, 7):
        beside = [reader(many_posts) for _ in range(ranges - 1)]
        with ThreadPoolExecutor(ranges - 1) as pool:
            for query in SEARCHES:
                assert matching_post_ids(conn, search_terms(query), beside, pool) == truth(many_posts, query), (ranges, query)
    assert truth(many_posts, "kernel") and truth(many_posts, "c#") and truth(many_posts, "zeppelin") == {296}


def test_a_search_being_computed_answers_its_newest_posts_from_their_range(many_posts):
    import threading

    from archive.search.matches import FEW_MATCHES, NEWEST, Listings, Matches

    conn = reader(many_posts)
    matches = Matches(conn, Listings(reader(many_posts)), whole=reader(many_posts),
                      beside=[reader(many_posts), reader(many_posts)])
    assert matches.computing is not None
    release = threading.Event()
    matches.computing.submit(release.wait)  # the whole sets wait behind this
    try:
        posts = conn.execute("select count(*) from posts").fetchone()[0]
        for query in SEARCHES:
            expected = truth(many_posts, query)
            assert matches.many(query) == (len(expected) > FEW_MATCHES * posts), query
            assert not matches.pending[query].done()
            window = matches.windows[query]
            newest = [r[0] for r in conn.execute("select id from posts order by published desc limit ?", [NEWEST])]
            assert window.lo == min(newest) and window.hi == max(newest) and window.hi - window.lo < posts - 1
            member = matches.membership(query)
            assert [i for i in newest if member(i)] == [i for i in newest if i in expected], query
    finally:
        release.set()
    for query in SEARCHES:  # the others, from the whole set, once computed
        member = matches.membership(query)
        assert {i for i in range(1, posts + 1) if member(i)} == truth(many_posts, query), query
        assert matches.of(query) == truth(many_posts, query)
    matches.computing.shutdown()


def test_newest_posts_far_apart_wait_for_the_whole_set(db_path, monkeypatch):
    import archive.search.matches
    from archive.search.matches import Listings, Matches

    db = open_archive(db_path)
    ensure_source(db, "https://blog.test/")
    run = start_run(db, [1])
    for i in range(40):  # the two newest saved first and last
        year = {0: 2100, 39: 2099}.get(i, 2000 + i)
        save_post(db, {"source_id": 1, "url": f"https://blog.test/p/{i}", "title": f"Post {i}", "text": "kernel" * (i % 2),
                       "published": f"{year}-01-01T00:00:00Z"}, run_id=run)
    db.close()
    path = db_path
    matches = Matches(reader(path), Listings(reader(path)), whole=reader(path), beside=[reader(path)])
    monkeypatch.setattr(archive.search.matches, "NEWEST", 2)  # the two newest posts, whose ids lie far apart
    try:
        assert matches.many("kernel")
        assert "kernel" not in matches.windows and matches.of("kernel") == truth(path, "kernel")
    finally:
        matches.computing.shutdown()


def test_what_every_search_needs_is_read_when_warmed(many_posts):
    from archive.search.matches import Listings, Matches

    matches = Matches(reader(many_posts), Listings(reader(many_posts)), whole=reader(many_posts),
                      beside=[reader(many_posts)])
    try:
        matches.warm()  # as the server starts
        assert matches.posts == 330 and matches.listings.listing is not None
        assert len(matches.listings.listing.ids) == 330
        listing = matches.listings.listing
        assert matches.summary("kernel").count == len(truth(many_posts, "kernel"))
        assert matches.listings.listing is listing  # not read again by the first search
    finally:
        matches.computing.shutdown()
