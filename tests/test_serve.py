"""`blogarchive serve`: a real Datasette process on crawled and hand-made archives, over HTTP."""

import contextlib
import html.parser
import json
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml
from conftest import EXPECTED, GONE, HOSTILE, IMG_PAYLOAD, ROOT, SCRIPT_PAYLOAD, free_port, serving
from datasette.utils import tilde_encode

import archive
import archive.cli.serve
import archive.search.matches

ATOM = "{http://www.w3.org/2005/Atom}"
NEWEST_FIRST = [p["title"] for p in sorted(EXPECTED["posts"], key=lambda p: p["published"], reverse=True)]


@pytest.fixture(scope="module")
def datasette(example_datasette, example_archive):
    """The URL of the example archive's database."""
    return example_datasette + "/" + example_archive.stem


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def get_json(url: str):
    status, body = get(url)
    assert status == 200, body[:500]
    return json.loads(body)


def titles(rows):
    return sorted(r["title"] for r in rows)


def feed_entries(url: str) -> list[ET.Element]:
    status, body = get(url)
    assert status == 200, body[:500]
    return ET.fromstring(body.encode()).findall(ATOM + "entry")


def test_runs_datasette_065(datasette):
    versions = get_json(datasette.rsplit("/", 1)[0] + "/-/versions.json")
    assert versions["datasette"]["version"].startswith("0.65")


def test_posts_newest_first(datasette):
    rows = get_json(datasette + "/posts.json?_shape=array")
    assert [r["title"] for r in rows] == NEWEST_FIRST


def test_english_search_box(datasette):
    rows = get_json(datasette + "/posts.json?_shape=array&_search=sqlite")
    assert "Notes on SQLite WAL Mode" in titles(rows)
    assert "Being a Polite Crawler with Scrapy" not in titles(rows)
    assert titles(get_json(datasette + "/posts.json?_shape=array&_search=" + quote("sqlite wal"))) == [
        "Notes on SQLite WAL Mode"]


@pytest.mark.parametrize("query, expected", [
    ("内存", ["记一次 Node.js 服务的内存泄漏排查"]),  # two characters: below the trigram index
    ("内存 泄漏", ["记一次 Node.js 服务的内存泄漏排查"]),
    ("数据库索引", ["数据库索引的几点笔记"]),
    ("笔记", ["数据库索引的几点笔记"]),
    ("内存 sqlite", []),
    ("内存 node", ["记一次 Node.js 服务的内存泄漏排查"]),  # both indexes
    ("内", ["记一次 Node.js 服务的内存泄漏排查"]),  # one character
])
def test_chinese_search_box(datasette, query, expected):
    assert titles(get_json(datasette + "/posts.json?_shape=array&_search=" + quote(query))) == expected


def test_chinese_search_canned_query(datasette):
    rows = get_json(datasette + "/search.json?_shape=array&q=" + quote("内存"))
    assert titles(rows) == ["记一次 Node.js 服务的内存泄漏排查"]
    assert "<mark>内存</mark>" in rows[0]["snippet"]
    rows = get_json(datasette + "/search.json?_shape=array&q=" + quote("数据库索引"))
    assert titles(rows) == ["数据库索引的几点笔记"]
    assert get_json(datasette + "/search.json?_shape=array&q=") == []


def test_facets_and_metadata(datasette):
    data = get_json(datasette + "/posts.json?_facet_size=10")
    facets = {(f["name"], f["type"]): {r["value"]: r["count"] for r in f["results"]} for f in data["facet_results"].values()}
    assert facets[("lang", "column")] == {"en": 5, "zh": 2}
    assert {"笔记", "databases", "tools"} <= set(facets[("tags", "array")])
    assert facets[("published", "year")] == {"2024": 4, "2023": 3}
    assert list(facets[("published", "month")]) == sorted({p["published"][:7] for p in EXPECTED["posts"]}, reverse=True)
    assert len(get_json(datasette + "/posts.json?_shape=array&published__startswith=2023")) == 3
    page = get(datasette + "/posts")[1]
    assert "One row per post" in page and "published (month)" in page


