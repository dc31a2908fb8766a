"""The revisit policy in SQL: ``revisit_due(policy, born, checked)`` is 1 when a post is due in the next run.

``policy`` is a source's own (``sources.revisit``) or NULL for the default;
``born`` is when the post was published (else first seen), ``checked`` when
it was last fetched or revalidated: the same rule as the crawl's
(``archive.tables.revisit``), for the ``revisit_plan`` and ``revisit_posts`` queries.
"""

import sqlite3
from functools import lru_cache

from datasette import hookimpl

from archive.tables.revisit import DEFAULT_POLICY, is_due, parse_policy


@lru_cache(maxsize=64)
def _rules(policy: str) -> list[tuple[float, float]]:
    return parse_policy(policy)


def revisit_due(policy: str | None, born: str | None, checked: str | None) -> int:
    return int(is_due(_rules(policy or DEFAULT_POLICY), born, checked))


@hookimpl
def prepare_connection(conn: sqlite3.Connection) -> None:
    conn.create_function("revisit_due", 3, revisit_due)
