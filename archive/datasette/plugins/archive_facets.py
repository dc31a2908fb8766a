"""Year and month facets for ISO 8601 dates, newest first.

Datasette's own date facet counts days; a reader of an archive browses by
year and month. ``{"year": "published"}`` in a table's facets (or
``?_facet_year=published``) counts ``substr(published, 1, 4)``; a click
filters with ``published__startswith=2024``.

Datasette's array facet (tags) keeps each distinct (tag, row) pair with the
row's every column, its text and Markdown included: on a search that matches
half of 100,000 posts, gigabytes to sort. ``NarrowArrayFacet`` takes its place:
the same counts from the rows' primary keys and arrays only, which an index
covers (idx_posts_listing), each value counted once per row.

On the posts table, a search alone (no other filter, not a later page: ``search_alone``)
takes every facet on the columns of idx_posts_listing from the search's ``Summary``
(archive.search.matches), counted once per search, not from a statement per facet each request:
Datasette's column facet is replaced by ``ListedColumnFacet`` for that. Any other page
runs each facet's SQL, as before.
"""

import asyncio
from typing import Any

from datasette import hookimpl
from datasette.database import QueryInterrupted
from datasette.facets import ArrayFacet, ColumnFacet, Facet
from datasette.utils import escape_sqlite, path_with_added_args, path_with_removed_args

from archive.search.matches import matches_at, search_alone


class PeriodFacet(Facet):
    """Counts of the first ``chars`` characters of a date column."""

    chars = 0

    async def facet_results(self) -> tuple[list[dict[str, Any]], list[str]]:
        results, timed_out = [], []
        selections = dict(self.get_querystring_pairs())
        size = self.get_facet_size()
        for source_and_config in self.get_configs():
            config = source_and_config["config"]
            column = config.get("column") or config["simple"]
            sql = (
                f"select substr({escape_sqlite(column)}, 1, {self.chars}) as value, count(*) as count "
                f"from ({self.sql}) where length({escape_sqlite(column)}) >= {self.chars} "
                f"group by value order by value desc limit {size + 1}"
            )
            rows = await _rows(self, sql, column, size)
            if rows is None:
                timed_out.append(column)
                continue
            results.append({
                "name": column,
                "type": self.type,
                "results": [self._value(column, row, selections) for row in rows[:size]],
                "hideable": source_and_config["source"] != "metadata",
                "toggle_url": path_with_removed_args(self.request, {f"_facet_{self.type}": column}),
                "truncated": len(rows) > size,
            })
        return results, timed_out

    def _value(self, column: str, row: Any, selections: dict[str, str]) -> dict[str, Any]:
        arg = f"{column}__startswith"
        selected = selections.get(arg) == row["value"]
        change = path_with_removed_args if selected else path_with_added_args
        return {
            "value": row["value"],
            "label": row["value"],
            "count": row["count"],
            "toggle_url": self.ds.absolute_url(self.request, change(self.request, {arg: row["value"]})),
            "selected": selected,
        }


class YearFacet(PeriodFacet):
    type = "year"
    chars = 4


class MonthFacet(PeriodFacet):
    type = "month"
    chars = 7


class NarrowArrayFacet(ArrayFacet):
    """Datasette's array facet, counted from the rows' primary keys and arrays only (each value once
    per row, as Datasette counts it), not from a distinct copy of every column of every row."""

    async def facet_results(self) -> tuple[list[dict[str, Any]], list[str]]:
        results, timed_out = [], []
        pairs = self.get_querystring_pairs()
        size = self.get_facet_size()
        pks = await self.ds.get_database(self.database).primary_keys(self.table)
        if not pks:  # a view, a rowid table: Datasette's own
            return await super().facet_results()
        for source_and_config in self.get_configs():
            config = source_and_config["config"]
            column = config.get("column") or config["simple"]
            col = escape_sqlite(column)
            kept = ", ".join(escape_sqlite(c) for c in dict.fromkeys([*pks, column]))
            sql = (
                f"select j.value as value, count(*) as count from (select {kept} from ({self.sql})) r, json_each(r.{col}) j"
                f" where not exists (select 1 from json_each(r.{col}) k where k.key < j.key and k.value = j.value)"
                f" group by j.value order by count desc, value limit {size + 1}"
            )
            rows = await _rows(self, sql, column, size)
            if rows is None:
                timed_out.append(column)
                continue
            values = []
            for row in rows[:size]:
                value = str(row["value"])
                selected = (f"{column}__arraycontains", value) in pairs
                change = path_with_removed_args if selected else path_with_added_args
                values.append({
                    "value": value,
                    "label": value,
                    "count": row["count"],
                    "toggle_url": self.ds.absolute_url(
                        self.request, change(self.request, {f"{column}__arraycontains": value})),
                    "selected": selected,
                })
            results.append({
                "name": column,
                "type": self.type,
                "results": values,
                "hideable": source_and_config["source"] != "metadata",
                "toggle_url": self.ds.urls.path(path_with_removed_args(self.request, {"_facet_array": column})),
                "truncated": len(rows) > size,
            })
        return results, timed_out


