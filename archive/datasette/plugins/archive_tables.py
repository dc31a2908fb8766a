"""A table's columns in the order a reader wants them: those its metadata names in
``columns_first`` (the posts' title, blog, date and tags) first, every other after them.

Datasette 0.65 shows a table's columns in the order of its schema; templates/table.html
and _table.html put its header, its cells and its narrow-screen labels through
``ordered_columns()`` instead. Nothing is left out: sorting, filtering, the column menus
and the JSON and CSV keep every column.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from datasette import hookimpl


def ordered_columns(items: Iterable[Mapping[str, Any]], first: Sequence[str] | None) -> list[Mapping[str, Any]]:
    """``items`` (a table's columns, each with its ``name``, or a row's cells, each with its
    ``column``) with those of the columns ``first`` names first, in its order, then the others as they were."""
    rank = {name: i for i, name in enumerate(first or ())}
    return sorted(items, key=lambda item: rank.get(item["name"] if "name" in item else item["column"], len(rank)))


@hookimpl
def extra_template_vars() -> dict[str, object]:
    return {"ordered_columns": ordered_columns}
