"""``blogarchive export`` and ``backup``: the archive out, in every format it speaks, and a safe copy."""

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import click

from archive import list_sources
from archive.cli.common import ConfigError, check_source, db_option, open_db, require_archive
from archive.core.dates import parse_date
from archive.formats.backup import backup_archive

ARCHIVE_FORMATS = ("warc", "wacz", "opml", "epub")
SELECTING_FORMATS = ("warc", "wacz", "epub")  # the formats that take --source and --since


@click.command()
@click.argument("fmt", metavar="FORMAT",
                type=click.Choice(["sql", "csv", "json", "ndjson", "markdown", *ARCHIVE_FORMATS]))
@click.option("--table", help="Export this table.")
@click.option("--query", help="Export the rows of this read-only SQL query.")
@click.option("--source", "source_name", help="warc, wacz: only this source's captures; epub: the blog to make a book of.")
@click.option("--since", help="warc, wacz: only the captures fetched since this date (ISO 8601); "
                               "epub: only the posts published since then.")
@click.option("-o", "--output", type=click.Path(writable=True),
              help="Write here instead of standard output (markdown: the folder to write into).")
@db_option
def export(fmt: str, table: str | None, query: str | None, source_name: str | None, since: str | None,
           output: str | None, db_path: str) -> None:
    """Export the archive: a full SQL dump, a table or query as CSV/JSON/NDJSON, Markdown files,
    WARC or WACZ of the captures, OPML of the sources, EPUB of a blog.

    markdown writes one file per post, with YAML front matter, into
    OUTPUT/SOURCE/; file names are made from the date and title, made safe.
    warc writes WARC/1.1 (gzipped records) of every capture, with its
    original URL and time; wacz packages it with its index and a list of
    the posts; opml lists the sources and their feeds for feed readers;
    epub makes a book of one blog (--source, needed when the archive holds
    several): a chapter per post in publication order, its archived images
    inside, a table of contents by year.
    """
    if fmt in ("sql", "markdown", *ARCHIVE_FORMATS) and (table or query):
        raise click.UsageError(f"{fmt} exports the whole archive; --table and --query are for csv, json and ndjson")
    if fmt not in ("sql", "markdown", *ARCHIVE_FORMATS) and bool(table) == bool(query):
        raise click.UsageError("give --table or --query")
    if fmt in ("markdown", "warc", "wacz", "epub") and not output:
        raise click.UsageError(f"{fmt} needs -o {'FOLDER' if fmt == 'markdown' else 'FILE'}")
    if (source_name or since) and fmt not in SELECTING_FORMATS:
        raise click.UsageError("--source and --since are for warc, wacz and epub")
    if since and parse_date(since) is None:
        raise ConfigError(f"not a date: {since!r}")
    db = open_db(db_path, read_only=True)
    check_source(db, source_name)
    if output and fmt != "markdown":
        _check_folder(output)
    if fmt == "epub" and not source_name:
        source_name = _the_one_source(db)
    if fmt in ARCHIVE_FORMATS:
        _export_format(db, fmt, output, source_name, since)
        return
    if fmt == "markdown":
        assert output is not None
        click.echo(f"{_export_markdown(db, output)} posts written to {output}", err=True)
        return
    if not output:
        _write_text(db, fmt, table, query, sys.stdout)
        return
    with _whole(output) as partial, partial.open("w", encoding="utf-8", newline="") as out:
        _write_text(db, fmt, table, query, out)


def _write_text(db: Any, fmt: str, table: str | None, query: str | None, out: TextIO) -> None:
    """A full SQL dump, or a table's or query's rows as csv, json or ndjson."""
    from archive.formats.exports import dump_sql, rows_for, write_rows  # yaml: not on a crawl's way

    try:
        if fmt == "sql":
            dump_sql(db, out)
        else:
            write_rows(rows_for(db, table=table, query=query), out, fmt)
    except ValueError as e:
        raise click.ClickException(str(e)) from e


def _export_markdown(db: Any, output: str) -> int:
    """The Markdown files, the folder taken away again when this export made it and failed."""
    from archive.formats.exports import export_markdown

    made = not os.path.exists(output)
    try:
        return export_markdown(db, output)
    except OSError as e:
        raise click.ClickException(f"cannot write to {output}: {e.strerror}") from e
    except BaseException:  # a failure or Ctrl-C: no half-written folder of its own left
        if made:
            shutil.rmtree(output, ignore_errors=True)
        raise


@contextlib.contextmanager
def _whole(output: str) -> Iterator[Path]:
    """A hidden file beside ``output`` to write, renamed to it once written whole: a failed export leaves no file."""
    target = Path(output)
    partial = target.with_name(f".{target.name}.partial")
    try:
        yield partial
        partial.replace(target)
    except OSError as e:
        raise click.ClickException(f"cannot write {output}: {e.strerror}") from e
    finally:
        partial.unlink(missing_ok=True)


def _check_folder(output: str) -> None:
    """One line of error, before any work, when the folder of ``output`` takes no new file (the
    libraries that write the formats would say it as warnings, or as "unable to open database file")."""
    try:
        with tempfile.TemporaryFile(dir=os.path.dirname(os.path.abspath(output))):
            pass
    except OSError as e:
        raise click.ClickException(f"cannot write {output}: {e.strerror}") from e


def _the_one_source(db: Any) -> str:
    """The archive's only source: an EPUB is one blog's, so an archive of several needs --source."""
    names = [s["name"] for s in list_sources(db)]
    if len(names) != 1:
        raise ConfigError(f"the archive holds {len(names)} blogs: give --source NAME (see blogarchive sources)")
    return str(names[0])


def _export_format(db: Any, fmt: str, output: str | None, source_name: str | None, since: str | None) -> None:
    """WARC, WACZ, OPML or EPUB: written whole to a hidden file beside ``output``, then renamed to it."""
    from archive.formats.epub import export_epub  # EbookLib and Markdown: only when asked for
    from archive.formats.opml import export_opml
    from archive.formats.wacz import export_wacz  # warcio and py-wacz: only when asked for
    from archive.formats.warc import export_warc

    if fmt == "opml" and not output:
        click.echo(export_opml(db), nl=False)
        return
    assert output is not None
    try:
        with _whole(output) as partial:
            if fmt == "warc":
                with partial.open("wb") as f:
                    message = f"{export_warc(db, f, source=source_name, since=since, filename=Path(output).name)} captures"
            elif fmt == "wacz":
                message = f"{export_wacz(db, str(partial), source=source_name, since=since)} captures"
            elif fmt == "epub":
                assert source_name is not None
                message = f"{export_epub(db, str(partial), source=source_name, since=since)} posts"
            else:
                partial.write_text(export_opml(db), encoding="utf-8")
                message = f"{len(list_sources(db))} sources"
    except ValueError as e:
        raise click.ClickException(str(e)) from e
    click.echo(f"{message} written to {output}", err=True)


@click.command()
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The copy to write.")
@db_option
def backup(output: str, db_path: str) -> None:
    """Copy the archive safely, even while a crawl writes to it, and check the copy.

    A copy of the .db file alone is not a backup: in WAL mode the latest
    commits may be in the .db-wal file beside it. The archive's notification
    targets (ARCHIVE.notify.json) are copied beside the copy (OUTPUT.notify.json).
    """
    require_archive(db_path)
    _check_folder(output)
    done = backup_archive(db_path, output)
    click.echo(f"backup of {db_path} in {output}: {done.posts} posts, {done.bytes / 1e6:.1f} MB, "
               f"integrity ok, {done.seconds:.1f} seconds" + (f"; notification targets in {done.targets}" if done.targets else ""))
