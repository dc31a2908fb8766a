"""Launching a crawl: the Scrapy processes, their settings, their signals, the run's summary.

``blogarchive crawl`` takes the archive's lock, then calls ``run_crawl``.
The crawl runs in a subprocess (``scrapy crawl blog``): Scrapy's reactor
cannot restart, and this package never imports Scrapy. With one process,
that process writes the archive; with several (``crawler.run.processes``),
``blogarchive`` opens the run, writes what they send, and closes the run.
"""

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from archive.core.db import ArchiveError, open_archive
from archive.core.lock import close_stale_runs
from archive.core.queries import find_sources, get_run, interrupted_run, list_runs, list_sources, run_errors
from archive.core.urls import host_of
from archive.tables.sources import crawl_host_map, remember_setup
from archive.tables.writer import ArchiveWriter
from archive.tables.writes import ensure_source, finish_run, run_status, start_run

from crawler.memory import DEFAULT_MB, extract_workers
from crawler.run.coordinator import ClusterConfig, ClusterUnavailable, Coordinator, connect
from crawler.run.processes import Forwarder, forward_lines, run_processes, split_by_host

# Seconds between progress lines of a crawl of several processes.
PROGRESS_INTERVAL = 5.0


class CrawlFailed(RuntimeError):
    """The crawl ended without a run to report: it did not start, or its archive cannot be read."""


@dataclass
class CrawlOptions:
    """What ``blogarchive crawl`` passes on to the crawl. An option given wins, for this run, over a
    source's own setting (``archive.tables.sources``); those of a crawl of URLs become their sources' own."""

    host_map: dict[str, str] = field(default_factory=dict)  # HOST -> BASE, from --map-host
    delay: float | None = None  # seconds between requests to one host
    concurrency: int | None = None  # requests at once per host
    max_pages: int | None = None  # pages fetched at most per source
    media: str | None = None  # all, metadata or off
    media_max_mb: float | None = None  # the largest post image fetched
    render: str | None = None  # auto, always or never: a browser for the pages that need one
    keep_setup: bool = True  # host maps, delay, media (and its cap) and render become the URLs' sources' own (import warc's are not)
    mode: str | None = None  # "recheck", "full", or None: incremental
    quiet: bool = False  # no progress lines, only errors
    log_file: str | None = None  # append the crawl's log (INFO) here
    verbose: bool = False  # Scrapy's log on standard error
    processes: int = 1  # crawl processes, the sources split among them by host
    # gets the counts of a crawl of several processes (progress_line's), or of one with on_output
    on_progress: Callable[[dict[str, int]], None] | None = None
    # gets the crawl's lines of standard error (its log): a display on a terminal owns it, and gets the counts every second
    on_output: Callable[[str], None] | None = None
    cluster: ClusterConfig | None = None  # crawl on these Scrapyd nodes, through this Redis
    settings: dict[str, str] = field(default_factory=dict)  # more Scrapy settings (import warc: its download handler)


@dataclass
class CrawlOutcome:
    """A finished crawl: its run, how long it took, its errors, the sources that failed."""

    run: dict[str, Any]
    seconds: float
    failed: list[dict[str, Any]]  # the run's sources whose crawl failed
    returncode: int  # the crawl process's
    errors: Counter[str] = field(default_factory=Counter)  # "blog", "other hosts", "hosts down" (archive.core.queries.run_errors)
    stalled: int = 0  # the requests the watchdog gave up (crawler.fetch.watchdog)

    @property
    def ok(self) -> bool:
        return not self.returncode and self.run["status"] == "finished" and not self.failed

    def summary(self) -> str:
        """The one-line summary ``blogarchive crawl`` ends with."""
        run, errors = self.run, self.errors
        down = f"{errors['hosts down']} on hosts down since an earlier run, " if errors["hosts down"] else ""
        return (
            f"run {run['id']} {run['status']}: posts {run['posts_new']} new, {run['posts_updated']} updated, "
            f"{run['posts_unchanged']} unchanged; {run['pages']} pages, {run['files'] or 0} files, "
            f"{errors['blog']} errors on the blogs, {errors['other hosts']} on other hosts, {down}"
            f"{self.seconds:.1f} seconds; {run['requests'] or 0} requests, "
            f"{run['not_modified'] or 0} not modified, {run['extractions'] or 0} extractions, {run['versions'] or 0} new versions"
        )


