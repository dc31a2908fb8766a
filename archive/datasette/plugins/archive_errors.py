"""Where an error happened, in SQL: ``on_other_host(url, scope, hosts)`` is 1 for an error on a
resource of another site (an image elsewhere), 0 for one on the blog's own pages, posts and files:
the same rule as the crawl's summary (``archive.core.queries.on_other_host``), for ``crawl_health``."""

import sqlite3

from datasette import hookimpl

from archive.core.queries import on_other_host


@hookimpl
def prepare_connection(conn: sqlite3.Connection) -> None:
    conn.create_function("on_other_host", 3, lambda url, scope, hosts: int(on_other_host(url, scope, hosts)),
                         deterministic=True)
