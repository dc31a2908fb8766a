"""What the archive's pages know beyond their row: the front page's blogs, newest
posts and last crawl; a post page's blog, and the posts of that blog before and after it.

The front page runs the canned queries of metadata.yml (``crawl_health``,
``latest``), so it and the queries a visitor can open always agree.
"""

import json
from typing import Any

from datasette import hookimpl
from datasette.app import Datasette
from datasette.utils.asgi import Request

from archive.datasette.dates import long_date, long_time

NEWEST = 10


async def archive_summary(datasette: Datasette, database: str, actor: Any) -> dict[str, Any] | None:
    """The front page's facts about ``database``, or None when it is not an archive."""
    db = datasette.get_database(database)
    if not await db.table_exists("posts"):
        return None

    async def canned(name: str) -> list[dict[str, Any]]:
        query = await datasette.get_canned_query(database, name, actor)
        return [dict(r) for r in await db.execute(query["sql"])] if query else []

    newest = (await canned("latest"))[:NEWEST]
    for post in newest:
        post["tags"] = json.loads(post["tags"] or "[]")
    hidden = set(await db.hidden_table_names())
    described = datasette.metadata("tables", database=database) or {}
    order = list(described)  # the tables as metadata.yml lists them, then any other
    tables = sorted(
        (t for t in await db.table_names() if t not in hidden),
        key=lambda t: order.index(t) if t in order else len(order),
    )
    last_run = (await db.execute("select * from crawl_runs order by id desc limit 1")).first()
    return {
        "database": database,
        "posts": (await db.execute("select count(*) from posts")).single_value(),
        "sources": await canned("crawl_health"),
        "newest": newest,
        "last_run": dict(last_run) if last_run else None,
        "tables": [
            {"name": t, "description": described.get(t, {}).get("description")}
            for t in tables
        ],
        "queries": list((await datasette.get_canned_queries(database, actor)).values()),
    }


@hookimpl
def extra_template_vars(template: str, database: str | None, datasette: Datasette, request: Request | None) -> Any:
    if template == "row.html":
        async def source_of(source_id: int) -> dict[str, Any] | None:
            row = (await datasette.get_database(database).execute(
                "select id, name, url from sources where id = ?", [source_id])).first()
            return dict(row) if row else None

        async def neighbours_of(post: Any) -> dict[str, dict[str, Any] | None]:
            """The blog's posts just older and just newer than ``post`` (by publication, else first seen)."""
            db, when = datasette.get_database(database), post["published"] or post["first_seen"]
            found = {}
            for name, sign, order in (("older", "<", "desc"), ("newer", ">", "asc")):
                row = (await db.execute(
                    "select id, title, url from posts where source_id = ? and id != ? "
                    f"and (coalesce(published, first_seen), id) {sign} (?, ?) "
                    f"order by coalesce(published, first_seen) {order}, id {order} limit 1",
                    [post["source_id"], post["id"], when, post["id"]])).first()
                found[name] = dict(row) if row else None
            return found

        return {"source_of": source_of, "neighbours_of": neighbours_of, "long_date": long_date, "long_time": long_time}
    if template not in ("index.html", "database.html"):
        return {"long_date": long_date, "long_time": long_time}

    async def inner() -> dict[str, Any]:
        name = database or datasette.get_database().name
        return {"archive": await archive_summary(datasette, name, request.actor if request else None), "long_date": long_date, "long_time": long_time}

    return inner
