"""What ``blogarchive crawl`` shows while it runs. On a terminal, one live line (rich): the pages and
files (the posts' images) fetched of those known so far and those left, posts saved, errors, requests
a second and, once it can be estimated, the time left, which a narrow terminal never cuts; the crawl's
own messages above it. Elsewhere (a pipe, a file, a test), the plain ``progress:`` lines, every few
seconds; with ``--quiet``, nothing."""

import sys
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from crawler.run.launch import progress_line

MIN_SECONDS = 3.0  # seen before a rate, and a time left, are shown
BAR = 24  # the progress bar's width, in columns
WIDE = 130  # the terminals as wide as this, at least, show the bar


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
    bar = console.width >= WIDE  # the bar only where the counts and the time left fit beside it
    columns = [SpinnerColumn(), *([BarColumn(bar_width=BAR)] if bar else []), TextColumn("{task.fields[counts]}")]
    room = console.width - 2 - (BAR + 1 if bar else 0)  # the spinner, and the bar, each with its space
    with Progress(*columns, console=console) as shown:
        task = shown.add_task("crawl", total=None, counts="starting")

        def on_progress(counts: dict[str, int]) -> None:
            done = counts["pages"] + counts["files"]
            rate.add(done)
            shown.update(task, completed=done, total=done + counts["queued"], counts=counts_text(counts, rate.per_second(), room))

        def on_output(line: str) -> None:
            console.print(line, markup=False, highlight=False, emoji=False, soft_wrap=True)

        yield {"on_progress": on_progress, "on_output": on_output}


class PageRate:
    """Pages and files a second over the last half minute."""

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


def counts_text(counts: dict[str, int], rate: float | None, width: int) -> str:
    """``372 pages and 40 files of 680 known, 268 left, 58 posts saved, 122 errors, 3.1 a second, about 0:01:26 left``;
    where that is wider than ``width``, the time left first and the counts short: ``0:01:26 left, 372 pages,
    40 files, 268 to go, 58 posts, 122 errors``, so that a narrow terminal cuts what counts least."""
    pages, files, left = counts["pages"], counts["files"], counts["queued"]
    text = (f"{pages} pages and {files} files of {pages + files + left} known, {left} left, {counts['posts']} posts saved, "
            f"{counts['errors']} errors")
    eta = None
    if rate is not None:
        text += f", {rate:.1f} a second"
        if rate > 0 and left:
            seconds = round(left / rate)
            eta = f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
            text += f", about {eta} left"
    if len(text) <= width:
        return text
    short = f"{pages} pages, {files} files, {left} to go, {counts['posts']} posts, {counts['errors']} errors"
    return f"{eta} left, {short}" if eta else short
