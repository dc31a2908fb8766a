"""The ``blogarchive`` command line: each command wraps one library call.

Crawls and offline extraction run the crawler in a subprocess (Scrapy's
reactor cannot restart, and this package never imports Scrapy).
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click
import yaml

from . import (
    ArchiveError,
    ensure_source,
    get_run,
    list_runs,
    list_sources,
    open_archive,
    search_posts,
)
from .exports import dump_sql, export_markdown, rows_for, write_rows
from .urls import is_http_url, parse_host_map

DATASETTE_DIR = Path(__file__).parent / "datasette"
METADATA = DATASETTE_DIR / "metadata.yml"
EXTRACT_FIELDS = ("title", "author", "published", "updated", "tags", "lang")


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


def _open(db_path: str, **kwargs: Any) -> Any:
    try:
        return open_archive(db_path, **kwargs)
    except ArchiveError as e:
        raise click.ClickException(str(e)) from e


@click.group()
@click.version_option(package_name="blogarchive")
def cli() -> None:
    """Keep a faithful, searchable copy of blogs in one SQLite file."""


@cli.command()
@click.argument("urls", nargs=-1)
@click.option("--map-host", "map_hosts", multiple=True, metavar="HOST=BASE",
              help="Fetch HOST's URLs from BASE instead, keeping the original URLs (repeatable).")
@click.option("--delay", type=click.FloatRange(min=0), help="Seconds between requests to one host (default 1, with AutoThrottle).")
@click.option("--concurrency", type=click.IntRange(min=1), help="Requests at once per host (default 2).")
@click.option("--max-pages", type=click.IntRange(min=1), help="Pages fetched at most per source (default 10000).")
@click.option("-v", "--verbose", is_flag=True, help="Show Scrapy's log.")
@db_option
def crawl(urls: tuple[str, ...], map_hosts: tuple[str, ...], delay: float | None,
          concurrency: int | None, max_pages: int | None, verbose: bool, db_path: str) -> None:
    """Crawl blogs into the archive.

    Each URL is a blog's home page (its folder is the blog's scope), a feed
    or a sitemap; a new one becomes a source. With no URL, every enabled
    source is crawled.
    """
    for url in urls:
        if not is_http_url(url):
            raise click.ClickException(f"not an http(s) URL: {url}")
    try:
        host_map = parse_host_map(list(map_hosts))
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--map-host") from e
    db = _open(db_path)
    for url in urls:
        try:
            ensure_source(db, url)
        except ValueError as e:
            raise click.ClickException(str(e)) from e
    last_run = db.execute("select coalesce(max(id), 0) from crawl_runs").fetchone()[0]
    db.close()
    settings = {"ARCHIVE_PATH": os.path.abspath(db_path), "LOG_LEVEL": "INFO" if verbose else "WARNING"}
    if host_map:
        settings["ARCHIVE_MAP_HOSTS"] = json.dumps(host_map)
    if delay is not None:
        settings["DOWNLOAD_DELAY"] = str(delay)
        settings["AUTOTHROTTLE_ENABLED"] = "1" if delay else "0"
    if concurrency:
        settings["CONCURRENT_REQUESTS_PER_DOMAIN"] = str(concurrency)
        settings["CONCURRENT_REQUESTS"] = str(max(16, concurrency))
    if max_pages:
        settings["ARCHIVE_MAX_PAGES"] = str(max_pages)
    command = [sys.executable, "-m", "scrapy", "crawl", "blog"]
    if urls:
        command += ["-a", "url=" + " ".join(urls)]
    for key, value in settings.items():
        command += ["-s", f"{key}={value}"]
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "crawler.settings"}
    started = time.monotonic()
    returncode = subprocess.call(command, env=env)
    db = _open(db_path)
    runs = [r for r in list_runs(db, limit=1) if r["id"] > last_run]
    if not runs:
        raise click.ClickException(f"the crawl did not start (exit code {returncode})")
    run = get_run(db, runs[0]["id"])
    click.echo(
        f"run {run['id']} {run['status']}: posts {run['posts_new']} new, {run['posts_updated']} updated, "
        f"{run['posts_unchanged']} unchanged; {run['pages']} pages, {run['errors']} errors, "
        f"{time.monotonic() - started:.1f} seconds"
    )
    run_sources = set(json.loads(run["sources"] or "[]"))
    failed = [s for s in list_sources(db) if s["id"] in run_sources and s["last_status"] == "failed"]
    for source in failed:
        click.echo(f"Error: {source['name']}: the crawl failed (see crawl_errors of run {run['id']})", err=True)
    if returncode or run["status"] != "finished" or failed:
        sys.exit(1)


@cli.command()
@click.argument("url")
@click.option("--name", help="A short name for the source (default: its host and path).")
@db_option
def add(url: str, name: str | None, db_path: str) -> None:
    """Add a blog (home page, feed or sitemap URL) as a source."""
    db = _open(db_path)
    try:
        source = ensure_source(db, url, name=name)
    except ValueError as e:
        raise click.ClickException(str(e)) from e
    click.echo(f"source {source['name']}: {source['url']}")


@cli.command()
@db_option
def sources(db_path: str) -> None:
    """List sources: name, URL, feeds found, posts, last crawl and its status."""
    db = _open(db_path)
    for s in list_sources(db):
        click.echo(
            f"{s['name']}\t{s['url']}\tfeeds: {', '.join(s['feeds']) or '-'}\tposts: {s['posts']}\t"
            f"last crawl: {s['last_crawl_at'] or 'never'}\t{s['last_status'] or ''}".rstrip()
        )


@cli.command()
@click.option("--limit", default=20, show_default=True)
@db_option
def runs(limit: int, db_path: str) -> None:
    """Show the crawl history, newest first."""
    db = _open(db_path)
    for r in list_runs(db, limit=limit):
        click.echo(
            f"{r['id']}\t{r['started_at']}\t{r['status']}\tnew {r['posts_new']}\tupdated {r['posts_updated']}\t"
            f"unchanged {r['posts_unchanged']}\tpages {r['pages']}\terrors {r['errors']}\t{r['seconds'] or 0:.1f}s"
        )


@cli.command()
@click.argument("query")
@click.option("--limit", default=20, show_default=True)
@db_option
def search(query: str, limit: int, db_path: str) -> None:
    """Full-text search of titles and texts, in any language."""
    db = _open(db_path)
    for row in search_posts(db, query, limit=limit):
        snippet = " ".join((row["snippet"] or "").split())
        click.echo(f"{row['published'] or '':20}\t{row['title']}\t{row['url']}\n\t{snippet}")


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, readable=True))
@click.option("--url", help="The URL the page was saved from.")
@click.option("--format", "fmt", type=click.Choice(["json", "ndjson", "text", "markdown"]), default="json", show_default=True)
def extract(files: tuple[str, ...], url: str | None, fmt: str) -> None:
    """Extract posts from saved HTML files, offline, as the crawler does."""
    proc = subprocess.run(
        [sys.executable, "-m", "crawler.offline", *files, *(["--url", url] if url else [])],
        capture_output=True, text=True, encoding="utf-8",
    )
    if proc.returncode:
        raise click.ClickException(f"extraction failed: {proc.stderr.strip().splitlines()[-1:]}")
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    failed = [r for r in results if "error" in r]
    for r in failed:
        click.echo(f"Error: {r['file']}: {r['error']}", err=True)
    ok = [r for r in results if "error" not in r]
    if fmt == "json":
        click.echo(json.dumps(ok if len(files) > 1 else (ok[0] if ok else None), ensure_ascii=False, indent=2))
    elif fmt == "ndjson":
        for r in ok:
            click.echo(json.dumps(r, ensure_ascii=False))
    else:
        for r in ok:
            header = "\n".join(f"{k}: {json.dumps(r[k], ensure_ascii=False) if k == 'tags' else r[k]}" for k in EXTRACT_FIELDS if r.get(k))
            body = r["markdown"] if fmt == "markdown" else r["text"]
            click.echo(f"---\n{header}\n---\n{body}\n" if fmt == "markdown" else f"{body}\n")
    if failed:
        sys.exit(1)


def datasette_args(db_path: str, host: str, port: int, public: bool, metadata_path: str) -> list[str]:
    """``datasette serve`` arguments for the archive: the project's metadata, templates,
    plugins and static files; read-only SQL within a time limit, none at all when public."""
    settings = {
        "sql_time_limit_ms": "2000",
        "truncate_cells_html": "120",
        "default_allow_sql": "off" if public else "on",
    }
    args = [
        "serve", db_path, "--host", host, "--port", str(port), "--metadata", metadata_path,
        "--template-dir", str(DATASETTE_DIR / "templates"),
        "--plugins-dir", str(DATASETTE_DIR / "plugins"),
        "--static", f"-/blogarchive:{DATASETTE_DIR / 'static'}",
    ]
    for name, value in settings.items():
        args += ["--setting", name, value]
    return args


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind; 0.0.0.0 exposes the archive.")
@click.option("--port", default=8001, show_default=True, type=click.IntRange(0, 65535))
@click.option("--public", is_flag=True, help="No arbitrary SQL: tables, facets, search and the canned queries only.")
@db_option
def serve(host: str, port: int, public: bool, db_path: str) -> None:
    """Browse the archive in Datasette."""
    _open(db_path).close()
    name = Path(db_path).stem
    metadata = yaml.safe_load(METADATA.read_text(encoding="utf-8"))
    metadata["databases"] = {name: metadata["databases"]["archive"]}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(metadata, f)
    click.echo(f"Serving {db_path} at http://{host}:{port}/", err=True)
    from datasette.cli import cli as datasette_cli  # slow to import: only when serving

    try:
        datasette_cli.main(datasette_args(db_path, host, port, public, f.name), prog_name="datasette")
    finally:
        os.unlink(f.name)


@cli.command()
@click.argument("fmt", metavar="FORMAT", type=click.Choice(["sql", "csv", "json", "ndjson", "markdown"]))
@click.option("--table", help="Export this table.")
@click.option("--query", help="Export the rows of this read-only SQL query.")
@click.option("-o", "--output", type=click.Path(writable=True),
              help="Write here instead of standard output (markdown: the folder to write into).")
@db_option
def export(fmt: str, table: str | None, query: str | None, output: str | None, db_path: str) -> None:
    """Export the archive: a full SQL dump, a table or query as CSV/JSON/NDJSON, or Markdown files.

    ``markdown`` writes one file per post, with YAML front matter, into
    OUTPUT/SOURCE/; file names are made from the date and title, made safe.
    """
    if fmt in ("sql", "markdown") and (table or query):
        raise click.UsageError(f"{fmt} exports the whole archive; --table and --query are for csv, json and ndjson")
    if fmt not in ("sql", "markdown") and bool(table) == bool(query):
        raise click.UsageError("give --table or --query")
    if fmt == "markdown" and not output:
        raise click.UsageError("markdown needs -o FOLDER")
    if not os.path.exists(db_path):
        raise click.ClickException(f"no archive at {db_path}")
    db = _open(db_path, migrate=False)
    if fmt == "markdown":
        assert output is not None
        try:
            count = export_markdown(db, output)
        except OSError as e:
            raise click.ClickException(f"cannot write to {output}: {e.strerror}") from e
        click.echo(f"{count} posts written to {output}", err=True)
        return
    out = open(output, "w", encoding="utf-8", newline="") if output else sys.stdout
    try:
        if fmt == "sql":
            dump_sql(db, out)
        else:
            write_rows(rows_for(db, table=table, query=query), out, fmt)
    except ValueError as e:
        raise click.ClickException(str(e)) from e
    finally:
        if output:
            out.close()
