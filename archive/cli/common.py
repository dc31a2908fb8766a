"""What every command shares: the ``--db`` option, opening the archive, and the exit codes.

Exit codes, the same for every command: 0 done; 1 failed (a crawl with a failed source, a file that
cannot be read or written, a query that fails, no post at a URL); 2 usage error: an argument or option
that cannot be used, a missing, damaged or unwritable archive, a wrong configuration (``ConfigError``);
75 the archive is busy: another crawl or re-extraction holds it, or another process is writing to it
(``EXIT_LOCKED``). Each error is one
line on standard error. The errors of the archive are mapped here, around every command that takes
``--db``; a command raises ``ConfigError`` or ``click.ClickException`` for its own.
"""

import functools
import os
import sqlite3
from collections.abc import Callable
from typing import Any

import click
from click.core import ParameterSource

from archive import ArchiveError, open_archive
from archive.core.db import is_busy, is_damage
from archive.core.lock import CrawlLocked

EXIT_LOCKED = 75  # EX_TEMPFAIL: another crawl is running; try later
NO_ARCHIVE_HINTS = {ParameterSource.ENVIRONMENT: " (from $BLOGARCHIVE_DB)",
                    ParameterSource.DEFAULT: " (give --db FILE or set $BLOGARCHIVE_DB)"}


class ConfigError(click.ClickException):
    """A usage or configuration error: exit code 2."""

    exit_code = 2


class ArchiveBusy(click.ClickException):
    """Another process holds the archive's crawl lock or its write lock: exit code 75."""

    exit_code = EXIT_LOCKED


def db_option(fn: Callable[..., Any]) -> Any:
    """The ``--db`` option (or $BLOGARCHIVE_DB), and the archive's errors as exit codes around ``fn``."""

    @functools.wraps(fn)
    def command(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ArchiveError as e:
            raise ConfigError(str(e)) from e
        except CrawlLocked as e:
            raise ArchiveBusy(str(e)) from e
        except sqlite3.DatabaseError as e:
            if is_damage(e):
                raise ConfigError(f"cannot read the archive {kwargs['db_path']}: {e}") from e
            if is_busy(e):
                raise ArchiveBusy(f"{kwargs['db_path']} is busy: {e}; try again") from e
            raise

    return click.option(
        "--db",
        "db_path",
        envvar="BLOGARCHIVE_DB",
        default="archive.db",
        show_default=True,
        type=click.Path(dir_okay=False),
        help="The archive file (or $BLOGARCHIVE_DB).",
    )(command)


def require_archive(db_path: str) -> None:
    """Refuse a path with no archive, saying where the path came from: only ``crawl``, ``add`` and
    ``import warc`` create an archive, so a mistyped ``--db`` creates nothing, and an empty file stays one."""
    if not os.path.exists(db_path) or os.path.isfile(db_path) and not os.path.getsize(db_path):
        context = click.get_current_context(silent=True)
        given = context.get_parameter_source("db_path") if context else None
        folder = os.path.dirname(os.path.abspath(db_path))
        missing = (f"directory does not exist: {folder}" if not os.path.isdir(folder)
                   else f"no archive at {db_path}" + (" (an empty file)" if os.path.exists(db_path) else ""))
        raise ConfigError(missing + (NO_ARCHIVE_HINTS.get(given, "") if given else ""))


def check_source(db: Any, name: str | None) -> None:
    """A ``--source`` that names no source of the archive is a usage error."""
    if name and not list(db.query("select 1 from sources where name = ?", [name])):
        raise ConfigError(f"no source named {name!r} (see blogarchive sources)")


def open_db(db_path: str, *, create: bool = False, **kwargs: Any) -> Any:
    """The archive at ``db_path``, read through once (its schema) so that a damaged file is refused before
    anything is written; created only when ``create``; ``read_only=True`` for the commands that only read
    (``archive.core.db.open_archive``)."""
    if not create:
        require_archive(db_path)
    db = open_archive(db_path, **kwargs)
    db.execute("select count(*) from sqlite_master").fetchone()
    return db
