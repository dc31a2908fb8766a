"""An extraction worker's life, in a process of its own (``crawler.pool`` starts it).

This module and ``crawler.warmup`` are what the pool's forkserver preloads: the
extraction code, never Scrapy or Twisted, so each worker starts lean. The crawl's
process imports this module without the extraction code (trafilatura is slow to import).
"""

import ctypes
import signal
import sys
import traceback
from dataclasses import asdict
from multiprocessing.connection import Connection
from typing import Any

PR_SET_PDEATHSIG = 1  # linux/prctl.h


class PageTimeout(BaseException):
    """Raised by SIGALRM inside a worker; a BaseException, so no ``except Exception`` in trafilatura hides it."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise PageTimeout


def work(conn: Connection, timeout: float) -> None:
    """Extract the pages that come down ``conn`` until it closes or says stop (None)."""
    from .extract import extract_post  # loaded by the forkserver already (crawler.warmup); not by the crawl's start

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the crawl decides when to stop
    signal.signal(signal.SIGALRM, _on_alarm)
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        url, html, options = task
        try:
            signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                post = extract_post(url, html, **options)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            answer: tuple[str, Any] = ("ok", asdict(post) if post else None)
        except PageTimeout:
            answer = ("timeout", None)
        except Exception:
            answer = ("error", traceback.format_exc())
        try:
            conn.send(answer)
        except OSError:  # the crawl is gone
            return