def test_every_visible_table_and_column_is_described(datasette):
    metadata = get_json(datasette.rsplit("/", 1)[0] + "/-/metadata.json")
    described = metadata["databases"][datasette.rsplit("/", 1)[1]]["tables"]
    visible = [t for t in get_json(datasette + ".json")["tables"] if not t["hidden"]]
    assert {t["name"] for t in visible} >= {"posts", "sources", "pages", "crawl_runs", "crawl_errors"}
    for table in visible:
        assert described.get(table["name"], {}).get("description"), table["name"]
        assert set(table["columns"]) <= set(described[table["name"]].get("columns", {})), table["name"]


def test_internal_tables_are_hidden_but_queryable(datasette):
    hidden = {t["name"] for t in get_json(datasette + ".json")["tables"] if t["hidden"]}
    assert {"posts_fts", "posts_fts_data", "_sqlite_migrations", "provenance"} <= hidden
    status, page = get(datasette)
    assert status == 200 and ">posts_fts<" not in page and ">provenance<" not in page
    assert get_json(datasette + "/provenance.json?_shape=array&_size=1")
    assert get_json(datasette + ".json?_shape=array&sql=" + quote("select count(*) as n from posts_fts"))[0]["n"] == 7


def test_canned_queries_have_titles_descriptions_and_run(datasette):
    queries = get_json(datasette + ".json")["queries"]
    assert {q["name"] for q in queries} == {
        "latest", "search", "source_posts", "posts_per_month", "tag_cloud", "recently_changed", "gone",
        "changes", "crawl_health", "run_errors", "revisit_plan", "revisit_posts"}
    for query in queries:
        assert query["title"] and query["description"], query["name"]
        status, body = get(f"{datasette}/{query['name']}.json?q=sqlite&source={EXPECTED['host']}")
        assert status == 200, (query["name"], body[:300])


def test_canned_queries_on_the_example_blog(datasette):
    def rows(name, **params):
        return get_json(f"{datasette}/{name}.json?_shape=array&" + "&".join(f"{k}={quote(v)}" for k, v in params.items()))

    assert [r["title"] for r in rows("latest")] == NEWEST_FIRST
    assert [r["title"] for r in rows("source_posts", source=EXPECTED["host"])] == NEWEST_FIRST
    assert rows("source_posts", source="no-such-blog") == []
    tags = {r["tag"]: r["posts"] for r in rows("tag_cloud")}
    assert tags == {t: sum(t in p["tags"] for p in EXPECTED["posts"]) for t in tags} and tags["tools"] == 5
    assert {r["month"]: r["posts"] for r in rows("posts_per_month")} == {p["published"][:7]: 1 for p in EXPECTED["posts"]}
    [health] = rows("crawl_health")
    assert (health["source"], health["posts"], health["errors"], health["last_status"]) == (EXPECTED["host"], 7, 0, "ok")
    assert rows("gone") == rows("run_errors") == rows("recently_changed") == rows("changes") == []


def test_crawl_health_gone_and_errors_after_a_second_crawl(hostile_datasette):
    [gone] = get_json(hostile_datasette + "/gone.json?_shape=array")
    assert (gone["title"], gone["error"]) == (GONE["title"], "404 Not Found") and gone["gone_at"]
    [change] = get_json(hostile_datasette + "/changes.json?_shape=array")
    assert (change["change"], change["title"]) == ("gone", GONE["title"])
    [health] = get_json(hostile_datasette + "/crawl_health.json?_shape=array")
    assert (health["posts"], health["last_run"], health["errors"]) == (2, 2, 1)
    assert health["last_error"].endswith("http: 404 Not Found")
    [error] = get_json(hostile_datasette + "/run_errors.json?_shape=array")
    assert (error["run_id"], error["url"]) == (2, GONE["url"])
    assert get_json(hostile_datasette + "/run_errors.json?_shape=array&run=1") == []
    [changed] = get_json(hostile_datasette + "/recently_changed.json?_shape=array")
    assert changed["title"] == HOSTILE["title"]
    assert get_json(hostile_datasette + "/recently_changed.json?_shape=array&since=2024-03-01") == []


