"""A crawl job's plan: the part of the archive that the crawl of some sources reads.

A cluster job (``crawler.run.coordinator``) runs on a node that has no archive. What
its crawl reads (the sources, their posts with their aliases, chosen
metadata and latest version, the pages judged, the fetch records and the
latest capture of each URL, the hosts, the run) is copied into a small SQLite
file of the same schema, which the job reads and writes locally; every write
it makes is also sent back to the coordinator, which makes it in the archive.
"""

import os
import sqlite3
import tempfile

from sqlite_utils import Database

from archive.core.db import open_archive

# What each table of the plan holds, as a condition on the archive's rows (``?``: the source ids, the run).
COPIED = {
    "sources": "id in ({ids})",
    "crawl_runs": "id = :run",
    "hosts": "1",
    "posts": "source_id in ({ids})",
    "post_aliases": "post_id in (select id from plan.posts)",
    "provenance": "post_id in (select id from plan.posts) and chosen = 1",
    "post_versions": "id in (select max(id) from post_versions where post_id in (select id from plan.posts) group by post_id)",
    "pages": "source_id in ({ids})",
    "fetches": "source_id in ({ids})",
    "captures": "id in (select max(id) from captures where source_id in ({ids}) group by url, status)",
    # the images' rows, so that a job neither fetches an archived image again nor a theme's; not their
    # bodies, which a job never reads (an image's 304 in a --recheck job says it is unchanged)
    "media": "id in (select media_id from post_media where post_id in (select id from plan.posts))"
             " or (source_id in ({ids}) and status = 'theme')",
    "post_media": "post_id in (select id from plan.posts)",
    "capture_bodies": "sha256 in (select sha256 from plan.captures)"
                      " and sha256 not in (select sha256 from plan.media where sha256 is not null)",
}


def export_plan(db: Database, source_ids: list[int], run_id: int) -> bytes:
    """The plan of the crawl of ``source_ids`` in run ``run_id``, as the bytes of an SQLite file."""
    folder = tempfile.mkdtemp(prefix="blogarchive-plan-")
    path = os.path.join(folder, "plan.db")
    try:
        open_archive(path).close()  # the archive's schema, migrated
        ids = ",".join(str(int(i)) for i in source_ids)
        db.execute("attach database ? as plan", [path])
        db.execute("pragma foreign_keys = off")  # the tables are copied in an order of their own
        try:
            with db.conn:
                for table, where in COPIED.items():
                    columns = ", ".join(f"[{c.name}]" for c in db[table].columns)
                    db.execute(f"insert into plan.[{table}] ({columns}) select {columns} from main.[{table}] "
                               f"where {where.format(ids=ids)}", {"run": run_id})
        finally:
            db.execute("detach database plan")
            db.execute("pragma foreign_keys = on")
        with open(path, "rb") as f:
            return f.read()
    finally:
        for name in os.listdir(folder):
            os.remove(os.path.join(folder, name))
        os.rmdir(folder)


def save_plan(plan: bytes, folder: str) -> str:
    """Write a plan into ``folder``; its path, ready for ``open_archive``.

    Raises:
        ValueError: the bytes are not an SQLite file.
    """
    path = os.path.join(folder, "plan.db")
    with open(path, "wb") as f:
        f.write(plan)
    try:
        sqlite3.connect(path).execute("select count(*) from sources").fetchone()
    except sqlite3.DatabaseError as e:
        raise ValueError(f"the plan is not an archive: {e}") from e
    return path
