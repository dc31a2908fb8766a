"""The archive in the archivists' and the feed readers' formats, made when asked for.

``/-/blogarchive/DATABASE.warc.gz`` is ``blogarchive export warc`` of the
captures as they are at that moment, ``/-/blogarchive/DATABASE.opml`` is
``blogarchive export opml``: nothing is written ahead, so nothing is stale.
Both need the permission to view the database.

``/-/opds`` is an OPDS 1.2 catalogue of the blogs of every archive served that
the actor may view, for e-reader apps; each blog's acquisition link is
``/-/blogarchive/DATABASE/epub/SOURCE.epub``, ``blogarchive export epub`` of
that blog, made when asked for.

``.atom`` is datasette-atom's feed of a query's rows, and a query that finds
nothing (a search with no match) is an empty feed, not datasette-atom's error
(it takes the newest of no dates).
"""

import asyncio
import os
import sqlite3
import tempfile
import unicodedata
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, unquote

import datasette_atom
from datasette import __version__ as datasette_version
from datasette import hookimpl
from datasette.app import Datasette
from datasette.utils.asgi import AsgiFileDownload, NotFound, Request, Response
from feedgen.feed import FeedGenerator
from sqlite_utils import Database

from archive.datasette.served import named_archive
from archive.formats.epub import export_epub
from archive.formats.exports import safe_filename
from archive.formats.opds import ACQUISITION_FEED, catalogue_blogs, opds_catalogue
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


def _write_epub(db: Database, source: str) -> str | None:
    """The EPUB of the source in a temporary file, or None when the archive has no such source with posts."""
    with tempfile.NamedTemporaryFile("wb", suffix=".epub", delete=False) as f:
        pass
    try:
        export_epub(db, f.name, source=source)
    except ValueError:
        os.unlink(f.name)
        return None
    finally:
        db.close()
    return f.name


async def epub(datasette: Datasette, request: Request) -> TemporaryDownload:
    source = unquote(request.url_vars["source"])
    path = await asyncio.to_thread(_write_epub, await _archive(datasette, request), source)
    if path is None:
        raise NotFound(f"no blog with posts named {source}")
    # a header's file name in ASCII: the source's name is often a host, sometimes more
    name = unicodedata.normalize("NFKD", safe_filename(source, fallback="blog")).encode("ascii", "ignore").decode()
    return TemporaryDownload(path, filename=f"{name or 'blog'}.epub", content_type="application/epub+zip")


def _blogs(path: str) -> list[dict[str, Any]]:
    db = Database(sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False))
    try:
        return catalogue_blogs(db)
    finally:
        db.close()


async def opds(datasette: Datasette, request: Request) -> Response:
    """The OPDS catalogue of the blogs of every archive served that the actor may view."""
    await datasette.ensure_permissions(request.actor, ["view-instance"])
    blogs = []
    for name, db in datasette.databases.items():
        if (name == "_internal" or not db.path or not await db.table_exists("sources")
                or not await datasette.permission_allowed(request.actor, "view-database", name, default=True)):
            continue
        for blog in await asyncio.to_thread(_blogs, db.path):
            href = f"/-/blogarchive/{quote(name, safe='')}/epub/{quote(blog['name'], safe='')}.epub"
            blogs.append({**blog, "href": datasette.absolute_url(request, datasette.urls.path(href))})
    text = opds_catalogue(blogs, title=datasette.metadata("title") or "blogarchive",
                          feed_url=datasette.absolute_url(request, datasette.urls.path("/-/opds")),
                          epub_url=lambda blog: blog["href"])
    return Response(text, content_type=f"{ACQUISITION_FEED}; charset=utf-8")


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
        (r"^/-/blogarchive/(?P<database>[^/]+)/epub/(?P<source>[^/]+)\.epub$", epub),
        (r"^/-/opds$", opds),
    ]
