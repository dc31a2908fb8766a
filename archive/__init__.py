"""blogarchive's archive: one SQLite file of blogs, their posts and crawl history.

This package never imports Scrapy; the crawler imports it, never the reverse.
"""

import sys

# sqlite-utils imports numpy when it is installed (trafilatura's language detector needs it),
# to store numpy values; the archive never hands it one, and numpy costs 0.2 s of every start
# of the command line and of the crawl. Hidden while sqlite-utils loads, importable after.
if "numpy" not in sys.modules and "sqlite_utils" not in sys.modules:
    sys.modules["numpy"] = None  # type: ignore[assignment]
    try:
        import sqlite_utils  # noqa: F401
    finally:
        del sys.modules["numpy"]

from archive.core.db import ArchiveError, open_archive
from archive.core.queries import find_sources, get_run, list_runs, list_sources, search_posts
from archive.tables.writes import (
    add_run_totals,
    ensure_source,
    ensure_sources,
    finish_run,
    run_status,
    save_alias,
    save_error,
    save_page,
    save_post,
    start_run,
    update_source,
)

__all__ = [
    "ArchiveError",
    "add_run_totals",
    "ensure_source",
    "ensure_sources",
    "find_sources",
    "finish_run",
    "get_run",
    "list_runs",
    "list_sources",
    "open_archive",
    "save_alias",
    "save_error",
    "save_page",
    "run_status",
    "save_post",
    "search_posts",
    "start_run",
    "update_source",
]
