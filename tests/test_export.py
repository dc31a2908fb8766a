"""Exports of a crawled archive: SQL dump round trip, CSV, JSON and NDJSON."""

import csv
import io
import json
import sqlite3
import subprocess

from conftest import EXPECTED, run_cli


def table(db, name):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(f"select * from {name} order by id").fetchall()
    finally:
        conn.close()


def test_sql_dump_restores_an_identical_posts_table(example_archive, tmp_path):
    dump = tmp_path / "dump.sql"
    run_cli("export", "sql", "-o", str(dump), "--db", str(example_archive))
    restored = tmp_path / "restored.db"
    with dump.open("rb") as f:
        subprocess.run(["sqlite3", str(restored)], stdin=f, check=True)
    assert table(restored, "posts") == table(example_archive, "posts")
    conn = sqlite3.connect(restored)
    hits = conn.execute("select count(*) from posts_fts where posts_fts match '\"sqlite\"'").fetchone()[0]
    conn.close()
    assert hits == 3


def test_csv_json_ndjson(example_archive):
    db = ["--db", str(example_archive)]
    rows = list(csv.DictReader(io.StringIO(run_cli("export", "csv", "--table", "posts", *db).stdout)))
    assert len(rows) == len(EXPECTED["posts"])
    data = json.loads(run_cli("export", "json", "--query", "select url, title from posts order by url", *db).stdout)
    assert data[0] == {"url": "http://example-notes.test/p/101/", "title": EXPECTED["posts"][0]["title"]}
    lines = run_cli("export", "ndjson", "--table", "sources", *db).stdout.splitlines()
    assert json.loads(lines[0])["name"] == "example-notes.test"


def test_export_query_cannot_write(example_archive):
    proc = run_cli("export", "csv", "--query", "delete from posts", "--db", str(example_archive), check=False)
    assert proc.returncode == 1
    assert "readonly" in proc.stderr.lower() or "read-only" in proc.stderr.lower()
    assert len(table(example_archive, "posts")) == len(EXPECTED["posts"])
