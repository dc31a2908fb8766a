"""``blogarchive add``, ``sources``, ``source set`` and ``runs``: the blogs an archive follows, and its crawls."""

from pathlib import Path
from typing import Any

import click

from archive import ensure_source, list_runs, list_sources
from archive.cli.common import ConfigError, check_source, db_option, open_db
from archive.core.db import writing
from archive.core.lock import acquire_lock, release_lock
from archive.core.urls import is_http_url
from archive.tables.revisit import revisit_summary
from archive.tables.sources import described_settings, parse_setting, remove_source, set_source_settings

RUNS_HEADER = ("id", "started", "status", "new", "updated", "unchanged", "pages", "errors", "seconds")


@click.command()
@click.argument("url", required=False)
@click.option("--name", help="A short name for the source (default: its host and path).")
@click.option("--opml", "opml_file", type=click.Path(exists=True, dir_okay=False, readable=True),
              help="Add every feed of this OPML subscription list instead (its folders are kept).")
@db_option
def add(url: str | None, name: str | None, opml_file: str | None, db_path: str) -> None:
    """Add a blog (home page, feed or sitemap URL), or a feed reader's OPML list, as sources."""
    if bool(url) == bool(opml_file):
        raise click.UsageError("give a URL or --opml FILE")
    if opml_file:
        _add_opml(opml_file, name, db_path)
        return
    assert url is not None
    if not is_http_url(url):  # before the archive is opened, or created: a failed command writes nothing
        raise ConfigError(f"not an http(s) URL: {url!r}")
    db = open_db(db_path, create=True)
    try:
        with writing(db):  # waits for a crawl's commits (archive.core.db.writing)
            source = ensure_source(db, url, name=name)
    except ValueError as e:  # the name is another source's
        raise ConfigError(str(e)) from e
    click.echo(f"source {source['name']}: {source['url']}")


def _add_opml(opml_file: str, name: str | None, db_path: str) -> None:
    """Read the whole list before the archive is opened: a list that fails changes nothing."""
    from archive.formats.opml import add_subscriptions, parse_opml

    if name:
        raise click.UsageError("--name is for one URL; an OPML list names its sources")
    try:
        entries, skipped = parse_opml(Path(opml_file).read_bytes())
    except ValueError as e:
        raise click.ClickException(f"{opml_file}: {e}") from e
    for reason in skipped:
        click.echo(f"Warning: skipped {reason}", err=True)
    if not entries:
        raise click.ClickException(f"{opml_file}: no feed or site in this OPML list")
    db = open_db(db_path, create=True)
    with writing(db):
        added = add_subscriptions(db, entries)
    for source, new in added:
        folder = source["folder"].replace("\n", ", ") if source["folder"] else ""
        click.echo(f"source {source['name']}: {source['url']}{f'  [{folder}]' if folder else ''}{'' if new else '  (known)'}")


@click.command()
@db_option
def sources(db_path: str) -> None:
    """List sources: name, URL, feeds found, posts, how many are due in the next run and when they
    were checked (the oldest and latest last check), its own settings (those set), last crawl and its status."""
    db = open_db(db_path, read_only=True)
    for s in list_sources(db):
        plan = revisit_summary(db, s)
        checked = f"{plan['oldest_check']} to {plan['latest_check']}" if plan["oldest_check"] else "never"
        click.echo(
            f"{s['name']}\t{s['url']}\tfeeds: {', '.join(s['feeds']) or '-'}\tposts: {s['posts']}\t"
            f"due next run: {plan['due']} ({plan['policy']})\tchecked: {checked}\t"
            f"settings: {' '.join(described_settings(s)) or '-'}\t"
            f"last crawl: {s['last_crawl_at'] or 'never'}\t{s['last_status'] or ''}".rstrip()
        )


@click.group()
def source() -> None:
    """A source's crawl settings, or the source removed."""


@source.command("set")
@click.argument("name")
@click.argument("pairs", nargs=-1, required=True, metavar="KEY=VALUE...")
@db_option
def source_set(name: str, pairs: tuple[str, ...], db_path: str) -> None:
    """Set a source's delay, max_pages, revisit policy, media (all, metadata, off), media_max_mb (the largest post
    image fetched, in MB), render (auto, always, never:
    a browser for the pages whose scripts write them, docs/rendering.md), map_host (HOST=BASE, one host
    each; default: none) or enabled (VALUE default: the crawl's own). An option given to a crawl wins for that run."""
    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            raise ConfigError(f"settings are KEY=VALUE, not {pair!r}")
        try:
            value = parse_setting(key.strip(), raw)
        except ValueError as e:
            raise ConfigError(str(e)) from e
        if key.strip() == "map_host" and value and values.get("map_host"):  # map_host=... again: one more host
            value = values["map_host"] | value
        values[key.strip()] = value
    db = open_db(db_path)
    try:
        row = set_source_settings(db, name, values)
    except ValueError as e:
        raise ConfigError(str(e)) from e
    click.echo(f"source {name}: " + ", ".join(described_settings(row, tuple(values), unset=True)))


@source.command("remove")
@click.argument("name")
@click.option("--keep-posts", is_flag=True,
              help="Keep its posts (their versions, captures and images): the source stays as their blog, disabled.")
@click.option("--delete-posts", is_flag=True, help="Delete its posts with it.")
@db_option
def source_remove(name: str, keep_posts: bool, delete_posts: bool, db_path: str) -> None:
    """Remove a source and what its crawls kept (pages, fetches, errors); its posts are kept
    (--keep-posts: the source stays, disabled, as their blog) or deleted with it (--delete-posts),
    one of the two given. Refused (exit 75) while a crawl runs on the archive."""
    if keep_posts == delete_posts:
        raise ConfigError("say what becomes of its posts: --keep-posts or --delete-posts")
    db = open_db(db_path)
    check_source(db, name)
    lock, _ = acquire_lock(db_path)  # CrawlLocked: exit 75 (archive.cli.common)
    try:
        removed = remove_source(db, name, keep_posts=keep_posts)
    finally:
        release_lock(lock)
    if removed["kept"]:
        click.echo(f"source {name}: disabled, its {removed['kept']} posts kept; {removed['pages']} pages forgotten")
    else:
        click.echo(f"source {name} removed: {removed['posts']} posts, {removed['pages']} pages, "
                   f"{removed['captures']} captures, {removed['images']} images")


@click.command()
@click.option("--limit", default=20, show_default=True)
@db_option
def runs(limit: int, db_path: str) -> None:
    """Show the crawl history, newest first: run, start, status, posts new, updated and unchanged,
    pages, errors, seconds."""
    db = open_db(db_path, read_only=True)
    click.echo("\t".join(RUNS_HEADER))
    for r in list_runs(db, limit=limit):
        click.echo(
            f"{r['id']}\t{r['started_at']}\t{r['status']}\t{r['posts_new']}\t{r['posts_updated']}\t"
            f"{r['posts_unchanged']}\t{r['pages']}\t{r['errors']}\t{r['seconds'] or 0:.1f}"
        )
