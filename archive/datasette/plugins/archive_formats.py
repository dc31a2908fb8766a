"""The archive in the archivists' and the feed readers' formats, made when asked for.

``/-/blogarchive/DATABASE.warc.gz`` is ``blogarchive export warc`` of the
captures as they are at that moment, ``/-/blogarchive/DATABASE.opml`` is
``blogarchive export opml``: nothing is written ahead, so nothing is stale.
Both need the permission to view the database.

``.atom`` is datasette-atom's feed of a query's rows, and a query that finds
nothing (a search with no match) is an empty feed, not datasette-atom's error
(it takes the newest of no dates).
"""

import asyncio
import os
import sqlite3
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import datasette_atom
from datasette import __version__ as datasette_version
from datasette import hookimpl
from datasette.app import Datasette
from datasette.utils.asgi import AsgiFileDownload, Request, Response
from feedgen.feed import FeedGenerator
from sqlite_utils import Database

from archive.datasette.served import named_archive
from archive.formats.opml import export_opml
from archive.formats.warc import export_warc


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


def render_atom(datasette: Datasette, request: Request, sql: str, columns: list[str], rows: list[Any],
                database: str, table: str | None, query_name: str | None, view_name: str, data: dict[str, Any]) -> Response:
    """datasette-atom's feed of the rows; with none, an empty feed titled as datasette-atom titles it."""
    if rows:
        return datasette_atom.render_atom(datasette, request, sql, columns, rows, database, table, query_name,
                                          view_name, data)
    feed = FeedGenerator()
    feed.generator(generator="Datasette", version=datasette_version, uri="https://github.com/simonw/datasette")
    feed.id(request.url)
    feed.link(href=request.url, rel="self")
    feed.updated(datetime.now(UTC))  # nothing found, as of now
    query = ((datasette.metadata(database=database) or {}).get("queries") or {}).get(query_name or "")
    title = query.get("title") if isinstance(query, dict) else None
    feed.title(title or request.args.get("_feed_title", sql) + (f"/{table}" if table else ""))
    return Response(feed.atom_str(pretty=True), content_type="application/xml; charset=utf-8", status=200)


@hookimpl(trylast=True)  # called after datasette-atom's: this "atom" renderer is the one kept
def register_output_renderer() -> dict[str, Any]:
    return {"extension": "atom", "render": render_atom, "can_render": datasette_atom.can_render_atom}


@hookimpl
def register_routes() -> list[tuple[str, Callable[..., Any]]]:
    return [
        (r"^/-/blogarchive/(?P<database>[^/]+)\.warc\.gz$", warc),
        (r"^/-/blogarchive/(?P<database>[^/]+)\.opml$", opml),
    ]