def test_atom_feeds_of_posts_queries(datasette):
    entries = feed_entries(datasette + "/latest.atom")
    assert [e.find(ATOM + "title").text for e in entries] == NEWEST_FIRST
    wal = next(e for e in entries if e.find(ATOM + "title").text == "Notes on SQLite WAL Mode")
    assert wal.find(ATOM + "link").get("href") == f"http://{EXPECTED['host']}/p/103/"
    assert wal.find(ATOM + "author/" + ATOM + "name").text == "Dana Whitfield"
    assert wal.find(ATOM + "content").get("type") == "html" and "<p>" in wal.find(ATOM + "content").text
    [entry] = feed_entries(datasette + "/search.atom?q=" + quote("内存"))
    assert entry.find(ATOM + "title").text == "记一次 Node.js 服务的内存泄漏排查"
    assert "<strong>内存</strong>" in entry.find(ATOM + "content").text  # the snippet, highlighted


class Fragment(html.parser.HTMLParser):
    """The tags, attributes and text of an HTML fragment."""

    def __init__(self, fragment: str):
        super().__init__()
        self.tags, self.attrs, self.text = [], [], []
        self.feed(fragment)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs

    def handle_data(self, data):
        self.text.append(data)


def test_payloads_are_text_in_the_atom_feed(hostile_datasette):
    status, xml = get(hostile_datasette + "/latest.atom")
    assert status == 200
    assert "<script" not in xml and "<img" not in xml  # escaped, every one
    entry = next(e for e in ET.fromstring(xml.encode()).findall(ATOM + "entry")
                 if e.find(ATOM + "id").text == HOSTILE["url"])
    assert entry.find(ATOM + "title").text == HOSTILE["title"]
    content = Fragment(entry.find(ATOM + "content").text)
    assert "script" not in content.tags and "img" not in content.tags and "div" not in content.tags
    assert not [(k, v) for k, v in content.attrs if k.startswith("on") or "javascript" in (v or "")]
    assert SCRIPT_PAYLOAD in "".join(content.text) and IMG_PAYLOAD in "".join(content.text)


def test_binds_to_loopback_only(datasette):
    port = int(datasette.split(":")[2].split("/")[0])
    listening = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, local_port = local.split(":")
            if state == "0A" and int(local_port, 16) == port:
                listening.add(address)
    assert listening == {"0100007F"}  # 127.0.0.1, and nothing else


def test_sql_is_read_only(datasette):
    for sql in ("delete from posts", "update posts set title = 'x'", "drop table posts",
                "select 1; delete from posts"):
        assert get(datasette + ".json?sql=" + quote(sql))[0] == 400, sql
    assert get_json(datasette + ".json?_shape=array&sql=" + quote("select count(*) as n from posts"))[0]["n"] == 7


def test_sql_has_a_time_limit(datasette):
    forever = "with recursive n(i) as (select 1 union all select i + 1 from n) select count(*) from n"
    started = time.monotonic()
    status, body = get(datasette + ".json?sql=" + quote(forever))
    assert status == 400 and "too long" in body
    assert time.monotonic() - started < 10


@pytest.fixture(scope="module")
def public_archive(example_archive, tmp_path_factory):
    """A copy of the example archive under a file name with a space and dots."""
    path = tmp_path_factory.mktemp("public") / "my blogs.v2.db"
    shutil.copy(example_archive, path)
    return path


@pytest.fixture(scope="module")
def public(public_archive):
    """``blogarchive serve --public``: its base URL and the URL of its database."""
    with serving(public_archive, "--public") as base:
        [database] = [d for d in get_json(base + "/-/databases.json") if d["name"] == public_archive.stem]
        yield base, base + "/" + tilde_encode(database["route"])


def test_any_file_name_gets_the_metadata(public):
    base, database = public
    assert "One row per post" in get(database + "/posts")[1]
    assert "Newest posts" in get(base + "/")[1]
    assert titles(get_json(database + "/search.json?_shape=array&q=" + quote("内存"))) == ["记一次 Node.js 服务的内存泄漏排查"]


def test_public_turns_arbitrary_sql_off(public):
    base, database = public
    assert get(database + ".json?sql=" + quote("select 1"))[0] == 403
    assert get(database + "/posts.json?_where=" + quote("1 = 1"))[0] == 403
    assert "Custom SQL query" not in get(database)[1]
    assert get_json(base + "/-/settings.json")["default_allow_sql"] is False
    assert "Notes on SQLite WAL Mode" in titles(get_json(database + "/posts.json?_shape=array&_search=sqlite"))
    assert len(get_json(database + "/latest.json?_shape=array")) == 7
    assert feed_entries(database + "/latest.atom")


