"""blogarchive's archive: one SQLite file of blogs, their posts and crawl history.

This package never imports Scrapy; the crawler imports it, never the reverse.
"""

from .db import ArchiveError, open_archive
from .queries import find_sources, get_run, list_runs, list_sources, search_posts
from .writes import (
    add_run_totals,
    ensure_source,
    ensure_sources,
    finish_run,
    save_alias,
    save_error,
    save_page,
    run_status,
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