# glibc's allocator for the crawl's processes (a user's own settings win): big buffers (a
# page's body, its text) are mapped and given back when freed, and its threads share two
# heaps instead of one each. With glibc's defaults, the memory of a huge page stayed taken
# after it was let go: about 120 MB of a crawl of six hostile blogs (docs/reliability.md).
MALLOC = {"MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_ARENA_MAX": "2"}

def run_crawl(db_path: str, urls: tuple[str, ...], options: CrawlOptions, *, lock: int) -> CrawlOutcome:
    """Add ``urls`` as sources (what ``options`` say of their host maps, delay and media becomes their
    own settings), crawl them (or every enabled source), and report the run.

    Args:
        db_path: the archive.
        urls: blogs to crawl; none: every enabled source.
        options: the crawl's options.
        lock: the descriptor holding the archive's crawl lock, inherited by the crawl.

    Raises:
        ArchiveError: the archive cannot be opened, or a URL cannot be a source (nothing is changed).
        ClusterUnavailable: Redis cannot be reached (nothing is changed), or no Scrapyd node.
        CrawlFailed: the crawl ended without a run to report.
    """
    client = connect(options.cluster.redis) if options.cluster else None
    db = open_archive(db_path)
    try:
        with db.atomic():  # all the sources or none: a command that fails changes nothing
            added = [ensure_source(db, url) for url in urls]
            if options.keep_setup:
                added = remember_setup(db, added, host_map=options.host_map, delay=options.delay, media=options.media,
                                       render=options.render, media_max_mb=options.media_max_mb)
    except ValueError as e:
        raise ArchiveError(str(e)) from e
    crawled = added if urls else find_sources(db)
    # one map for the crawl's processes: its sources' own, the run's --map-host winning
    options = replace(options, host_map=crawl_host_map(crawled, options.host_map))
    if client is None:  # a cluster's coordinator that restarts goes on with the run it had opened
        close_stale_runs(db)  # the lock is ours: a run left running by a dead crawl was interrupted
    interrupted = interrupted_run(db)
    if interrupted and client is None and not options.quiet and options.mode != "full":
        say = options.on_output or (lambda line: print(line, file=sys.stderr, flush=True))  # above a live line, not into it
        say(f"resuming run {interrupted['id']}, which was interrupted: the pages it fetched are read from the archive, "
            "not fetched again")
    last_run = db.execute("select coalesce(max(id), 0) from crawl_runs").fetchone()[0]
    settings = crawl_settings(db_path, options, crawled, lock=lock)
    env = {**MALLOC, **os.environ, "SCRAPY_SETTINGS_MODULE": "crawler.settings"}
    started = time.monotonic()
    if client is not None:  # a coordinator that restarts goes on with the run it had opened
        returncode, last_run = _run_cluster(db, crawled, settings, options, client)
        last_run -= 1
    elif options.processes == 1:
        db.close()
        returncode = run_forwarding_signals(crawl_command(settings, options, urls=urls), env, lock, db_path,
                                            on_progress=options.on_progress, on_output=options.on_output)
    else:
        returncode = _run_processes(db, crawled, settings, options, env, lock)
    try:
        db = open_archive(db_path)
    except ArchiveError as e:
        raise CrawlFailed(str(e)) from e
    runs = [r for r in list_runs(db, limit=1) if r["id"] > last_run]
    if not runs:
        raise CrawlFailed(f"the crawl did not start (exit code {returncode})")
    run = get_run(db, runs[0]["id"])
    run_sources = set(json.loads(run["sources"] or "[]"))
    failed = [s for s in list_sources(db) if s["id"] in run_sources and s["last_status"] == "failed"]
    errors = sum(run_errors(db, run["id"]).values(), Counter())
    stalled = db.execute("select count(*) from crawl_errors where run_id = ? and kind = 'stalled'", [run["id"]]).fetchone()[0]
    db.close()
    return CrawlOutcome(run=run, seconds=time.monotonic() - started, failed=failed, returncode=returncode, errors=errors,
                        stalled=stalled)