def test_serves_the_live_archive(public, public_archive):
    """Not immutable: posts a crawl saves while Datasette runs show up at once."""
    _, database = public
    db = archive.open_archive(public_archive)
    run = archive.start_run(db, [1])
    archive.save_post(db, {"source_id": 1, "url": f"http://{EXPECTED['host']}/p/999/", "title": "Saved while serving",
                           "text": "A brand new post.", "published": "2030-01-01T00:00:00Z"}, run_id=run)
    db.close()
    assert get_json(database + "/posts.json?_shape=array&_size=1")[0]["title"] == "Saved while serving"
    assert titles(get_json(database + "/posts.json?_shape=array&_search=brand")) == ["Saved while serving"]


def curl_examples() -> list[str]:
    """The curl commands of docs/datasette.md."""
    doc = (ROOT / "docs" / "datasette.md").read_text(encoding="utf-8")
    return [line for block in re.findall(r"```bash\n(.*?)```", doc, re.DOTALL) for line in block.splitlines()
            if line.startswith("curl ")]


def test_docs_have_four_curl_examples():
    assert len(curl_examples()) == 4


@pytest.fixture(scope="module")
def demo(example_archive, tmp_path_factory):
    """``blogarchive serve --db demo.db`` on the example blog, as after ``make demo``; its base URL."""
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    shutil.copy(example_archive, path)
    with serving(path) as base:
        yield base


