"""WACZ: the archive's WARC packaged with its CDXJ index, a page list and a datapackage, by py-wacz."""

import contextlib
import io
import json
import tempfile
from pathlib import Path

from sqlite_utils import Database
from wacz.main import main as wacz_main

from archive.formats.warc import export_warc

POSTS_SQL = "select url, title, published from posts where gone_at is null order by published, id"


def export_wacz(db: Database, path: str, *, source: str | None = None, since: str | None = None) -> int:
    """Write a WACZ of the captures (as ``export_warc`` selects them) to ``path``; return the captures.

    ``pages/pages.jsonl`` lists each post with an archived page: its URL,
    title and publish date.

    Raises:
        ValueError: as ``export_warc``, or when py-wacz cannot build the package.
    """
    with tempfile.TemporaryDirectory() as tmp:
        warc = Path(tmp) / "blogarchive.warc.gz"
        with warc.open("wb") as f:
            count = export_warc(db, f, source=source, since=since)
        pages = Path(tmp) / "pages.jsonl"
        with pages.open("w", encoding="utf-8") as f:
            f.write(json.dumps({"format": "json-pages-1.0", "id": "pages", "title": "Posts"}) + "\n")
            for post in _posts(db, source):
                f.write(json.dumps({"url": post["url"], "title": post["title"], "date": post["published"]},
                                   ensure_ascii=False) + "\n")
        log = io.StringIO()
        with contextlib.redirect_stdout(log):  # py-wacz reports with print()
            failed = wacz_main(["create", "-o", path, str(warc), "-p", str(pages), "--title", "blogarchive"])
        if failed:
            raise ValueError(f"py-wacz could not build {path}: {log.getvalue().strip().splitlines()[-1:]}")
    return count


def _posts(db: Database, source: str | None) -> list[dict[str, str]]:
    if source is None:
        return list(db.query(POSTS_SQL))
    sql = POSTS_SQL.replace("where", "where source_id in (select id from sources where name = ?) and")
    return list(db.query(sql, [source]))