class ListedColumnFacet(ColumnFacet):
    """Datasette's column facet (its facet_results, the same results), its counts from ``_rows``."""

    async def facet_results(self) -> tuple[list[dict[str, Any]], list[str]]:
        results, timed_out = [], []
        pairs = self.get_querystring_pairs()
        size = self.get_facet_size()
        for source_and_config in self.get_configs():
            config = source_and_config["config"]
            column = config.get("column") or config["simple"]
            col = escape_sqlite(column)
            sql = (f"select {col} as value, count(*) as count from ({self.sql}) where {col} is not null"
                   f" group by {col} order by count desc, value limit {size + 1}")
            rows = await _rows(self, sql, column, size)
            if rows is None:
                timed_out.append(column)
                continue
            shown = rows[:size]
            labels = await self.ds.expand_foreign_keys(self.database, self.table, column, [r["value"] for r in shown]) \
                if self.table else {}
            values = []
            for row in shown:
                arg = f"{column}__exact" if column.startswith("_") else column
                selected = (arg, str(row["value"])) in pairs
                path = (path_with_removed_args(self.request, {arg: str(row["value"])}) if selected
                        else path_with_added_args(self.request, {arg: row["value"]}))
                values.append({
                    "value": row["value"],
                    "label": labels.get((column, row["value"]), row["value"]),
                    "count": row["count"],
                    "toggle_url": self.ds.absolute_url(self.request, self.ds.urls.path(path)),
                    "selected": selected,
                })
            results.append({
                "name": column,
                "type": self.type,
                "hideable": source_and_config["source"] != "metadata",
                "toggle_url": self.ds.urls.path(path_with_removed_args(self.request, {"_facet": column})),
                "results": values,
                "truncated": len(rows) > size,
            })
        return results, timed_out


@hookimpl
def register_facet_classes() -> list[type[Facet]]:
    return [ListedColumnFacet, YearFacet, MonthFacet, NarrowArrayFacet]


@hookimpl(hookwrapper=True, specname="register_facet_classes")
def without_datasettes_column_and_array_facets():
    """Datasette's ColumnFacet and ArrayFacet out of the facet classes: ListedColumnFacet and
    NarrowArrayFacet take their places."""
    outcome = yield
    replaced = (ColumnFacet, ArrayFacet)
    outcome.force_result([[k for k in classes if k not in replaced] for classes in outcome.get_result()])


async def _rows(facet: Facet, sql: str, column: str, size: int) -> list[Any] | None:
    """The rows of one of ``facet``'s queries on ``column``, ``value`` and ``count``, at most
    ``size + 1``: from the search's summary when there is one (``_summarised``), else from ``sql``;
    None past Datasette's time limit for facets."""
    counts = await _summarised(facet, column)
    if counts is not None:
        return [{"value": value, "count": count} for value, count in counts[:size + 1]]
    try:
        return (await facet.ds.execute(facet.database, sql, facet.params, truncate=False,
                                       custom_time_limit=facet.ds.setting("facet_time_limit_ms"))).rows
    except QueryInterrupted:
        return None


async def _summarised(facet: Facet, column: str) -> list[tuple[Any, int]] | None:
    """Every value of ``facet`` on ``column`` with its count, from the ``Summary`` of its search
    when the facet's rows are the matches of a search alone; else None."""
    db = facet.ds.get_database(facet.database)
    if not facet.table or not db.path:
        return None
    selected = ", ".join(escape_sqlite(c) for c in await db.table_columns(facet.table))
    search = search_alone(facet.sql, facet.params, selected, facet.table, facet.metadata or {})
    if search is None:
        return None
    summary = await asyncio.get_running_loop().run_in_executor(None, matches_at(db.path).summary, search)
    return summary.facet(facet.type, column)
