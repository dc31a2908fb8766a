"""What counts as a big page, and giving a process's free heap back to the system.

Lean (no Scrapy, no Twisted): the crawl's budget and writer and the extraction
workers all use it.
"""

import ctypes

# A page over this many bytes (or characters) once decompressed is big: it holds one of the
# budget's lanes (crawler.run.budget), its worker is replaced afterwards (crawler.extract.pool) and trims its
# heap before it answers (crawler.extract.worker), and its writes reopen the writer's connection (crawler.store.archive_store).
BIG_PAGE_BYTES = 1_000_000

try:
    _LIBC: ctypes.CDLL | None = ctypes.CDLL("libc.so.6")
    _LIBC.malloc_trim  # glibc only
except (OSError, AttributeError):
    _LIBC = None


def trim() -> None:
    """Give the system back what the heap holds free (``malloc_trim``): a big page's tree and
    strings are millions of small blocks, which glibc keeps in its heaps once let go."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
