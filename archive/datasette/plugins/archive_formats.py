"""The archive in the archivists' and the feed readers' formats, made when asked for.

``/-/blogarchive/DATABASE.warc.gz`` is ``blogarchive export warc`` of the
captures as they are at that moment, ``/-/blogarchive/DATABASE.opml`` is
``blogarchive export opml``: nothing is written ahead, so nothing is stale.
Both need the permission to view the database.
"""

import asyncio
import os
import sqlite3
import tempfile
from collections.abc import Callable
from typing import Any

from datasette import hookimpl
from datasette.app import Datasette
from datasette.utils.asgi import AsgiFileDownload, Request, Response
from sqlite_utils import Database

from archive.opml import export_opml
from archive.served import named_archive
from archive.warc import export_warc


async def _archive(datasette: Datasette, request: Request) -> Database:
    """A read-only connection to the archive the URL names (its captures read live)."""
    db = await named_archive(datasette, request, "captures")
    return Database(sqlite3.connect(f"file:{db.path}?mode=ro", uri=True, check_same_thread=False))


def _write_warc(db: Database, filename: str) -> str:
    with tempfile.NamedTemporaryFile("wb", suffix=".warc.gz", delete=False) as f:
        try:
            export_warc(db, f, filename=filename)
        finally:
            db.close()
    return f.name


class TemporaryDownload(AsgiFileDownload):
    """A file sent as an attachment, then deleted."""

    async def asgi_send(self, send: Any) -> None:
        try:
            await super().asgi_send(send)
        finally:
            os.unlink(self.filepath)


async def warc(datasette: Datasette, request: Request) -> TemporaryDownload:
    filename = f"{request.url_vars['database']}.warc.gz"
    path = await asyncio.to_thread(_write_warc, await _archive(datasette, request), filename)
    return TemporaryDownload(path, filename=filename, content_type="application/warc")


async def opml(datasette: Datasette, request: Request) -> Response:
    db = await _archive(datasette, request)
    try:
        text = await asyncio.to_thread(export_opml, db)
    finally:
        db.close()
    return Response(text, content_type="text/x-opml; charset=utf-8")


@hookimpl
def register_routes() -> list[tuple[str, Callable[..., Any]]]:
    return [
        (r"^/-/blogarchive/(?P<database>[^/]+)\.warc\.gz$", warc),
        (r"^/-/blogarchive/(?P<database>[^/]+)\.opml$", opml),
    ]
