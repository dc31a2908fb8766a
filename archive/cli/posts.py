"""``blogarchive search`` and ``history``: the archived posts, and a post's versions."""

import click

from archive import search_posts
from archive.cli.common import ConfigError, db_option, open_db
from archive.core.urls import is_http_url
from archive.tables.history import NoPost, diff_versions, list_versions


@click.command()
@click.argument("query")
@click.option("--limit", default=20, show_default=True)
@db_option
def search(query: str, limit: int, db_path: str) -> None:
    """Full-text search of titles and texts, in any language."""
    db = open_db(db_path, read_only=True)
    found = search_posts(db, query, limit=limit)
    for row in found:
        snippet = " ".join((row["snippet"] or "").split())
        click.echo(f"{row['published'] or '':20}\t{row['title']}\t{row['url']}\n\t{snippet}")
    if not found:
        click.echo(f"no post matches {query!r}", err=True)


@click.command()
@click.argument("url")
@click.option("--diff", "versions", nargs=2, type=click.IntRange(min=1), metavar="A B",
              help="Diff these two versions (default: the last two).")
@db_option
def history(url: str, versions: tuple[int, int] | None, db_path: str) -> None:
    """A post's versions, and a unified diff between two of them."""
    if not is_http_url(url):
        raise ConfigError(f"not an http(s) URL: {url}")
    db = open_db(db_path, read_only=True)
    try:
        rows = list_versions(db, url)
    except NoPost as e:
        raise click.ClickException(str(e)) from e
    gone = db.execute("select gone_at from posts where url = (select url from posts where id = ?)",
                      [rows[0]["post_id"]]).fetchone()[0] if rows else None
    for v in rows:
        size = f" ({v['diff_lines']} lines)" if v["change"] not in ("new", "metadata") else ""
        click.echo(f"{v['number']}\t{v['captured_at']}\t{v['change']}{size}\t{v['title']}")
    if gone:
        click.echo(f"gone since {gone}")
    if versions:
        a, b = versions
        if max(a, b) > len(rows):
            raise ConfigError("--diff: the post has one version, 1" if len(rows) == 1 else
                              f"--diff: the post's versions are 1 to {len(rows)}")
    elif len(rows) >= 2:
        a, b = len(rows) - 1, len(rows)
    else:
        return
    click.echo(diff_versions(rows[a - 1], rows[b - 1]))
