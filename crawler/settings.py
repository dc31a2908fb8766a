"""Scrapy settings for blogarchive, and its own ``ARCHIVE_*`` settings.

The only crawl code that reads the environment. Command-line ``-s`` options
and ``blogarchive crawl`` options override what is here.
"""

import os
import shutil
import sys

from scrapy.settings import default_settings

from crawler import memory

# itemadapter (how Scrapy reads items) imports pydantic when it is installed (wacz's frictionless
# brings it): 0.1 s of every crawl's start. The crawl's items are dataclasses; pydantic is hidden
# while itemadapter loads, and importable after.
if "pydantic" not in sys.modules and "itemadapter" not in sys.modules:
    sys.modules["pydantic"] = None  # type: ignore[assignment]
    try:
        import itemadapter  # noqa: F401
    finally:
        del sys.modules["pydantic"]

BOT_NAME = "blogarchive"
SPIDER_MODULES = ["crawler.spiders"]
NEWSPIDER_MODULE = "crawler.spiders"

# -- blogarchive ------------------------------------------------------------
# The SQLite archive the crawl writes to.
ARCHIVE_PATH = os.environ.get("BLOGARCHIVE_DB", "archive.db")
# {"host[:port]": "http://base"}: fetch that host's URLs from another server.
ARCHIVE_MAP_HOSTS: dict[str, str] = {}
# Pages fetched at most per source and run (feeds, sitemaps and pages).
ARCHIVE_MAX_PAGES = 10_000
# Links followed at most from the start page, and query-string variants of
# one path fetched at most (calendar and filter traps); what is cut is recorded.
ARCHIVE_MAX_DEPTH = 500
ARCHIVE_MAX_QUERY_VARIANTS = 50
# Links read at most from one page (an index of every post holds a few thousand; a page of
# 500,000 would cost seconds and hundreds of MB for each of its reads); the cut is recorded.
ARCHIVE_MAX_LINKS = 10_000
# A URL shape holding less than this share of the feed's entries, beside the
# shape holding most of them, is a site section (projects, pages), not posts.
ARCHIVE_SECTION_MIN_SHARE = 0.2
# Seconds between progress lines while crawling (0: none).
ARCHIVE_PROGRESS_INTERVAL = 5.0
# How often known posts are checked again, by age: AGE:INTERVAL pairs, the
# last one *:INTERVAL (per source: `blogarchive source set NAME revisit=...`).
ARCHIVE_REVISIT = "7d:0,90d:1d,*:7d"
# Longest Retry-After (seconds) waited for within a run; a longer one leaves
# the host alone until then, in this run and the next.
ARCHIVE_RETRY_AFTER_MAX = 120.0
# Seconds a crawl may make no progress, with work pending, before the watchdog gives up what is in
# flight (and, stalled again, stops the crawl): above every bounded wait of a crawl (Retry-After,
# AutoThrottle's longest delay, a download's and a rendering's time limits). 0: no watchdog.
ARCHIVE_STALL_SECONDS = 300.0
# A descriptor, inherited from `blogarchive crawl`, that holds the archive's
# crawl lock; unset, the crawl takes the lock itself.
ARCHIVE_LOCK_FD = None
# Set by `blogarchive crawl --processes N` for each of its crawl processes: the
# run it opened (the process adds to it, blogarchive closes it), and a socket
# to blogarchive, the archive's one writer, through which every write goes.
ARCHIVE_RUN_ID = None
ARCHIVE_WRITER_FD = None
# Set by `blogarchive crawl` on a terminal: a pipe for the crawl's counts (crawler/run/progress.py).
ARCHIVE_PROGRESS_FD = None
# Set by `blogarchive crawl --cluster` for each job it schedules on a Scrapyd
# node: the run's keys in Redis (REDIS_URL, scrapy-redis's setting), the job,
# the host it leases, and the lease's length in seconds (renewed every second).
ARCHIVE_CLUSTER_KEY = None
ARCHIVE_CLUSTER_JOB = None
ARCHIVE_CLUSTER_HOST = None
ARCHIVE_CLUSTER_LEASE = 30.0
# Worker processes that extract posts (trafilatura), off the crawl's own
# process; 0 extracts inline, in the crawl's process. None: one core fewer than
# the machine has (the crawl's own process keeps a core busy), and no more than
# ARCHIVE_MEMORY_MB holds (crawler.memory); one at least.
ARCHIVE_EXTRACT_WORKERS = None
# Seconds one page may take to extract; a slower one is stopped and recorded
# as an error (kind "extract").
ARCHIVE_EXTRACT_TIMEOUT = 30.0
# Pages waiting for a worker at most: beyond, new requests wait.
ARCHIVE_EXTRACT_QUEUE = 8
# A worker is replaced by a fresh one after this many pages, or once its resident
# memory passes this many MB (a huge page's parse leaves the heap grown).
ARCHIVE_EXTRACT_RECYCLE_PAGES = 1000
ARCHIVE_EXTRACT_RECYCLE_MB = 250
# Memory the crawl's processes may take, about: it bounds the extraction workers,
# and big pages (over 1 MB) go through a few lanes, one for each 200 MB beyond the
# processes at rest (crawler.memory, crawler.fetch.budget).
ARCHIVE_MEMORY_MB = memory.DEFAULT_MB
# Keys a crawl keeps in memory per blog for what grows with it (URLs seen, pages
# judged, feed entries); beyond, they are kept in a temporary file.
ARCHIVE_MEMORY_KEYS = 100_000
# Seconds between commits: the crawl's writes are grouped in one transaction
# per interval (a crash loses at most that much work, fetched again next run).
ARCHIVE_COMMIT_INTERVAL = 0.25
# The media posts show (see crawler.fetch.media_ledger): "all" archives their images and records
# the URLs of their videos, audio and files; "metadata" records the URLs only; "off" neither
# (per source: `blogarchive source set NAME media=...`). Caps in MB: one file (a larger one is
# not read), one post's images, one source's images; what a cap skips is recorded.
ARCHIVE_MEDIA = "all"
ARCHIVE_MEDIA_MAX_MB = 10.0
ARCHIVE_MEDIA_POST_MB = 50.0
ARCHIVE_MEDIA_SOURCE_MB = 2048.0
# The browser, for the pages whose scripts write their text (crawler.judge.render, docs/rendering.md):
# "auto" renders a page whose HTTP answer is such a shell (and, once a blog's pages are, its pages
# without asking over HTTP first), "always" every page, "never" none (per source:
# `blogarchive source set NAME render=...`). Seconds a page has to load and fall quiet; the Chromium
# driven ($BLOGARCHIVE_CHROMIUM, else the one on PATH: Playwright's own builds are never downloaded).
ARCHIVE_RENDER = "auto"
ARCHIVE_RENDER_TIMEOUT = 15.0
# A rendered page's requests to its blog's host: this many at once, then one per the host's delay
# (crawler.fetch.render.Bucket): a page's own load is not spread over the crawl's delay
ARCHIVE_RENDER_BURST = 12
ARCHIVE_CHROMIUM = os.environ.get("BLOGARCHIVE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
# scrapy-playwright's settings (crawler.fetch.render): headless, as root (no sandbox), nothing
# the browser would fetch for itself, a fresh context with no profile on disk, two pages at once
PLAYWRIGHT_BROWSER_TYPE = "chromium"
PLAYWRIGHT_LAUNCH_OPTIONS = {
    "executable_path": ARCHIVE_CHROMIUM,
    "headless": True,
    "args": ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
}
PLAYWRIGHT_CONTEXTS = {"default": {"service_workers": "block", "accept_downloads": False, "permissions": []}}
PLAYWRIGHT_MAX_CONTEXTS = 1
PLAYWRIGHT_MAX_PAGES_PER_CONTEXT = 2

# -- politeness: real sites ------------------------------------------------------
USER_AGENT = "blogarchive/0.1 (+https://pypi.org/project/blogarchive/)"
ROBOTSTXT_OBEY = True
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 2
DOWNLOAD_DELAY = 1.0
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 1.0
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0
DOWNLOAD_TIMEOUT = 30
DOWNLOAD_MAXSIZE = memory.MAX_PAGE_MB * 1024 * 1024
DOWNLOAD_WARNSIZE = 5 * 1024 * 1024
RETRY_TIMES = 2
# A request that fails for good is one line on standard error, with its kind, from the
# pipeline that records it (crawler.store.pipelines.TOLD_KINDS); Scrapy's own line goes to the log.
RETRY_GIVE_UP_LOG_LEVEL = "INFO"

# Only http and https: no file:, data:, ftp: or s3: fetches from crawled content.
DOWNLOAD_HANDLERS = {"file": None, "data": None, "ftp": None, "s3": None,
                     # Scrapy's own, which a cluster job fences with its host's lease, or the browser for a page that needs one
                     "http": "crawler.fetch.render.RenderingDownloadHandler", "https": "crawler.fetch.render.RenderingDownloadHandler"}

DOWNLOADER_MIDDLEWARES = {
    # before anything, a name looked up above all: a host down for the run is asked for no more
    "crawler.fetch.hostdown.HostDownMiddleware": 40,
    # before retries (550): each failure to reach a host counts before it is retried
    "crawler.fetch.hostdown.HostFailuresMiddleware": 560,
    # first: nothing internal is fetched unless the user typed it
    "crawler.fetch.safety.PrivateAddressMiddleware": 50,
    # RFC 9309: an unreachable robots.txt disallows everything
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "crawler.fetch.safety.RobotsPolicyMiddleware": 100,
    # closest to the downloader, so every other middleware sees original URLs
    "crawler.fetch.middlewares.MapHostsMiddleware": 990,
    # after decompression and redirects, before retries: sees every body once
    "crawler.fetch.conditional.ConditionalMiddleware": 585,
    # just before it: an image's answer that is not an image, or passes a cap, is never captured
    "crawler.fetch.media_ledger.MediaCheckMiddleware": 587,
    # before decompression (590): a compressed body cut short is refused, not read in part
    "crawler.fetch.middlewares.TruncatedBodyMiddleware": 595,
    # Scrapy's meta refresh (580), reading a page's first bytes instead of decoding all of it
    "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware": None,
    "crawler.fetch.middlewares.MetaRefreshMiddleware": 580,
    # Scrapy's (600), a Location that is no URL taken as no redirect
    "scrapy.downloadermiddlewares.redirect.RedirectMiddleware": None,
    "crawler.fetch.middlewares.RedirectMiddleware": 600,
    # before validators (585) and the host's mirror (990): a page its blog's rendering sends to the browser
    "crawler.fetch.render.LearnedRendering": 575,
    # holds requests while pages wait for an extraction worker (back-pressure)
    "crawler.extract.pool.ExtractionGate": 60,
    # after that check, before decompression (590): a big page holds one of a few lanes (ARCHIVE_MEMORY_MB)
    "crawler.fetch.budget.MemoryBudget": 592,
}
SPIDER_MIDDLEWARES = {
    # farthest from the spider: a bug anywhere on a page's way is recorded against its source
    "crawler.fetch.safety.CallbackErrorsMiddleware": 10,
    "crawler.store.tracking.ProcessedMiddleware": 950,
    # a big page's lane is free once its callback is done (crawler.fetch.budget)
    "crawler.fetch.budget.ReleaseLanes": 20,
}
# Scrapy starts this many tasks for the output of every page, which here is a handful of items
# and requests (its default, 100, cost about 1 % of a crawl's CPU in task creation alone).
CONCURRENT_ITEMS = 8
ITEM_PIPELINES = {
    "crawler.store.tracking.LockPipeline": 50,
    "crawler.store.pipelines.ValidatePipeline": 100,
    "crawler.store.pipelines.ArchivePipeline": 300,
}
EXTENSIONS = {
    "crawler.fetch.watchdog.Watchdog": 400,
    "crawler.run.progress.Progress": 500,
    "crawler.extract.pool.ExtractionPool": 100,
    "crawler.fetch.stopping.Stopping": 0,
}
# No console and no remote control: a crawl of other people's sites opens no
# port that runs code. They are left out of Scrapy's base list, not set to None
# in EXTENSIONS: Scrapy imports every key of EXTENSIONS, and the remote control
# imports aiohttp (0.3 s before the first request).
_off = ("scrapy.extensions.telnet.TelnetConsole", "scrapy.extensions.remote_control.RemoteControl")
EXTENSIONS_BASE = {k: v for k, v in default_settings.EXTENSIONS_BASE.items() if k not in _off}
REMOTE_CONTROL_ENABLED = False

LOG_LEVEL = "INFO"
FEED_EXPORT_ENCODING = "utf-8"
