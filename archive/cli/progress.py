"""What ``blogarchive crawl`` shows while it runs. On a terminal, one live line (rich): the pages
fetched of those known so far and those left, posts saved, errors, pages a second and, once it
can be estimated, the time left; the crawl's own messages above it. Elsewhere (a pipe, a file, a
test), the plain ``progress:`` lines, every few seconds; with ``--quiet``, nothing."""

import sys
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from crawler.run.launch import progress_line

MIN_SECONDS = 3.0  # seen before a rate, and a time left, are shown


@contextmanager
def crawl_display(quiet: bool) -> Iterator[dict[str, Any]]:
    """The ``on_progress`` and ``on_output`` of ``CrawlOptions`` (none with ``quiet``) while the crawl runs."""
    if quiet:
        yield {}
        return
    plain = {"on_progress": lambda counts: click.echo(progress_line(counts), err=True)}
    if not sys.stderr.isatty():
        yield plain
        return
    from rich.console import Console  # only for a crawl on a terminal

    console = Console(stderr=True)
    if console.is_dumb_terminal:
        yield plain
        return
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn

    rate = PageRate()
    with Progress(SpinnerColumn(), BarColumn(bar_width=24), TextColumn("{task.fields[counts]}"), console=console) as shown:
        task = shown.add_task("crawl", total=None, counts="starting")

        def on_progress(counts: dict[str, int]) -> None:
            rate.add(counts["pages"])
            shown.update(task, completed=counts["pages"], total=counts["pages"] + counts["queued"],
                         counts=counts_text(counts, rate.per_second()))

        def on_output(line: str) -> None:
            console.print(line, markup=False, highlight=False, emoji=False, soft_wrap=True)

        yield {"on_progress": on_progress, "on_output": on_output}


class PageRate:
    """Pages a second over the last half minute."""

    def __init__(self, window: float = 30.0) -> None:
        self.window = window
        self.samples: deque[tuple[float, int]] = deque()

    def add(self, pages: int) -> None:
        now = time.monotonic()
        self.samples.append((now, pages))
        while len(self.samples) > 2 and self.samples[0][0] < now - self.window:
            self.samples.popleft()

    def per_second(self) -> float | None:
        """None until a few seconds have been seen."""
        (start, first), (end, last) = self.samples[0], self.samples[-1]
        return (last - first) / (end - start) if end - start >= MIN_SECONDS else None


def counts_text(counts: dict[str, int], rate: float | None) -> str:
    """``372 of 640 known pages, 268 left, 58 posts saved, 122 errors, 3.1 pages/s, about 0:01:26 left``."""
    pages, left = counts["pages"], counts["queued"]
    text = f"{pages} of {pages + left} known pages, {left} left, {counts['posts']} posts saved, {counts['errors']} errors"
    if rate is None:
        return text
    text += f", {rate:.1f} pages/s"
    if rate > 0 and left:
        eta = round(left / rate)
        text += f", about {eta // 3600}:{eta // 60 % 60:02d}:{eta % 60:02d} left"
    return text
