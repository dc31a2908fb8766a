"""Exports: a full SQL dump, a table or read-only query as CSV, JSON or NDJSON, Markdown files (with their images)."""

import base64
import csv
import json
import os
import re
import sqlite3
import tempfile
import unicodedata
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any, TextIO, cast
from urllib.parse import urlsplit

import yaml
from sqlite_utils import Database

from archive.core.db import is_damage
from archive.search.index import post_grams
from archive.tables.captures import load_body
from archive.tables.media import OK, post_media


def dump_sql(db: Database, out: TextIO) -> None:
    """Write a dump that ``sqlite3 new.db < dump.sql`` restores.

    Python's ``iterdump`` cannot restore FTS5 tables, so the dump is taken of
    a copy without them; they are created again at its end and rebuilt from
    their content tables, except the contentless ``posts_grams``, whose rows
    (``post_grams()`` of each post, which the sqlite3 shell lacks) are written out.
    """
    with tempfile.TemporaryDirectory() as tmp:
        copy = sqlite3.connect(os.path.join(tmp, "copy.db"))
        try:
            db.conn.backup(copy)
            virtual = copy.execute(
                "select name, sql from sqlite_master where type = 'table' and sql like 'CREATE VIRTUAL TABLE%'"
            ).fetchall()
            for name, _ in virtual:
                copy.execute(f"drop table [{name}]")
            for line in copy.iterdump():
                if line == "COMMIT;":
                    for name, sql in virtual:
                        out.write(f"{sql};\n")
                        if name == "posts_grams":
                            _dump_grams(copy, out)
                        else:
                            out.write(f"INSERT INTO [{name}]([{name}]) VALUES('rebuild');\n")
                out.write(line + "\n")
        finally:
            copy.close()


def _dump_grams(conn: sqlite3.Connection, out: TextIO) -> None:
    for post_id, title, text, protected in conn.execute("select id, title, text, protected from posts"):
        grams = post_grams(title, text, protected).replace("'", "''")
        out.write(f"INSERT INTO posts_grams(rowid, grams) VALUES({int(post_id)}, '{grams}');\n")


def rows_for(db: Database, *, table: str | None = None, query: str | None = None) -> Iterator[dict[str, Any]]:
    """Rows of a table, or of a query run with writes refused.

    Raises:
        ValueError: neither or both of table and query, an unknown table, or
            a query that fails or tries to write.
        sqlite3.DatabaseError: the archive is damaged (``is_damage``).
    """
    if (table is None) == (query is None):
        raise ValueError("give a table or a query, not both")
    if table is not None:
        if not db[table].exists():
            raise ValueError(f"no such table: {table}")
        query = f"select * from [{table}]"
    db.execute("PRAGMA query_only = ON")
    try:
        yield from db.query(cast(str, query))  # a table or a query: the check above
    except sqlite3.Error as e:
        if is_damage(e):  # the archive's, not the query's: the caller says so
            raise
        raise ValueError(f"query failed: {e}") from e
    finally:
        db.execute("PRAGMA query_only = OFF")


def _blob(value: object) -> dict[str, Any]:
    """A blob (a capture's compressed body) in JSON as sqlite-utils writes and reads it back."""
    if isinstance(value, bytes):
        return {"$base64": True, "encoded": base64.b64encode(value).decode("ascii")}
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def write_rows(rows: Iterator[dict[str, Any]], out: TextIO, fmt: str) -> int:
    """Write rows as csv, json or ndjson; return how many."""
    count = 0
    if fmt == "ndjson":
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False, default=_blob) + "\n")
            count += 1
    elif fmt == "json":
        out.write("[")
        for row in rows:
            out.write(("," if count else "") + "\n" + json.dumps(row, ensure_ascii=False, default=_blob))
            count += 1
        out.write("\n]\n")
    elif fmt == "csv":
        writer = None
        for row in rows:
            if writer is None:
                writer = csv.DictWriter(out, fieldnames=list(row))
                writer.writeheader()
            writer.writerow(row)
            count += 1
    else:
        raise ValueError(f"unknown format: {fmt}")
    return count


SAFE_NAME = re.compile(r"[^\w\-.]+", re.UNICODE)
MAX_NAME_BYTES = 150  # well under the 255 of common file systems, with room for "-NN.md"
FRONT_MATTER_FIELDS = ("title", "url", "author", "published", "updated", "tags", "categories", "lang")


IMAGE_SUFFIXES = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp", "image/svg+xml": "svg"}


def safe_filename(name: str, *, fallback: str = "post") -> str:
    """A file name made of ``name``'s letters, digits, ``-``, ``_`` and ``.``: no path, no NUL, not hidden."""
    name = SAFE_NAME.sub("-", unicodedata.normalize("NFC", name)).strip("-.")
    while len(name.encode("utf-8")) > MAX_NAME_BYTES:
        name = name[:-1]
    return name.rstrip("-.") or fallback


def export_markdown(db: Database, out_dir: str) -> int:
    """Write one Markdown file per post, with YAML front matter, under ``out_dir/SOURCE/``.

    File names come from the publish day and the title, made safe: whatever a
    post's title says, nothing is written outside ``out_dir``. A post's archived
    images go in a folder beside its file, named as the file is, and its Markdown
    links to them there. Returns the number of files written.
    """
    root = Path(out_dir).resolve()
    root.mkdir(parents=True, exist_ok=True)
    used: set[Path] = set()
    count = 0
    sql = "select p.*, s.name as source from posts p join sources s on s.id = p.source_id order by p.id"
    for post in db.query(sql):
        folder = root / safe_filename(post["source"], fallback=f"source-{post['source_id']}")
        stem = safe_filename(f"{(post['published'] or '')[:10]}-{post['title'] or ''}".strip("-"))
        path = folder / f"{stem}.md"
        n = 1
        while path in used:
            n += 1
            path = folder / f"{stem}-{n}.md"
        if not path.resolve().is_relative_to(root):  # safe_filename makes this impossible; keep it so
            raise ValueError(f"refusing to write outside {root}: {path}")
        used.add(path)
        folder.mkdir(exist_ok=True)
        matter = {k: json.loads(post[k]) if k in ("tags", "categories") else post[k] for k in FRONT_MATTER_FIELDS}
        front = yaml.safe_dump({k: v for k, v in matter.items() if v}, allow_unicode=True, sort_keys=False)
        body = _with_images(db, post, path, post["markdown"] or post["text"] or "")
        path.write_text(f"---\n{front}---\n\n{body}\n", encoding="utf-8")
        count += 1
    return count


def _with_images(db: Database, post: dict[str, Any], path: Path, body: str) -> str:
    """The post's Markdown with its archived images written beside it, in ``STEM/``: each link to one
    made relative to its file, and those it does not link to added at the end, in order."""
    added = []
    for medium in post_media(db, post["id"]):
        if medium["status"] != OK or not (body_bytes := load_body(db, medium["sha256"])):
            continue
        name = safe_filename(PurePosixPath(urlsplit(medium["url"]).path).stem, fallback="image")
        local = f"{path.stem}/{medium['position'] + 1:02d}-{name}.{IMAGE_SUFFIXES.get(medium['content_type'], 'bin')}"
        (path.parent / path.stem).mkdir(exist_ok=True)
        (path.parent / local).write_bytes(body_bytes)
        if f"]({medium['url']})" in body:
            body = body.replace(f"]({medium['url']})", f"]({local})")
        else:
            added.append(f"![{(medium['alt'] or '').replace(']', '')}]({local})")
    return "\n\n".join([body, *added]) if added else body
