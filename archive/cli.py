"""The ``blogarchive`` command line: each command wraps one library call.

Crawls and offline extraction run the crawler in a subprocess (Scrapy's
reactor cannot restart, and this package never imports Scrapy).
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from archive import (
    ArchiveError,
    ensure_source,
    list_runs,
    list_sources,
    open_archive,
    search_posts,
)
from archive.formats.backup import backup_archive
from crawler.run.coordinator import ClusterConfig, ClusterUnavailable
from archive.core.db import check_writable
from archive.tables.history import NoPost, diff_versions, list_versions
from crawler.run.launch import CrawlFailed, CrawlOptions, CrawlOutcome, run_crawl
from archive.core.lock import CrawlLocked, acquire_lock, release_lock
from archive.tables.revisit import revisit_summary
from archive.tables.sources import parse_setting, set_source_settings
from archive.core.urls import host_of, is_http_url, parse_host_map

DATASETTE_DIR = Path(__file__).parent / "datasette"
METADATA = DATASETTE_DIR / "metadata.yml"
EXTRACT_FIELDS = ("title", "author", "published", "updated", "tags", "lang")
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
@click.option("--delay", type=click.FloatRange(min=0), help="Seconds between requests to one host (default 1, with AutoThrottle); a source's own delay wins.")
@click.option("--concurrency", type=click.IntRange(min=1), help="Requests at once per host (default 2).")
@click.option("--max-pages", type=click.IntRange(min=1), help="Pages fetched at most per source (default 10000).")
@click.option("--processes", default="1", show_default=True, callback=lambda ctx, param, value: _processes(value),
              help="Crawl processes, the sources split among them by host; auto: one per core.")
@click.option("--cluster", "cluster_config", type=click.Path(dir_okay=False),
              help="Crawl on a cluster of Scrapyd nodes with Redis as the hub, as this TOML file says (docs/scaling.md).")
@click.option("--scrapyd", "nodes", multiple=True, metavar="URL", help="A Scrapyd node of the cluster (repeatable; with --redis).")
@click.option("--redis", "redis_url", metavar="URL", help="The cluster's Redis (redis://HOST:PORT/DB; with --scrapyd).")
@click.option("--media", type=click.Choice(["all", "metadata", "off"]),
              help="Post images archived (all, the default), their URLs only (metadata) or neither (off); a source's own setting wins.")
@click.option("--media-max-mb", type=click.FloatRange(min=0, min_open=True),
              help="Largest image fetched, in MB (default 10); a larger one is recorded, not fetched.")
@click.option("--workers", type=click.IntRange(min=0),
              help="Extraction worker processes per crawl process (default: one core fewer than the machine has, "
                   "and as many as --memory-mb holds, one at least; 0: extract in the crawl's process). "
                   "Each holds about 130 MB.")
@click.option("--memory-mb", type=click.IntRange(min=1),
              help="The memory budget of the crawl's processes, in MB (default 512): it bounds the extraction "
                   "workers and the big pages on their way at once.")
@click.option("--recheck", is_flag=True, help="Revalidate every known post (conditional requests).")
@click.option("--full", is_flag=True, help="Rediscover everything as a first crawl does, without validators.")
@click.option("--dry-run", is_flag=True, help="List what the run would request and why; fetch and write nothing.")
@click.option("-q", "--quiet", is_flag=True, help="Print only errors and the summary.")
@click.option("--log-file", type=click.Path(dir_okay=False, writable=True), help="Append the crawl's log (INFO) to this file.")
@click.option("-v", "--verbose", is_flag=True, help="Show Scrapy's log.")
@db_option
def crawl(urls: tuple[str, ...], map_hosts: tuple[str, ...], delay: float | None,
          concurrency: int | None, max_pages: int | None, processes: int, cluster_config: str | None,
          nodes: tuple[str, ...], redis_url: str | None, media: str | None, media_max_mb: float | None,
          workers: int | None, memory_mb: int | None, recheck: bool, full: bool, dry_run: bool, quiet: bool,
          log_file: str | None, verbose: bool, db_path: str) -> None:
    """Crawl blogs into the archive.

    Each URL is a blog's home page (its folder is the blog's scope), a feed
    or a sitemap; a new one becomes a source. With no URL, every enabled
    source is crawled. A source's first crawl is complete; later ones are
    incremental. Exit codes: 0 all sources fine, 1 some failed or the run
    was interrupted, 2 usage or configuration error, 75 another crawl is
    running on the archive.
    """
    for url in urls:
        if not is_http_url(url):
            raise ConfigError(f"not an http(s) URL: {url}")
    if recheck and full:
        raise click.UsageError("--recheck and --full exclude each other")
    try:
        host_map = parse_host_map(list(map_hosts))
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--map-host") from e
    if dry_run:
        _dry_run(urls, "recheck" if recheck else "full" if full else "incremental", db_path)
        return
    lock, stale = _writable_and_locked(db_path)
    try:
        if stale:
            click.echo(f"Warning: took over the lock of pid {stale}, which is no longer running", err=True)
        options = CrawlOptions(host_map=host_map, delay=delay, concurrency=concurrency, max_pages=max_pages,
                               mode="recheck" if recheck else "full" if full else None,
                               quiet=quiet, log_file=log_file, verbose=verbose, processes=processes,
                               on_progress=None if quiet else lambda line: click.echo(line, err=True),
                               cluster=_cluster(cluster_config, nodes, redis_url),
                               settings=_media_settings(media, media_max_mb)
                               | ({} if workers is None else {"ARCHIVE_EXTRACT_WORKERS": str(workers)})
                               | ({} if memory_mb is None else {"ARCHIVE_MEMORY_MB": str(memory_mb)}))
        _report(_launch(db_path, urls, options, lock))
    finally:
        release_lock(lock)


def _media_settings(media: str | None, max_mb: float | None) -> dict[str, str]:
    settings = {"ARCHIVE_MEDIA": media} if media else {}
    return settings | ({"ARCHIVE_MEDIA_MAX_MB": str(max_mb)} if max_mb else {})


def _processes(value: str) -> int:
    if value == "auto":
        return os.cpu_count() or 1
    if not value.isdigit() or int(value) < 1:
        raise click.BadParameter(f"a number of processes (1 or more) or auto, not {value!r}", param_hint="--processes")
    return int(value)


def _cluster(path: str | None, nodes: tuple[str, ...], redis_url: str | None) -> ClusterConfig | None:
    if path and (nodes or redis_url):
        raise click.UsageError("--cluster excludes --scrapyd and --redis")
    if path:
        try:
            return ClusterConfig.load(path)
        except ValueError as e:
            raise ConfigError(str(e)) from e
    if bool(nodes) != bool(redis_url):
        raise click.UsageError("--scrapyd and --redis go together")
    return ClusterConfig(redis=redis_url, nodes=list(nodes)) if redis_url else None


def _writable_and_locked(db_path: str) -> tuple[int, int | None]:
    """The archive checked writable and its crawl lock taken: the lock, and the pid of a dead
    crawl whose lock was taken over. Exits 2 when it cannot be written, 75 when another crawl runs."""
    try:
        check_writable(db_path)
    except ArchiveError as e:
        raise ConfigError(str(e)) from e
    try:
        return acquire_lock(db_path)
    except CrawlLocked as e:
        click.echo(f"Error: {e}", err=True)
        sys.exit(EXIT_LOCKED)
    except OSError as e:
        raise ConfigError(f"cannot take the crawl lock beside {db_path}: {e.strerror}") from e


def _launch(db_path: str, urls: tuple[str, ...], options: CrawlOptions, lock: int) -> CrawlOutcome:
    try:
        return run_crawl(db_path, urls, options, lock=lock)
    except ArchiveError as e:
        raise ConfigError(str(e)) from e
    except ClusterUnavailable as e:
        raise ConfigError(str(e)) from e
    except CrawlFailed as e:
        raise click.ClickException(str(e)) from e


def _report(outcome: CrawlOutcome) -> None:
    """The summary, the failed sources, and the exit code."""
    run = outcome.run
    if run["status"] == "running":
        click.echo(f"Error: run {run['id']} stopped without closing (see its log); what it saved is kept", err=True)
    click.echo(outcome.summary())
    for source in outcome.failed:
        click.echo(f"Error: {source['name']}: the crawl failed (see crawl_errors of run {run['id']})", err=True)
    if not outcome.ok:
        sys.exit(1)


def _dry_run(urls: tuple[str, ...], mode: str, db_path: str) -> None:
    """What a crawl would request and why (``crawler.discover.dryrun``), without fetching or writing."""
    if not os.path.exists(db_path):
        raise ConfigError(f"no archive at {db_path}")
    proc = subprocess.run([sys.executable, "-m", "crawler.discover.dryrun", "--db", os.path.abspath(db_path), "--mode", mode, *urls],
                          capture_output=True, text=True, encoding="utf-8")
    if proc.returncode:
        raise click.ClickException(f"the dry run failed: {(proc.stderr.strip().splitlines() or ['no output'])[-1]}")
    planned = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    for request in planned:
        click.echo(f"{request['source']}\t{request['why']}\t{request['url']}")
    requests = [r for r in planned if not r["why"].startswith("fresh until")]
    sources = len({r["source"] for r in planned})
    click.echo(f"{len(requests)} requests at least for {sources} sources (and the posts their feeds and sitemaps announce)")


@cli.command()
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
        raise click.ClickException(f"not an http(s) URL: {url!r}")
    db = _open(db_path)
    try:
        source = ensure_source(db, url, name=name)
    except ValueError as e:
        raise click.ClickException(str(e)) from e
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
    db = _open(db_path)
    for source, new in add_subscriptions(db, entries):
        folder = source["folder"].replace("\n", ", ") if source["folder"] else ""
        click.echo(f"source {source['name']}: {source['url']}{f'  [{folder}]' if folder else ''}{'' if new else '  (known)'}")


@cli.command()
@db_option
def sources(db_path: str) -> None:
    """List sources: name, URL, feeds found, posts, how many are due in the next run and when they
    were checked (the oldest and latest last check), last crawl and its status."""
    db = _open(db_path)
    for s in list_sources(db):
        plan = revisit_summary(db, s)
        checked = f"{plan['oldest_check']} to {plan['latest_check']}" if plan["oldest_check"] else "never"
        click.echo(
            f"{s['name']}\t{s['url']}\tfeeds: {', '.join(s['feeds']) or '-'}\tposts: {s['posts']}\t"
            f"due next run: {plan['due']} ({plan['policy']})\tchecked: {checked}\t"
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
        [sys.executable, "-m", "crawler.extract.offline", *files, *(["--url", url] if url else [])],
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
        # The posts' facets are chosen (metadata.yml); suggesting others reads every row a search
        # matches, once or twice per column of the table (half of the posts, for a common word).
        "suggest_facets": "off",
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
    import yaml  # only when serving: not on a crawl's way to its first request

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


ARCHIVE_FORMATS = ("warc", "wacz", "opml")


@cli.command()
@click.argument("fmt", metavar="FORMAT",
                type=click.Choice(["sql", "csv", "json", "ndjson", "markdown", *ARCHIVE_FORMATS]))
@click.option("--table", help="Export this table.")
@click.option("--query", help="Export the rows of this read-only SQL query.")
@click.option("--source", "source_name", help="warc, wacz: only this source's captures.")
@click.option("--since", help="warc, wacz: only the captures fetched since this date (ISO 8601).")
@click.option("-o", "--output", type=click.Path(writable=True),
              help="Write here instead of standard output (markdown: the folder to write into).")
@db_option
def export(fmt: str, table: str | None, query: str | None, source_name: str | None, since: str | None,
           output: str | None, db_path: str) -> None:
    """Export the archive: a full SQL dump, a table or query as CSV/JSON/NDJSON, Markdown files,
    WARC or WACZ of the captures, OPML of the sources.

    ``markdown`` writes one file per post, with YAML front matter, into
    OUTPUT/SOURCE/; file names are made from the date and title, made safe.
    ``warc`` writes WARC/1.1 (gzipped records) of every capture, with its
    original URL and time; ``wacz`` packages it with its index and a list of
    the posts; ``opml`` lists the sources and their feeds for feed readers.
    """
    if fmt in ("sql", "markdown", *ARCHIVE_FORMATS) and (table or query):
        raise click.UsageError(f"{fmt} exports the whole archive; --table and --query are for csv, json and ndjson")
    if fmt not in ("sql", "markdown", *ARCHIVE_FORMATS) and bool(table) == bool(query):
        raise click.UsageError("give --table or --query")
    if fmt in ("markdown", "warc", "wacz") and not output:
        raise click.UsageError(f"{fmt} needs -o {'FOLDER' if fmt == 'markdown' else 'FILE'}")
    if (source_name or since) and fmt not in ("warc", "wacz"):
        raise click.UsageError("--source and --since are for warc and wacz")
    if not os.path.exists(db_path):
        raise click.ClickException(f"no archive at {db_path}")
    db = _open(db_path, migrate=False)
    if fmt in ARCHIVE_FORMATS:
        _export_format(db, fmt, output, source_name, since)
        return
    from archive.formats.exports import dump_sql, export_markdown, rows_for, write_rows  # yaml: not on a crawl's way

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


def _export_format(db: Any, fmt: str, output: str | None, source_name: str | None, since: str | None) -> None:
    """WARC, WACZ or OPML: written whole to a hidden file beside ``output``, then renamed to it."""
    from archive.formats.opml import export_opml
    from archive.formats.wacz import export_wacz  # warcio and py-wacz: only when asked for
    from archive.formats.warc import export_warc

    if fmt == "opml" and not output:
        click.echo(export_opml(db), nl=False)
        return
    assert output is not None
    target = Path(output)
    partial = target.with_name(f".{target.name}.partial")
    try:
        if fmt == "warc":
            with partial.open("wb") as f:
                message = f"{export_warc(db, f, source=source_name, since=since, filename=target.name)} captures"
        elif fmt == "wacz":
            message = f"{export_wacz(db, str(partial), source=source_name, since=since)} captures"
        else:
            partial.write_text(export_opml(db), encoding="utf-8")
            message = f"{len(list_sources(db))} sources"
        partial.replace(target)
    except ValueError as e:
        raise click.ClickException(str(e)) from e
    except OSError as e:
        raise click.ClickException(f"cannot write {output}: {e.strerror}") from e
    finally:
        partial.unlink(missing_ok=True)
    click.echo(f"{message} written to {output}", err=True)


@cli.command()
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The copy to write.")
@db_option
def backup(output: str, db_path: str) -> None:
    """Copy the archive safely, even while a crawl writes to it, and check the copy.

    A copy of the .db file alone is not a backup: in WAL mode the latest
    commits may be in the .db-wal file beside it.
    """
    try:
        done = backup_archive(db_path, output)
    except ArchiveError as e:
        raise ConfigError(str(e)) from e
    click.echo(f"backup of {db_path} in {output}: {done.posts} posts, {done.bytes / 1e6:.1f} MB, "
               f"integrity ok, {done.seconds:.1f} seconds")


@cli.group()
def source() -> None:
    """Per-source crawl settings."""


@source.command("set")
@click.argument("name")
@click.argument("pairs", nargs=-1, required=True, metavar="KEY=VALUE...")
@db_option
def source_set(name: str, pairs: tuple[str, ...], db_path: str) -> None:
    """Set a source's delay, max_pages, revisit policy, media (all, metadata, off) or enabled (VALUE default: the crawl's own)."""
    values = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            raise ConfigError(f"settings are KEY=VALUE, not {pair!r}")
        try:
            values[key.strip()] = parse_setting(key.strip(), raw)
        except ValueError as e:
            raise ConfigError(str(e)) from e
    if not os.path.exists(db_path):
        raise ConfigError(f"no archive at {db_path}")
    db = _open(db_path)
    try:
        row = set_source_settings(db, name, values)
    except ValueError as e:
        raise ConfigError(str(e)) from e
    click.echo(f"source {name}: " + ", ".join(f"{k}={'default' if row[k] is None else row[k]}" for k in values))


@cli.command()
@click.argument("url")
@click.option("--diff", "versions", nargs=2, type=click.IntRange(min=1), metavar="A B",
              help="Diff these two versions (default: the last two).")
@db_option
def history(url: str, versions: tuple[int, int] | None, db_path: str) -> None:
    """A post's versions, and a unified diff between two of them."""
    db = _open(db_path)
    try:
        rows = list_versions(db, url)
    except NoPost as e:
        raise click.ClickException(str(e)) from e
    gone = db.execute("select gone_at from posts where url = (select url from posts where id = ?)",
                      [rows[0]["post_id"]]).fetchone()[0] if rows else None
    for n, v in enumerate(rows, 1):
        size = f" ({v['diff_lines']} lines)" if v["change"] not in ("new", "metadata") else ""
        click.echo(f"{n}\t{v['captured_at']}\t{v['change']}{size}\t{v['title']}")
    if gone:
        click.echo(f"gone since {gone}")
    if versions:
        a, b = versions
        if max(a, b) > len(rows):
            raise click.ClickException(f"the post has {len(rows)} versions")
    elif len(rows) >= 2:
        a, b = len(rows) - 1, len(rows)
    else:
        return
    click.echo(diff_versions(rows[a - 1], rows[b - 1]))


