"""Exports of a crawled archive: SQL dump round trip, CSV, JSON and NDJSON."""

import csv
import io
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

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


def test_markdown_export_one_file_per_post(example_archive, tmp_path):
    out = tmp_path / "md"
    run_cli("export", "markdown", "-o", str(out), "--db", str(example_archive))
    files = sorted((out / "example-notes.test").glob("*.md"))
    assert len(files) == len(EXPECTED["posts"])
    chinese = next(f for f in files if "内存泄漏" in f.name)
    text = chinese.read_text(encoding="utf-8")
    assert text.startswith("---\ntitle: 记一次 Node.js 服务的内存泄漏排查\nurl: http://example-notes.test/p/106/\n")
    assert "内存" in text.split("---", 2)[2]


HOSTILE_TITLES = ["../../escape", "/etc/passwd", "..", "a\x00b", "C:\\\\windows\\\\x", "é" * 300, "", "nul/../../x"]


def test_markdown_export_never_writes_outside_its_folder(tmp_path):
    from archive import ensure_source, open_archive, save_post, start_run

    db_path = tmp_path / "hostile.db"
    db = open_archive(db_path)
    ensure_source(db, "https://blog.test/")
    run = start_run(db, [1])
    for i, title in enumerate(HOSTILE_TITLES):
        save_post(db, {"source_id": 1, "url": f"https://blog.test/p/{i}", "title": title, "text": f"body {i}"}, run_id=run)
    db.close()
    out = tmp_path / "out"
    run_cli("export", "markdown", "-o", str(out), "--db", str(db_path))
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix == ".md"]
    assert len(written) == len(HOSTILE_TITLES)
    for path in written:
        assert path.resolve().is_relative_to(out.resolve())
        assert len(path.name.encode()) < 255 and "\x00" not in path.name and not path.name.startswith(".")
    assert sorted(p.read_text().split("\n\n", 1)[1].strip() for p in written) == sorted(f"body {i}" for i in range(len(HOSTILE_TITLES)))


def test_a_table_of_blobs_exports_as_json_that_sqlite_utils_reads_back(example_archive, tmp_path):
    import base64
    import zlib

    for fmt in ("json", "ndjson"):
        out = run_cli("export", fmt, "--table", "capture_bodies", "--db", str(example_archive)).stdout
        rows = json.loads(out) if fmt == "json" else [json.loads(line) for line in out.splitlines()]
        stored = dict(sqlite3.connect(example_archive).execute("select sha256, body from capture_bodies"))
        assert rows and {r["sha256"]: base64.b64decode(r["body"]["encoded"]) for r in rows} == stored
        assert all(r["body"]["$base64"] is True for r in rows) and zlib.decompress(stored[rows[0]["sha256"]])
    # sqlite-utils' own insert reads the same form back into a blob
    path = tmp_path / "bodies.json"
    path.write_text(run_cli("export", "json", "--table", "capture_bodies", "--db", str(example_archive)).stdout)
    copy = tmp_path / "copy.db"
    subprocess.run([str(Path(sys.executable).with_name("sqlite-utils")), "insert", str(copy), "capture_bodies",
                    str(path)], check=True)
    assert dict(sqlite3.connect(copy).execute("select sha256, body from capture_bodies")) == stored
