"""An extraction worker's life, in a process of its own (``crawler.extract.pool`` starts it).

The pool starts ``python -m crawler.extract.worker FD TIMEOUT PARENT``: a fresh interpreter
that imports the extraction code, never Scrapy or Twisted, warms it up
(``crawler.extract.warmup``), says it is ready on the socket ``FD``, and then makes the
post of each page that comes down it (a ``crawler.extract.post_page.PostPage``, then its
body's bytes). A fresh interpreter, not a fork: there is no forkserver
beside the crawl to hold a copy of what each worker holds, and no resource tracker.
On Linux the kernel kills the worker when its parent, the crawl's process, goes.
The crawl's process imports this module without the extraction code (trafilatura
is slow to import).
"""

import ctypes
import os
import signal
import sys
import traceback
from dataclasses import asdict
from multiprocessing.connection import Connection
from typing import Any

from crawler.judge.encoding import page_text
from crawler.memory import BIG_PAGE_BYTES, trim

PR_SET_PDEATHSIG = 1  # linux/prctl.h
READY = ("ready", None)  # a worker's first message: warmed up, waiting for pages


class PageTimeout(BaseException):
    """Raised by SIGALRM inside a worker; a BaseException, so no ``except Exception`` in trafilatura hides it."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise PageTimeout


def work(conn: Connection, timeout: float) -> None:
    """Extract the pages that come down ``conn`` until it closes or says stop (None)."""
    # warmed up by its import: what trafilatura, htmldate and py3langid load lazily
    import crawler.extract.warmup  # noqa: F401
    from crawler.extract.post import extract_page, parse_html

    try:
        conn.send(READY)
    except OSError:  # the crawl is gone
        return
    while True:
        try:
            page = conn.recv()  # a PostPage without its body
        except EOFError:
            return
        if page is None:
            return
        body: bytes | None  # each let go once read (below)
        html: str | None
        try:
            body = conn.recv_bytes()
        except EOFError:
            return
        big = len(body) > BIG_PAGE_BYTES
        try:
            signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                # the page as a tree: its bytes and its text are let go before the extraction
                html, body = page_text(body, page.encoding), None
                root, html = parse_html(html), None
                post = extract_page(page, root)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                body = html = root = None  # before the answer is pickled, or the next page comes
            answer: tuple[str, Any] = ("ok", asdict(post) if post else None)
            if big:  # after a 15 MB page, 116 MB over its resting size become 38 (the post)
                trim()
        except PageTimeout:
            answer = ("timeout", None)
        except Exception:
            answer = ("error", traceback.format_exc())
        try:
            conn.send(answer)
        except OSError:  # the crawl is gone
            return


def main(fd: str, timeout: str, parent: str) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the crawl decides when to stop
    signal.signal(signal.SIGALRM, _on_alarm)
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != int(parent):  # the crawl went before the line above
            return
    work(Connection(int(fd)), float(timeout))


if __name__ == "__main__":
    main(*sys.argv[1:])
