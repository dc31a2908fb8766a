"""A quiet serve console: one line per problem.

- Datasette counts the rows of every table for the front and database pages
  (``Database.table_counts``), the archive's ``posts_grams`` included: a contentless FTS5 table
  cannot be scanned, so each load logged ``ERROR: ... select count(*) from [posts_grams] ...
  table does not support scanning`` and, that count missing, showed no table's count at all.
  The contentless FTS5 tables are left out of the counts.
- Datasette's error handler printed rich's traceback, with every local variable, for every
  error, a 404 included (120 lines). Without it, a 404 or any other 4xx is the access log's one
  line, and a server error prints Python's own traceback once.
"""

import sqlite3

from datasette import handle_exception as default_handler
from datasette import hookimpl
from datasette.app import Datasette
from datasette.database import Database, QueryInterrupted

# FTS5 tables made with content='': nothing to scan
CONTENTLESS_FTS = """select name from sqlite_master where type = 'table'
  and lower(sql) like 'create virtual table%using fts5%'
  and replace(replace(lower(sql), ' ', ''), '"', '''') like '%content=''''%'"""


def counting_scannable_tables(db: Database) -> None:
    """``db.table_counts`` as Datasette's (each table's ``count(*)`` within ``limit`` ms, None
    when it fails), over the tables that can be scanned: without the contentless FTS5 tables."""

    async def table_counts(limit: int = 10) -> dict[str, int | None]:
        skipped = {row[0] for row in await db.execute(CONTENTLESS_FTS)}
        counts: dict[str, int | None] = {}
        for table in await db.table_names():
            if table in skipped:
                continue
            try:
                counts[table] = (await db.execute(f"select count(*) from [{table}]", custom_time_limit=limit)).rows[0][0]
            except (QueryInterrupted, sqlite3.DatabaseError):
                counts[table] = None
        return counts

    db.table_counts = table_counts


@hookimpl
def startup(datasette: Datasette) -> None:
    default_handler.rich = None  # its traceback with every local, printed for every error
    for db in datasette.databases.values():
        if not db.is_memory:
            counting_scannable_tables(db)
