"""How the memory budget (``ARCHIVE_MEMORY_MB``) is spent: the processes at rest, the
extraction workers, and the lanes of big pages (``crawler.run.budget``).

Measured on the hostile crawl (docs/reliability.md, "The memory budget"): the ``blogarchive``
command and one crawl process at rest take about ``RESTING_MB``, one warm extraction worker
``WORKER_MB`` (74 of them py3langid's model), and a big page on its way is held about
``PAGE_COPIES`` times across the processes (its body, its text, the worker's tree, the post
sent back, its write). The budget pays for the processes at rest and one lane first, then for
each worker beyond the first, then for more lanes.
"""

import os

DEFAULT_MB = 512  # ARCHIVE_MEMORY_MB's default
RESTING_MB = 150
WORKER_MB = 130
PAGE_COPIES = 10
MAX_PAGE_MB = 20  # the size cap: Scrapy's DOWNLOAD_MAXSIZE in crawler.settings


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
