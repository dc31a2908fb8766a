"""The memory budget (``ARCHIVE_MEMORY_MB``), how it is spent, and what counts as a big page.

The budget pays for the processes at rest, the extraction workers, and the lanes of big pages
(``crawler.fetch.budget``).

Measured on the hostile crawl (docs/reliability.md, "The memory budget"): the ``blogarchive``
command and one crawl process at rest take about ``RESTING_MB``, one warm extraction worker
``WORKER_MB`` (measured 132 MB, 74 of them py3langid's model, before the model was mapped
from a cache: 106 since), and a big page on its way is held about
``PAGE_COPIES`` times across the processes (its body, its text, the worker's tree, the post
sent back, its write). The budget pays for the processes at rest and one lane first, then for
each worker beyond the first, then for more lanes.

Lean (no Scrapy, no Twisted): the command line, the crawl's budget and writer and the
extraction workers all use it. ``trim`` gives a process's free heap back to the system.
"""

import ctypes
import os

DEFAULT_MB = 512  # ARCHIVE_MEMORY_MB's default
RESTING_MB = 150
WORKER_MB = 130
PAGE_COPIES = 10
MAX_PAGE_MB = 20  # the size cap: Scrapy's DOWNLOAD_MAXSIZE in crawler.settings
# A browser rendering two pages at once (crawler.fetch.render): Playwright's driver about 140 MB
# and Chromium's processes about 460 MB, summed PSS (docs/rendering.md, bench/rendering.py)
BROWSER_MB = 600


def rendering_mb(workers: int = 1) -> int:
    """The budget a crawl that starts a browser needs: the processes at rest, its ``workers``, one
    lane and the browser."""
    return RESTING_MB + workers * WORKER_MB + PAGE_COPIES * MAX_PAGE_MB + BROWSER_MB


def extract_workers(memory_mb: int, processes: int = 1, cores: int | None = None) -> int:
    """Extraction workers for each of ``processes`` crawl processes: the ``cores`` they leave free
    (each keeps one busy; by default the cores this process may run on) shared among them, and
    no more than their share of ``memory_mb`` holds beside one lane; one at least."""
    cores = cores or len(os.sched_getaffinity(0))
    by_cores = (cores - processes) // processes
    by_memory = (memory_mb // processes - RESTING_MB - PAGE_COPIES * MAX_PAGE_MB) // WORKER_MB
    return max(1, min(by_cores, by_memory))


def lanes(memory_mb: int, workers: int, max_page_mb: float = MAX_PAGE_MB) -> int:
    """Big pages on their way at once: what ``memory_mb`` holds beside the processes at rest
    (the crawl's and its ``workers``), each page up to ``max_page_mb``; one at least."""
    return max(1, int((memory_mb - RESTING_MB - workers * WORKER_MB) // (PAGE_COPIES * max_page_mb)))


# A page over this many bytes (or characters) once decompressed is big: it holds one of the
# budget's lanes (crawler.fetch.budget), its worker is replaced afterwards (crawler.extract.pool) and trims its
# heap before it answers (crawler.extract.worker), and its writes reopen the writer's connection (crawler.store.archive_store).
BIG_PAGE_BYTES = 1_000_000

_LIBC: ctypes.CDLL | None
try:
    _LIBC = ctypes.CDLL("libc.so.6")
    _LIBC.malloc_trim  # noqa: B018  (the lookup raises AttributeError off glibc)
except (OSError, AttributeError):
    _LIBC = None


def trim() -> None:
    """Give the system back what the heap holds free (``malloc_trim``): a big page's tree and
    strings are millions of small blocks, which glibc keeps in its heaps once let go."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
