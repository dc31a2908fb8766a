"""A post's images, served from the archive, never from the live site.

``/-/blogarchive/DATABASE/media/ID`` is an archived image's body, as the type
its bytes say, with a Content-Security-Policy that lets nothing in it run or
load (an SVG's scripts above all: ``sandbox`` and ``default-src 'none'``) and
``nosniff``. Post pages get ``post_media_of(post_id)``: the post's media in
order, each with the route of its archived body, or none (then the page shows
its alt text and why it is missing); ``captured_page_of(url)``: the last page captured at
``url``, which says where each image sat in the post (archive/datasette/reading.py).
"""

from collections.abc import Callable
from typing import Any

from datasette import hookimpl
from datasette.app import Datasette
from datasette.utils.asgi import NotFound, Request, Response

from archive.datasette.served import named_archive
from archive.tables.captures import stored_body

# nothing an image holds may run, load or be framed; inline styles only, for SVG's looks
MEDIA_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "private, max-age=3600",
}


def media_path(datasette: Datasette, database: str, media_id: int) -> str:
    return datasette.urls.path(f"/-/blogarchive/{database}/media/{media_id}")


async def media(datasette: Datasette, request: Request) -> Response:
    db = await named_archive(datasette, request, "media")
    row = (await db.execute(
        "select m.content_type, b.body from media m join capture_bodies b on b.sha256 = m.sha256 "
        "where m.id = ? and m.status = 'ok'", [int(request.url_vars["id"])])).first()
    if row is None:
        raise NotFound("no such image in the archive")
    return Response(stored_body(row["body"]), content_type=row["content_type"], headers=dict(MEDIA_HEADERS))


@hookimpl
def register_routes() -> list[tuple[str, Callable[..., Any]]]:
    return [(r"^/-/blogarchive/(?P<database>[^/]+)/media/(?P<id>\d+)$", media)]


@hookimpl
def extra_template_vars(template: str, database: str | None, datasette: Datasette) -> dict[str, Any]:
    if template != "row.html" or database is None:
        return {}

    async def post_media_of(post_id: int) -> list[dict[str, Any]]:
        db = datasette.get_database(database)
        if not await db.table_exists("post_media"):
            return []
        found = await db.execute(
            "select m.id, m.url, m.kind, m.status, m.width, m.height, pm.alt from post_media pm "
            "join media m on m.id = pm.media_id where pm.post_id = ? order by pm.position", [post_id])
        return [{**dict(r), "src": media_path(datasette, database, r["id"]) if r["status"] == "ok" else None}
                for r in found]

    async def captured_page_of(url: str) -> bytes | None:
        row = (await datasette.get_database(database).execute(
            "select b.body from captures c join capture_bodies b on b.sha256 = c.sha256 "
            "where c.url = ? and c.status = 200 order by c.id desc limit 1", [url])).first()
        return stored_body(row["body"]) if row else None

    return {"post_media_of": post_media_of, "captured_page_of": captured_page_of}