def crawl_command(settings: dict[str, str], options: CrawlOptions, *, urls: tuple[str, ...] = (),
                  source_ids: list[int] | None = None) -> list[str]:
    """``scrapy crawl blog`` for these URLs (or sources, or every enabled source)."""
    command = [sys.executable, "-m", "scrapy", "crawl", "blog"]
    if urls:
        command += ["-a", "url=" + " ".join(urls)]
    if source_ids:
        command += ["-a", "sources=" + ",".join(map(str, source_ids))]
    for key, value in spider_args(options).items():
        command += ["-a", f"{key}={value}"]
    for key, value in settings.items():
        command += ["-s", f"{key}={value}"]
    return command


def spider_args(options: CrawlOptions) -> dict[str, str]:
    """The spider's arguments: the run's options that win over a source's own settings, and its mode."""
    args = {"mode": options.mode, "max_pages": options.max_pages, "media": options.media,
            "media_max_mb": options.media_max_mb, "render": options.render}
    return {key: str(value) for key, value in args.items() if value}


def _run_processes(db: Any, sources: list[dict[str, Any]], settings: dict[str, str], options: CrawlOptions,
                   env: dict[str, str], lock: int) -> int:
    """Open the run, crawl the sources in several processes, write what they send, close the run."""
    close_stale_runs(db)
    weights = dict(db.execute("select source_id, count(*) from posts group by source_id").fetchall())
    groups = split_by_host(sources, options.processes, options.host_map, weights)
    run_id = start_run(db, [])
    db.close()
    # each process takes its share of the memory budget, and of the cores for its workers
    processes, memory_mb = len(groups) or 1, int(settings.get("ARCHIVE_MEMORY_MB", DEFAULT_MB))
    settings = {"ARCHIVE_EXTRACT_WORKERS": str(extract_workers(memory_mb, processes)), **settings,
                "ARCHIVE_MEMORY_MB": str(memory_mb // processes), "ARCHIVE_RUN_ID": str(run_id)}
    writer = ArchiveWriter(settings["ARCHIVE_PATH"])
    started = time.monotonic()
    returncodes, reasons = run_processes([crawl_command(settings, options, source_ids=g) for g in groups], env, lock,
                                         writer, on_progress=options.on_progress, on_output=options.on_output,
                                         progress_interval=1.0 if options.on_output else PROGRESS_INTERVAL)
    if not writer.fatal:
        reason = next((r or "shutdown" for r in reasons if r != "finished"), "finished")
        writer.run(finish_run, run_id, status=run_status(reason), seconds=time.monotonic() - started)
    writer.close()
    return max(returncodes, default=0)


def _run_cluster(db: Any, sources: list[dict[str, Any]], settings: dict[str, str], options: CrawlOptions,
                 client: Any) -> tuple[int, int]:
    """Crawl the sources on the cluster's nodes, one job per host; ingest what they send; close the run.

    Returns:
        The exit code, and the run.
    """
    db_path = settings["ARCHIVE_PATH"]
    db.close()
    assert options.cluster is not None
    # a job logs at the project's level (INFO) into its node's job log, where an operator reads what it did
    # and why it ended: the level of this command's own output (WARNING unless -v or --log-file) is not the node's
    node_settings = {k: v for k, v in settings.items()
                     if k not in ("ARCHIVE_PATH", "ARCHIVE_LOCK_FD", "LOG_FILE", "LOG_LEVEL")}
    node_settings["REDIS_URL"] = options.cluster.redis
    coordinator = Coordinator(db_path, options.cluster, client, node_settings, spider_args(options))
    from redis.exceptions import RedisError  # connect() imported redis

    try:
        coordinator.start(sources, options.host_map)
        reasons = coordinator.run(options.on_progress)
        coordinator.close(reasons)
    except RedisError as e:
        coordinator.writer.close()  # what was ingested is committed; the entries after it wait in Redis
        raise ClusterUnavailable(f"Redis at {options.cluster.redis} cannot be reached: {e}") from e
    return (0 if all(r == "finished" for r in reasons) else 1), coordinator.state["run"]


def progress_line(counts: dict[str, int]) -> str:
    """The line a crawl shows every few seconds when it is not on a terminal, or when asked for (tests, pipes)."""
    return (f"progress: {counts['pages']} pages and {counts['files']} files fetched, {counts['posts']} posts saved, "
            f"{counts['errors']} errors, {counts.get('queued', 0)} requests queued")


def crawl_settings(db_path: str, options: CrawlOptions, sources: list[dict[str, Any]], *, lock: int) -> dict[str, str]:
    """The crawl's Scrapy settings (``-s``), from the options and the own delays of the sources it crawls."""
    settings = {"ARCHIVE_PATH": os.path.abspath(db_path),
                "LOG_LEVEL": "INFO" if options.verbose or options.log_file else "WARNING",
                "ARCHIVE_LOCK_FD": str(lock)}
    if options.quiet:
        settings["ARCHIVE_PROGRESS_INTERVAL"] = "0"
        if not options.log_file:
            settings["LOG_LEVEL"] = "ERROR"
    if options.log_file:
        settings["LOG_FILE"] = os.path.abspath(options.log_file)
    if options.host_map:
        settings["ARCHIVE_MAP_HOSTS"] = json.dumps(options.host_map)
    if options.delay is not None:
        settings["DOWNLOAD_DELAY"] = str(options.delay)
        settings["AUTOTHROTTLE_ENABLED"] = "1" if options.delay else "0"
    slots = source_delays(sources, options)
    if slots:
        settings["DOWNLOAD_SLOTS"] = json.dumps(slots)
    own = [source["delay"] for source in sources]
    if slots and None not in own:  # AutoThrottle keeps every host at DOWNLOAD_DELAY at least: the least of theirs
        settings["DOWNLOAD_DELAY"] = str(min(own))
        settings["AUTOTHROTTLE_ENABLED"] = "1" if min(own) else "0"
    if options.concurrency:
        settings["CONCURRENT_REQUESTS_PER_DOMAIN"] = str(options.concurrency)
        settings["CONCURRENT_REQUESTS"] = str(max(16, options.concurrency))
    settings.update(options.settings)
    return settings


def source_delays(sources: list[dict[str, Any]], options: CrawlOptions) -> dict[str, dict[str, float]]:
    """Scrapy download slots for the sources crawled that have their own delay; none when the run has its own."""
    slots: dict[str, dict[str, float]] = {}
    if options.delay is not None:
        return slots
    for source in sources:
        if source["delay"] is None:
            continue
        host = host_of(source["scope"])
        fetched_from = options.host_map.get(host)
        slot = (urlsplit(fetched_from).hostname if fetched_from else host.split(":")[0]) or host
        slots[slot] = {"delay": source["delay"]}
    return slots


def run_forwarding_signals(command: list[str], env: dict[str, str], lock: int, db_path: str, *,
                           on_progress: Callable[[dict[str, int]], None] | None = None,
                           on_output: Callable[[str], None] | None = None) -> int:
    """Run the crawl in its own session; pass SIGTERM and SIGINT on, so it stops cleanly (``Forwarder``).
    With ``on_output``, the crawl's standard error goes there, and its counts to ``on_progress``
    (``ARCHIVE_PROGRESS_FD``). A crawl killed by a second Ctrl-C has its run marked interrupted here."""
    fds: tuple[int, ...] = (lock,)
    readers = []
    if on_output:
        counts, theirs = os.pipe()
        command, fds = [*command, "-s", f"ARCHIVE_PROGRESS_FD={theirs}"], (lock, theirs)
    proc = subprocess.Popen(command, env=env, pass_fds=fds, start_new_session=True,
                            stderr=subprocess.PIPE if on_output else None)
    if on_output:
        os.close(theirs)
        assert proc.stderr is not None
        show = on_progress or (lambda counts: None)
        readers = [forward_lines(proc.stderr, on_output), forward_lines(os.fdopen(counts, "rb"), lambda line: show(json.loads(line)))]
    with Forwarder([proc]) as forwarder:
        returncode = proc.wait()
    for reader in readers:
        reader.join(timeout=5)  # a worker that outlived the crawl may hold its standard error
    if forwarder.killed:
        db = open_archive(db_path)
        try:
            close_stale_runs(db)  # the lock is still ours
        finally:
            db.close()
    return returncode

