"""What every command shares: the ``--db`` option, opening the archive, and the exit codes.

Exit codes: 0 done, 1 failed, 2 usage or configuration error (``ConfigError``), 75 another
crawl holds the archive (``EXIT_LOCKED``).
"""

from typing import Any

import click

from archive import ArchiveError, open_archive

EXIT_LOCKED = 75  # EX_TEMPFAIL: another crawl is running; try later


class ConfigError(click.ClickException):
    """A usage or configuration error: exit code 2."""

    exit_code = 2


def db_option(fn: Any) -> Any:
    return click.option(
        "--db",
        "db_path",
        envvar="BLOGARCHIVE_DB",
        default="archive.db",
        show_default=True,
        type=click.Path(dir_okay=False),
        help="The archive file (or $BLOGARCHIVE_DB).",
    )(fn)


def open_db(db_path: str, **kwargs: Any) -> Any:
    try:
        return open_archive(db_path, **kwargs)
    except ArchiveError as e:
        raise click.ClickException(str(e)) from e
