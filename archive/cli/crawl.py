"""``blogarchive crawl`` and ``blogarchive import warc``: a crawl launched in its own process (Scrapy's
reactor cannot restart), or its plan read from the archive (``--dry-run``)."""

import json
import os
import subprocess
import sys
from typing import Any

import click

from archive import ArchiveError, ensure_source
from archive.cli.common import ConfigError, db_option, open_db, require_archive
from archive.cli.progress import crawl_display
from archive.core.db import check_writable
from archive.core.lock import acquire_lock, release_lock
from archive.core.urls import host_of, is_http_url, parse_host_map
from archive.notify import deliver_after_crawl

from crawler.run.coordinator import ClusterConfig, ClusterUnavailable
from crawler.run.launch import CrawlFailed, CrawlOptions, CrawlOutcome, run_crawl


@click.command()
@click.argument("urls", nargs=-1)
@click.option("--map-host", "map_hosts", multiple=True, metavar="HOST=BASE",
              help="Fetch HOST's URLs from BASE instead, keeping the original URLs (repeatable; kept by the URLs' sources).")
@click.option("--delay", type=click.FloatRange(min=0),
              help="Seconds between requests to one host (default 1, with AutoThrottle; kept by the URLs' sources).")
@click.option("--concurrency", type=click.IntRange(min=1), help="Requests at once per host (default 2).")
@click.option("--max-pages", type=click.IntRange(min=1), help="Pages fetched at most per source in this run (default 10000).")
@click.option("--processes", default="1", show_default=True, callback=lambda ctx, param, value: _processes(value),
              help="Crawl processes, the sources split among them by host; auto: one per core.")
@click.option("--cluster", "cluster_config", type=click.Path(dir_okay=False),
              help="Crawl on a cluster of Scrapyd nodes with Redis as the hub, as this TOML file says (docs/scaling.md).")
@click.option("--scrapyd", "nodes", multiple=True, metavar="URL", help="A Scrapyd node of the cluster (repeatable; with --redis).")
@click.option("--redis", "redis_url", metavar="URL", help="The cluster's Redis (redis://HOST:PORT/DB; with --scrapyd).")
@click.option("--media", type=click.Choice(["all", "metadata", "off"]),
              help="Post images archived (all, the default), their URLs only (metadata) or neither (off; kept by the URLs' sources).")
@click.option("--render", type=click.Choice(["auto", "always", "never"]),
              help="A browser (Chromium) for the pages whose scripts write their text: only those (auto, the default), "
                   "every page (always) or none (never; kept by the URLs' sources; docs/rendering.md).")
@click.option("--media-max-mb", type=click.FloatRange(min=0, min_open=True),
              help="Largest image fetched, in MB (default 10); a larger one is recorded, not fetched. "
                   "Given with URLs, their blogs keep it.")
@click.option("--workers", type=click.IntRange(min=0),
              help="Extraction worker processes per crawl process (default: one core fewer than the machine has, "
                   "and as many as --memory-mb holds, one at least; 0: extract in the crawl's process). "
                   "Each holds about 130 MB.")
@click.option("--memory-mb", type=click.IntRange(min=1),
              help="The memory budget of the crawl's processes, in MB (default 512): it bounds the extraction "
                   "workers and the big pages on their way at once.")
@click.option("--stall-seconds", type=click.FloatRange(min=0),
              help="Seconds the crawl may make no progress before what is in flight is given up as stalled, and "
                   "then the crawl stopped (default 300; 0: never; docs/reliability.md).")
