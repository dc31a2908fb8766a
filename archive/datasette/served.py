"""What the archive's Datasette routes share: the archive a route's URL names."""

from datasette.app import Datasette
from datasette.database import Database
from datasette.utils.asgi import NotFound, Request


async def named_archive(datasette: Datasette, request: Request, table: str) -> Database:
    """The database ``request.url_vars["database"]`` names, once the actor may view it.

    Raises:
        NotFound: no such database, or one without ``table`` (not a blogarchive archive).
    """
    name = request.url_vars["database"]
    try:
        db = datasette.get_database(name)
    except KeyError:
        raise NotFound(f"no database {name}") from None
    await datasette.ensure_permissions(request.actor, [("view-database", name), "view-instance"])
    if not db.path or not await db.table_exists(table):
        raise NotFound(f"{name} is not a blogarchive archive")
    return db
