"""Exports: a full SQL dump, or one table or read-only query as CSV, JSON or NDJSON."""

import csv
import json
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from typing import Any, TextIO

from sqlite_utils import Database


def dump_sql(db: Database, out: TextIO) -> None:
    """Write a dump that ``sqlite3 new.db < dump.sql`` restores.

    Python's ``iterdump`` cannot restore FTS5 tables, so the dump is taken of
    a copy without them; they are created again at its end and rebuilt from
    their content tables.
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
                        out.write(f"{sql};\nINSERT INTO [{name}]([{name}]) VALUES('rebuild');\n")
                out.write(line + "\n")
        finally:
            copy.close()


def rows_for(db: Database, *, table: str | None = None, query: str | None = None) -> Iterator[dict[str, Any]]:
    """Rows of a table, or of a query run with writes refused.

    Raises:
        ValueError: neither or both of table and query, an unknown table, or
            a query that fails or tries to write.
    """
    if (table is None) == (query is None):
        raise ValueError("give a table or a query, not both")
    if table is not None:
        if not db[table].exists():
            raise ValueError(f"no such table: {table}")
        query = f"select * from [{table}]"
    db.execute("PRAGMA query_only = ON")
    try:
        yield from db.query(query)
    except sqlite3.Error as e:
        raise ValueError(f"query failed: {e}") from e
    finally:
        db.execute("PRAGMA query_only = OFF")


def write_rows(rows: Iterator[dict[str, Any]], out: TextIO, fmt: str) -> int:
    """Write rows as csv, json or ndjson; return how many."""
    count = 0
    if fmt == "ndjson":
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    elif fmt == "json":
        out.write("[")
        for row in rows:
            out.write(("," if count else "") + "\n" + json.dumps(row, ensure_ascii=False))
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