@cli.command()
@click.option("--source", "source_name", help="Only this source's posts.")
@click.option("--dry-run", is_flag=True, help="Report what would change; save nothing.")
@db_option
def reextract(source_name: str | None, dry_run: bool, db_path: str) -> None:
    """Extract every post again from its raw capture with the current code, offline; report changes."""
    if not os.path.exists(db_path):
        raise ConfigError(f"no archive at {db_path}")
    try:
        lock, _ = acquire_lock(db_path)
    except CrawlLocked as e:
        click.echo(f"Error: {e}", err=True)
        sys.exit(EXIT_LOCKED)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "crawler.extract.reextract", "--db", os.path.abspath(db_path),
             *(["--source", source_name] if source_name else []), *(["--dry-run"] if dry_run else [])],
            capture_output=True, text=True, encoding="utf-8",
        )
    finally:
        release_lock(lock)
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode or not results or "summary" not in results[-1]:
        message = results[-1].get("error") if results else (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise click.ClickException(f"re-extraction failed: {message}")
    for r in results[:-1]:
        if "error" in r:
            click.echo(f"Error: {r['url']}: {r['error']}", err=True)
        else:
            click.echo(f"{r['url']}\t{', '.join(r['changed'])}" + (f"\t{r['change']}" if r.get("change") else ""))
    summary = results[-1]
    verb = "would change" if dry_run else "changed"
    click.echo(f"{summary['posts']} posts re-extracted offline, {summary['changed']} {verb}")


@cli.group("import")
def import_() -> None:
    """Bring in what other tools archived."""


REPLAY_HANDLER = "crawler.fetch.replay.CaptureDownloadHandler"


@import_.command("warc")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, readable=True))
@click.option("-q", "--quiet", is_flag=True, help="Print only errors and the summary.")
@db_option
def import_warc(files: tuple[str, ...], quiet: bool, db_path: str) -> None:
    """Import WARC files (blogarchive's, wget's, Heritrix's, browsertrix's): each HTML, feed or
    sitemap response becomes a capture, then the posts are found and extracted from the captures
    as a crawl does, offline. Importing a file again adds nothing."""
    from archive.formats.warc import check_warc, import_warc as read_warc  # warcio: only when asked for

    try:  # every file read through before the archive is opened, or created: a bad file changes nothing
        for path in files:
            check_warc(path)
    except ValueError as e:
        raise click.ClickException(str(e)) from e
    lock, _ = _writable_and_locked(db_path)
    try:
        db = _open(db_path)
        sources: dict[str, dict[str, Any]] = {}
        try:
            with db.atomic():  # every file or none
                for path in files:
                    result = read_warc(db, path)
                    for named in result["sources"]:
                        source = _import_source(db, named)
                        sources[source["url"]] = source
                    click.echo(f"{path}: {result['captures']} captures imported, {result['known']} known, "
                               f"{result['skipped']} other responses skipped", err=True)
        except ValueError as e:
            raise click.ClickException(str(e)) from e
        finally:
            db.close()
        handlers = {"file": None, "data": None, "ftp": None, "s3": None, "http": REPLAY_HANDLER, "https": REPLAY_HANDLER}
        options = CrawlOptions(host_map=_replay_hosts(list(sources.values())), delay=0, concurrency=16, mode="full",
                               quiet=quiet,
                               # the images are not in the captures: their URLs are listed, the next crawl fetches them
                               settings={"DOWNLOAD_HANDLERS": json.dumps(handlers), "ARCHIVE_MEDIA": "metadata"})
        _report(_launch(db_path, tuple(sources), options, lock))
    finally:
        release_lock(lock)


def _replay_hosts(sources: list[dict[str, Any]]) -> dict[str, str]:
    """The hosts a blog's crawl took as its own, each blog's sent to a server of its own name (answered from
    the captures, never asked): so the crawl of the captures takes them as the same blog again."""
    host_map = {}
    for source in sources:
        hosts = json.loads(source.get("hosts") or "[]")
        if hosts:
            host_map.update({h: f"http://source-{source['id']}.replay.invalid" for h in [host_of(source["scope"]), *hosts]})
    return host_map


def _import_source(db: Any, named: dict[str, Any]) -> dict[str, Any]:
    """The source a WARC names, added under its own name where that is free."""
    name = named.get("name")
    if name and list(db.query("select 1 from sources where name = ? and url != ?", [name, named["url"]])):
        name = None
    source = ensure_source(db, named["url"], name=name)
    kept = {k: named[k] for k in ("folder", "title", "site_url", "hosts") if named.get(k) and not source.get(k)}
    if kept:
        db["sources"].update(source["id"], kept)
    return dict(db["sources"].get(source["id"]))