@click.option("--recheck", is_flag=True, help="Revalidate every known post (conditional requests).")
@click.option("--full", is_flag=True, help="Rediscover everything as a first crawl does, without validators.")
@click.option("--dry-run", is_flag=True, help="List what the run would request and why; fetch and write nothing.")
@click.option("-q", "--quiet", is_flag=True, help="Print only errors and the summary.")
@click.option("--log-file", type=click.Path(dir_okay=False, writable=True), help="Append the crawl's log (INFO) to this file.")
@click.option("-v", "--verbose", is_flag=True, help="Show Scrapy's log.")
@db_option
def crawl(urls: tuple[str, ...], map_hosts: tuple[str, ...], delay: float | None,
          concurrency: int | None, max_pages: int | None, processes: int, cluster_config: str | None,
          nodes: tuple[str, ...], redis_url: str | None, media: str | None, render: str | None, media_max_mb: float | None,
          workers: int | None, memory_mb: int | None, stall_seconds: float | None, recheck: bool, full: bool, dry_run: bool, quiet: bool,
          log_file: str | None, verbose: bool, db_path: str) -> None:
    """Crawl blogs into the archive.

    Each URL is a blog's home page (its folder is the blog's scope), a feed
    or a sitemap; a new one becomes a source. With no URL, every enabled
    source is crawled. A source keeps the --map-host, --delay, --media and --render
    a crawl of its URL was given as its own settings (blogarchive
    sources); an option given to a run wins for that run. A source's first
    crawl is complete; later ones are incremental. Exit codes: 0 all
    sources fine, 1 some failed, the run was interrupted or it stalled,
    2 usage or configuration error, 75 another crawl is running on the
    archive.
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
    if not urls:  # the archive's own sources: a mistyped --db creates no archive to crawl none
        require_archive(db_path)
    if dry_run:
        _dry_run(urls, "recheck" if recheck else "full" if full else "incremental", db_path)
        return
    lock, stale = _writable_and_locked(db_path)
    try:
        if stale:
            click.echo(f"Warning: took over the lock of pid {stale}, which is no longer running", err=True)
        with crawl_display(quiet) as display:
            options = CrawlOptions(host_map=host_map, delay=delay, concurrency=concurrency, max_pages=max_pages, media=media,
                                   media_max_mb=media_max_mb, render=render,
                                   mode="recheck" if recheck else "full" if full else None,
                                   quiet=quiet, log_file=log_file, verbose=verbose, processes=processes,
                                   cluster=_cluster(cluster_config, nodes, redis_url),
                                   settings=({} if workers is None else {"ARCHIVE_EXTRACT_WORKERS": str(workers)})
                                   | ({} if memory_mb is None else {"ARCHIVE_MEMORY_MB": str(memory_mb)})
                                   | ({} if stall_seconds is None else {"ARCHIVE_STALL_SECONDS": str(stall_seconds)}),
                                   **display)
            outcome = _launch(db_path, urls, options, lock)
        try:
            _report(outcome)
        finally:  # after the summary, the run's writes committed, the lock still held; the exit code stands
            if warning := deliver_after_crawl(db_path):
                click.echo(warning, err=True)
    finally:
        release_lock(lock)


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
        return acquire_lock(db_path)  # CrawlLocked: exit 75 (archive.cli.common)
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
    if run["status"] == "stalled":
        click.echo(f"Error: run {run['id']} stalled: {outcome.stalled} requests made no progress within --stall-seconds "
                   f"and were given up (crawl_errors of kind 'stalled'); the rest was archived", err=True)
    for source in outcome.failed:
        click.echo(f"Error: {source['name']}: the crawl failed (see crawl_errors of run {run['id']})", err=True)
    if not outcome.ok:
        sys.exit(1)


def _dry_run(urls: tuple[str, ...], mode: str, db_path: str) -> None:
    """What a crawl would request and why (``crawler.discover.dryrun``), without fetching or writing."""
    require_archive(db_path)
    proc = subprocess.run([sys.executable, "-m", "crawler.discover.dryrun", "--db", os.path.abspath(db_path), "--mode", mode, *urls],
                          capture_output=True, text=True, encoding="utf-8")
    last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    if proc.returncode == 2:  # the archive cannot be read (crawler.discover.dryrun)
        raise ConfigError(last)
    if proc.returncode:
        raise click.ClickException(f"the dry run failed: {last}")
    planned = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    for request in planned:
        click.echo(f"{request['source']}\t{request['why']}\t{request['url']}")
    requests = [r for r in planned if not r["why"].startswith("fresh until")]
    sources = len({r["source"] for r in planned})
    click.echo(f"{len(requests)} requests at least for {sources} sources (and the posts their feeds and sitemaps announce)")


@click.group("import")
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
    from archive.formats.warc import check_warc  # warcio: only when asked for
    from archive.formats.warc import import_warc as read_warc

    try:  # every file read through before the archive is opened, or created: a bad file changes nothing
        for path in files:
            check_warc(path)
    except ValueError as e:
        raise click.ClickException(str(e)) from e
    lock, _ = _writable_and_locked(db_path)
    try:
        db = open_db(db_path, create=True)
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
        # the images are not in the captures: their URLs are listed, the next crawl fetches them
        options = CrawlOptions(host_map=_replay_hosts(list(sources.values())), delay=0, concurrency=16, mode="full",
                               quiet=quiet, media="metadata", render="never", keep_setup=False, settings={"DOWNLOAD_HANDLERS": json.dumps(handlers)})
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
