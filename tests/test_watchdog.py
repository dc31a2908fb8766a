"""A crawl always ends (issue 46, docs/reliability.md): what makes no progress is given up as
``stalled`` by the watchdog (crawler/fetch/watchdog.py), the rest is archived, and the command
exits 1 with a line that names the stall.

A blog on 127.0.0.1 whose feed lists three posts; one of them never answers (over HTTP), or is a
shell whose script asks for a file the server never sends (in the browser). The crawls run at the
default delay (1 s) and at a small one, with the watchdog's time made short (``--stall-seconds``).
"""

import shutil
import threading
import time
from pathlib import Path

import pytest
from conftest import QuietHandler, StaticServer, rows, run_cli

HOST = "stuck.test"
ARTICLE = "".join(f"<p>Paragraph {i} of a post that answers at once, as a static blog's page does.</p>" for i in range(8))
needs_chromium = pytest.mark.skipif(not (shutil.which("chromium") or shutil.which("chromium-browser")),
                                    reason="no Chromium on this machine (Debian's chromium package): nothing to render with")


class HangingHandler(QuietHandler):
    """Answers every path but those of ``hang``, which it holds until the test lets them go."""

    hang: tuple[str, ...] = ()
    release = threading.Event()
    asked: list[str] = []

    def do_GET(self) -> None:
        HangingHandler.asked.append(self.path)
        if self.path.startswith(self.hang):
            self.release.wait(120)
            return
        super().do_GET()


def post(slug: str, title: str, day: int) -> str:
    return (f'<html lang="en"><head><title>{title}</title><meta property="og:type" content="article">'
            f'<meta property="article:published_time" content="2024-05-{day:02d}T10:00:00+00:00"></head>'
            f'<body><article><h1>{title}</h1>{ARTICLE}</article></body></html>')


def blog(root: Path, stuck: str, stuck_page: str | None) -> None:
    """Three posts in the feed: /p/one/, /p/two/ and ``stuck``'s (``stuck_page``, else a post as theirs)."""
    items = ""
    for slug, title, day in (("one", "Post one", 1), ("two", "Post two", 2), (stuck, "The stuck post", 3)):
        (root / "p" / slug).mkdir(parents=True)
        (root / "p" / slug / "index.html").write_text(stuck_page if slug == stuck and stuck_page else post(slug, title, day))
        items += (f"<item><title>{title}</title><link>http://{HOST}/p/{slug}/</link><guid>http://{HOST}/p/{slug}/</guid>"
                  f"<pubDate>Thu, {day:02d} May 2024 10:00:00 +0000</pubDate></item>")
    (root / "feed.xml").write_text(f'<?xml version="1.0"?><rss version="2.0"><channel><title>Stuck</title>'
                                   f'<link>http://{HOST}/</link>{items}</channel></rss>')
    (root / "index.html").write_text(
        '<html lang="en"><head><title>Stuck</title><link rel="alternate" type="application/rss+xml" href="/feed.xml">'
        '</head><body><h1>Stuck</h1><ul>' + "".join(f'<li><a href="/p/{s}/">{s}</a></li>' for s in ("one", "two", stuck))
        + "</ul></body></html>")


def crawl_stuck(tmp_path: Path, stuck: str, hang: tuple[str, ...], *options: str, stuck_page: str | None = None):
    site = tmp_path / "site"
    blog(site, stuck, stuck_page)
    HangingHandler.hang, HangingHandler.asked = hang, []
    HangingHandler.release.clear()
    db = tmp_path / "a.db"
    try:
        with StaticServer(site, HangingHandler) as server:
            started = time.monotonic()
            proc = run_cli("crawl", f"http://{HOST}/", "--db", str(db), "--map-host", f"{HOST}={server.base}",
                           "--stall-seconds", "4", *options, check=False, timeout=150)
            seconds = time.monotonic() - started
    finally:
        HangingHandler.release.set()
    return proc, db, seconds


def assert_stalled_and_the_rest_archived(proc, db: Path, stuck_url: str) -> None:
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Error: run 1 stalled" in proc.stderr
    (run,) = rows(db, "select * from crawl_runs")
    assert run["status"] == "stalled"
    stalled = rows(db, "select url, message from crawl_errors where kind = 'stalled'")
    assert [e["url"] for e in stalled] == [stuck_url]
    assert "no progress of the crawl for 4 s" in stalled[0]["message"]
    assert {p["url"] for p in rows(db, "select url from posts")} == {f"http://{HOST}/p/one/", f"http://{HOST}/p/two/"}


@pytest.mark.slow
@pytest.mark.parametrize("delay", [None, "0.2"], ids=["default delay", "delay 0.2"])
def test_a_page_that_never_answers_is_given_up_and_the_crawl_ends(tmp_path, delay):
    # the download's own time limit (30 s) is longer than the watchdog's here: the watchdog ends it
    proc, db, seconds = crawl_stuck(tmp_path, "hang", ("/p/hang/",), *(("--delay", delay) if delay else ()))
    assert_stalled_and_the_rest_archived(proc, db, f"http://{HOST}/p/hang/")
    assert seconds < 30


@needs_chromium
@pytest.mark.slow
def test_a_rendered_page_whose_request_never_answers_is_given_up_at_the_default_delay(tmp_path):
    # the shell boots a client-side renderer (crawler.judge.render), whose script asks for a file that never comes
    shell = ('<html lang="en"><head><title>Shell</title></head><body><div id="app"></div>'
             '<script>window.$docsify = {}; fetch("/never.md").then(r => r.text())'
             '.then(t => document.getElementById("app").textContent = t)</script></body></html>')
    proc, db, seconds = crawl_stuck(tmp_path, "shell", ("/never.md",), "--memory-mb", "1100", stuck_page=shell)
    assert_stalled_and_the_rest_archived(proc, db, f"http://{HOST}/p/shell/")
    assert "/never.md" in HangingHandler.asked  # asked by the browser, which the watchdog stopped waiting for
    # given up by the watchdog (4 s), before the browser's own time limit (15 s) would have ended it
    assert seconds < 45