@pytest.mark.parametrize("command", curl_examples())
def test_docs_curl_example_works_as_pasted(command, demo):
    """Each example as written, on a free port instead of 8001."""
    args = [arg.replace("http://127.0.0.1:8001", demo) for arg in shlex.split(command)]
    proc = subprocess.run(["curl", "--fail", "--silent", "--show-error", *args[1:]],
                          capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()
    if ".atom" in command:
        assert ET.fromstring(proc.stdout.encode()).findall(ATOM + "entry")
    else:
        assert json.loads(proc.stdout)


def test_a_search_neither_index_answers_does_not_count_against_the_time_limit_of_its_query(example_archive):
    """Datasette stops a query after so much work (its time limit, a progress handler). A search that
    needs both indexes (a short word beside a long one) is computed apart from the query that asked for
    it, on a connection of its own: on Datasette's, that work counted against the query."""
    sys.path.insert(0, str(ROOT / "archive" / "datasette" / "plugins"))
    from archive_search import prepare_connection

    query = "select rowid from posts_search where posts_search match escape_fts(?)"
    counted = sqlite3.connect(example_archive)
    prepare_connection(counted)
    counted.execute(query, ["内存 node"]).fetchall()  # the matches, known from now on
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    counted.set_progress_handler(count, 1)
    expected = counted.execute(query, ["内存 node"]).fetchall()
    own_work = steps[0]  # what the query itself does
    archive.search.matches._matches.clear()  # computed again, on the next connection's watch
    limited = sqlite3.connect(example_archive)
    prepare_connection(limited)
    steps[0] = 0
    limited.set_progress_handler(lambda: count() or steps[0] > 2 * own_work, 1)
    assert limited.execute(query, ["内存 node"]).fetchall() == expected != []


def test_a_search_is_computed_once_for_all_of_datasettes_connections(example_archive):
    sys.path.insert(0, str(ROOT / "archive" / "datasette" / "plugins"))
    import archive_search

    archive.search.matches._matches.clear()
    first, second = sqlite3.connect(example_archive), sqlite3.connect(example_archive)
    for conn in (first, second):
        archive_search.prepare_connection(conn)
    query = "select rowid from posts_search where posts_search match escape_fts(?)"
    found = first.execute(query, ["内存 node"]).fetchall()
    matches = archive_search.matches_of(first)
    kept = matches.found["内存 node"]
    assert second.execute(query, ["内存 node"]).fetchall() == found != []
    assert archive_search.matches_of(second) is matches and matches.found["内存 node"] is kept  # not computed again


@pytest.mark.parametrize("query, arm", [
    ("sqlite", "SCAN posts_fts VIRTUAL TABLE INDEX 0:M2"),
    ("数据库索引", "SCAN posts_fts VIRTUAL TABLE INDEX 0:M2"),
    ("内存", "SCAN posts_grams VIRTUAL TABLE INDEX 0:M1"),
    ("内", "SCAN posts_grams VIRTUAL TABLE INDEX 0:M1"),
])
def test_the_search_view_answers_from_an_index_without_reading_every_post(example_archive, query, arm):
    sys.path.insert(0, str(ROOT / "archive" / "datasette" / "plugins"))
    import archive_search

    conn = sqlite3.connect(example_archive)
    archive_search.prepare_connection(conn)
    sql = "select id from posts where id in (select rowid from posts_search where posts_search match escape_fts(?))"
    steps = [r[3] for r in conn.execute(f"explain query plan {sql}", [query])]
    assert arm in steps and not any(step.split()[:2] == ["SCAN", "posts"] for step in steps), steps
    scanned = []
    conn.create_function("posts_search_scanned", 0, lambda: scanned.append(1) or "[]")
    assert conn.execute(sql, [query]).fetchall() and scanned == []  # the third arm is not read


def test_a_protected_post_shows_as_protected_with_no_text(tmp_path):
    path = tmp_path / "protected.db"
    db = archive.open_archive(path)
    source = archive.ensure_source(db, "https://diary.test/")
    run = archive.start_run(db, [source["id"]])
    reason = "encrypted: a password form and 2784 characters of ciphertext"
    archive.save_post(db, {"url": "https://diary.test/2024/01/secret/", "source_id": source["id"], "title": "Secret",
                           "published": "2024-01-02T00:00:00Z", "text": "", "markdown": "", "tags": ["diary"],
                           "protected": reason}, run_id=run)
    archive.finish_run(db, run, status="finished", seconds=1, pages=1)
    db.conn.close()
    with serving(path) as base:
        status, body = get(f"{base}/{path.stem}/posts/1")
        assert status == 200
        assert "Protected post" in body and reason in body
        found = get_json(f"{base}/{path.stem}/posts.json?_shape=array&protected__notblank=1")
        assert [p["title"] for p in found] == ["Secret"]


# A search that matches many posts of an archive is answered differently from one that matches few
# (archive_search.search_clause): the same rows, in the same order, with the same count and facets.
MANY = [f"Post {i:02d}" for i in range(60)]


@pytest.fixture(scope="module")
def searched_archive(tmp_path_factory):
    """60 posts of two blogs, published in an order that is not their ids': ``kernel`` in every other
    one, ``内存`` in every third, ``zeppelin`` in one; a tag twice in every sixth."""
    path = tmp_path_factory.mktemp("searched") / "searched.db"
    db = archive.open_archive(path)
    for url in ("https://one.test/", "https://two.test/"):
        archive.ensure_source(db, url)
    run = archive.start_run(db, [1, 2])
    tags = ["alpha", "beta", "gamma", "delta"]
    for i, title in enumerate(MANY):
        words = ["kernel" if i % 2 else "plain", "内存" if i % 3 == 0 else "数据", "zeppelin" if i == 41 else "text"]
        archive.save_post(db, {"source_id": 1 + i % 2, "url": f"https://{'one' if i % 2 == 0 else 'two'}.test/p/{i}",
                               "title": title, "text": " ".join(words), "lang": "zh" if i % 3 == 0 else "en",
                               "tags": [tags[i % 4], tags[(i + 1) % 4]] + [tags[i % 4]] * (i % 6 == 0),  # one twice
                               "published": f"{2010 + (i * 7) % 13}-{1 + i % 12:02d}-{1 + i % 28:02d}T00:00:00Z"},
                          run_id=run)
    db.close()
    return path


@pytest.fixture(scope="module")
def searched(searched_archive):
    with serving(searched_archive) as base:
        yield base + "/" + searched_archive.stem


def expected_search(path, fts: str, grams: str | None = None) -> list[dict]:
    """The posts a search finds, newest first, read without the plugin."""
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    ids = "select rowid from posts_fts where posts_fts match :fts"
    if grams:
        ids += " intersect select rowid from posts_grams where posts_grams match :grams"
    rows = conn.execute(f"select * from posts where id in ({ids}) order by published desc", {"fts": fts, "grams": grams})
    return [dict(r) for r in rows]


@pytest.mark.parametrize("query, fts, grams, many", [
    ("kernel", '"kernel"', None, True),  # half of the posts
    ("内存", None, '"内存"', True),  # a third, from posts_grams
    ("zeppelin", '"zeppelin"', None, False),  # one post in 60
    ("内存 kernel", '"kernel"', '"内存"', True),  # both indexes (the third arm)
])
def test_a_search_gives_the_same_rows_count_and_facets_however_many_posts_it_matches(
        searched, searched_archive, query, fts, grams, many):
    if fts is None:  # a short word alone: posts_grams only
        conn = sqlite3.connect(searched_archive)
        conn.row_factory = sqlite3.Row
        expected = [dict(r) for r in conn.execute(
            "select * from posts where id in (select rowid from posts_grams where posts_grams match ?) order by published desc",
            [grams])]
    else:
        expected = expected_search(searched_archive, fts, grams)
    assert expected
    data = get_json(searched + f"/posts.json?_search={quote(query)}&_size=7&_facet_size=50")
    assert data["filtered_table_rows_count"] == len(expected)
    assert ("posts_search_has(" in data["query"]["sql"]) is many, data["query"]["sql"]
    facets = {f["name"]: {r["value"]: r["count"] for r in f["results"]} for f in data["facet_results"].values()
              if f["type"] in ("column", "array")}
    assert facets["lang"] == dict(Counter(p["lang"] for p in expected))
    assert facets["source_id"] == dict(Counter(p["source_id"] for p in expected))
    assert facets["tags"] == dict(Counter(t for p in expected for t in set(json.loads(p["tags"]))))  # once a post
    years = next(f for f in data["facet_results"].values() if f["type"] == "year")
    assert {r["value"]: r["count"] for r in years["results"]} == dict(Counter(p["published"][:4] for p in expected))
    found, page = [], data
    while True:  # every page, through Datasette's _next
        found += [r[page["columns"].index("title")] for r in page["rows"]]
        if not page["next_url"]:
            break
        page = get_json(page["next_url"])
    assert found == [p["title"] for p in expected]  # the same posts, newest first


def test_a_common_word_is_read_newest_first_from_indexes_not_from_every_matching_row(searched_archive):
    """EXPLAIN QUERY PLAN of the queries of the posts table's page for a search that matches half the
    posts: the page walks idx_posts_published and stops (no sort), the count and the facets read
    indexes that cover them, never the posts' rows."""
    sys.path.insert(0, str(ROOT / "archive" / "datasette" / "plugins"))
    import archive_search

    conn = sqlite3.connect(searched_archive)
    archive_search.prepare_connection(conn)
    metadata = {"fts_table": "posts_search", "fts_pk": "id"}
    assert archive_search.matches_of(conn).many("kernel")
    where = archive_search.search_clause(metadata, True)
    every = "select * from posts where " + where

    def plan(sql: str) -> list[str]:
        return [r[3] for r in conn.execute(f"explain query plan {sql}", {"search": "kernel"})]

    page = plan(f"{every} order by published desc limit 101")
    assert "SCAN posts USING INDEX idx_posts_published" in page and not any("ORDER BY" in s for s in page), page
    for sql in (f"select count(*) from posts where {where}",
                f"select lang, count(*) from ({every}) where lang is not null group by lang",
                f"select source_id, count(*) from ({every}) where source_id is not null group by source_id",
                f"select substr(published, 1, 4) as y, count(*) from ({every}) group by y",
                f"with inner as (select id, tags from ({every})) select j.value, count(*) from json_each(inner.tags) j join inner group by j.value"):
        steps = plan(sql)
        assert any("COVERING INDEX" in s for s in steps) and not any(s in ("SCAN posts", "SCAN inner") for s in steps), (sql, steps)


# A search alone on the posts table takes its count and facets from a summary of its matches
# (archive.search.matches.Summary), computed once per search: the same page as Datasette's SQL gives.
@contextlib.contextmanager
def tracing(db: Path) -> Iterator[str]:
    """``datasette serve`` as ``blogarchive serve`` runs it, with ``?_trace=1`` on: the statements each
    page ran are in its JSON. Yields the URL of the archive's database."""
    metadata = yaml.safe_load(archive.cli.serve.METADATA.read_text(encoding="utf-8"))
    metadata["databases"] = {db.stem: metadata["databases"]["archive"]}
    path = db.with_suffix(".metadata.json")
    path.write_text(json.dumps(metadata))
    port = free_port()
    args = [*archive.cli.serve.datasette_args(str(db), "127.0.0.1", port, False, str(path)), "--setting", "trace_debug", "1"]
    proc = subprocess.Popen([str(Path(sys.executable).with_name("datasette")), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(150):
            try:
                urllib.request.urlopen(base + "/-/versions.json", timeout=2)
                break
            except OSError:
                assert proc.poll() is None, "datasette did not start"
                time.sleep(0.2)
        yield f"{base}/{db.stem}"
    finally:
        proc.terminate()
        proc.wait(10)


def statements(page: dict) -> list[str]:
    return [t["sql"] for t in page["_trace"]["traces"] if "sql" in t]


def same_page_from_sql(database: str, query: str) -> tuple[dict, dict]:
    """The posts table's page for a search alone (from its summary) and the same page through
    Datasette's SQL: the search with a filter that keeps every post (``id__gte=1``), taken out of
    the second page's URLs again."""
    url = f"{database}/posts.json?_search={quote(query)}&_size=5&_facet_size=3&_trace=1"
    summarised, through_sql = get_json(url), get_json(url + "&id__gte=1")
    assert not any(s.startswith("select count(*)") or "group by" in s for s in statements(summarised))
    assert any(s.startswith("select count(*)") for s in statements(through_sql))
    for page in (summarised, through_sql):
        del page["_trace"], page["query_ms"]
    return summarised, json.loads(json.dumps(through_sql).replace("&id__gte=1", "").replace("id__gte=1&", ""))


@pytest.fixture
def traced(searched_archive, tmp_path):
    """A copy of the 60 searched posts, served with ``?_trace=1``: its path and its database's URL."""
    path = tmp_path / "traced.db"
    shutil.copy(searched_archive, path)
    with tracing(path) as database:
        yield path, database


@pytest.mark.parametrize("query", ["kernel", "内存", "zeppelin", "内存 kernel"])
def test_a_search_alone_is_counted_and_faceted_from_its_summary_as_datasettes_sql_would(traced, query):
    _, database = traced
    summarised, through_sql = same_page_from_sql(database, query)
    assert [f["truncated"] for f in summarised["facet_results"].values()] != [False] * 5 or query == "zeppelin"
    for key in ("filtered_table_rows_count", "facet_results", "rows", "next_url"):
        assert summarised[key] == through_sql[key], key


def test_a_search_with_another_filter_is_counted_and_faceted_by_sql(traced):
    path, database = traced
    page = get_json(f"{database}/posts.json?_search=kernel&lang=en&_facet_size=50&_trace=1")
    assert any(s.startswith("select count(*)") for s in statements(page))
    expected = [p for p in expected_search(path, '"kernel"') if p["lang"] == "en"]
    assert page["filtered_table_rows_count"] == len(expected)
    tags = next(f for f in page["facet_results"].values() if f["name"] == "tags")
    assert {r["value"]: r["count"] for r in tags["results"]} == dict(Counter(t for p in expected for t in set(json.loads(p["tags"]))))
    first = get_json(f"{database}/posts.json?_search=kernel&_size=5")
    later = get_json(first["next_url"] + "&_trace=1")  # Datasette facets a later page's rows only: through SQL
    assert any("group by" in s for s in statements(later))
    assert later["filtered_table_rows_count"] == first["filtered_table_rows_count"]


def test_a_summary_is_computed_again_after_a_crawl_commits_posts(traced):
    path, database = traced
    before, _ = same_page_from_sql(database, "kernel")
    db = archive.open_archive(path)
    run = archive.start_run(db, [1])
    archive.save_post(db, {"source_id": 2, "url": "https://two.test/p/new", "title": "New kernel notes",
                           "text": "kernel again", "lang": "en", "tags": ["omega"], "published": "2031-05-01T00:00:00Z"},
                      run_id=run)
    db.close()
    time.sleep(2 * archive.search.matches.RECHECK_SECONDS)
    after, through_sql = same_page_from_sql(database, "kernel")
    assert after["filtered_table_rows_count"] == before["filtered_table_rows_count"] + 1
    years = next(f for f in after["facet_results"].values() if f["type"] == "year")
    assert years["results"][0]["value"] == "2031" and years["results"][0]["count"] == 1
    for key in ("filtered_table_rows_count", "facet_results", "rows"):
        assert after[key] == through_sql[key], key
