"""What ``blogarchive crawl`` shows while it runs: on a terminal (a pseudo-terminal here), one live
line with the pages fetched of those known, those left, posts, errors, the rate and the time left,
the crawl's own messages above it; elsewhere, plain ``progress:`` lines; with ``--quiet``, nothing."""

import os
import pty
import re
import sqlite3
import subprocess

from conftest import BLOGARCHIVE, EXPECTED, ROOT
from mediablog import CDN, HOST, SiteServer, media_blog, media_cdn

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
LIVE = re.compile(r"(\d+) pages and (\d+) files of (\d+) known, (\d+) left, (\d+) posts saved, (\d+) errors, "
                  r"[\d.]+ a second, about \d+:\d\d:\d\d left")


def on_a_terminal(*args: str, columns: int = 220) -> tuple[int, str]:
    """``blogarchive ARGS`` with a pseudo-terminal of ``columns`` as its standard input, output and error."""
    ours, theirs = pty.openpty()
    proc = subprocess.Popen([BLOGARCHIVE, *args], stdin=theirs, stdout=theirs, stderr=theirs, cwd=ROOT,
                            env={**os.environ, "COLUMNS": str(columns), "TERM": "xterm"})
    os.close(theirs)
    out = b""
    while True:
        try:
            chunk = os.read(ours, 65536)
        except OSError:  # EIO: every end of the terminal is closed
            break
        if not chunk:
            break
        out += chunk
    os.close(ours)
    return proc.wait(timeout=120), out.decode("utf-8", "replace")


def crawl_args(site_server, db, *extra: str) -> list[str]:
    host = EXPECTED["host"]
    # a delay that makes the crawl last several seconds: several updates, a rate and a time left
    return ["crawl", f"http://{host}/", "--db", str(db), "--delay", "0.3", "--map-host", f"{host}={site_server.base}", *extra]


def test_on_a_terminal_a_live_line_says_how_far_the_crawl_is(site_server, tmp_path):
    code, out = on_a_terminal(*crawl_args(site_server, tmp_path / "a.db", "http://no-such-blog.invalid/"))
    assert code == 1, out[-2000:]  # the blog that does not resolve failed
    frames = [ANSI.sub("", f) for f in re.split(r"\r|\n", out)]
    shown = [m for f in frames if (m := LIVE.search(f))]
    assert shown, out[-2000:]
    assert len({m.group(0) for m in shown}) >= 2  # it moved
    pages, files, known, left, posts, errors = map(int, shown[-1].groups())
    assert known == pages + files + left and files == 0 and posts <= len(EXPECTED["posts"]) and errors <= 1
    assert "\x1b[2K" in out and "progress:" not in out  # a line drawn again in place, not plain lines
    # the crawl's own message, whole, on a line of its own above the display
    assert any(f.startswith("20") and "no-such-blog.invalid" in f and "its name does not resolve" in f for f in frames)
    assert re.search(r"^run 1 finished: posts 7 new", ANSI.sub("", out), re.M)

    code, out = on_a_terminal(*crawl_args(site_server, tmp_path / "a.db", "--quiet"))
    assert code == 0 and out.startswith("run 2 finished") and out.count("\n") == 1, out  # the summary alone


def test_elsewhere_plain_lines_with_the_pages_left(site_server, tmp_path):
    proc = subprocess.run([BLOGARCHIVE, *crawl_args(site_server, tmp_path / "a.db")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^progress: \d+ pages and 0 files fetched, \d+ posts saved, \d+ errors, \d+ requests queued$",
                     proc.stderr, re.M)
    assert "\x1b" not in proc.stderr + proc.stdout and "known pages" not in proc.stderr


def frames_of(out: str) -> list[str]:
    """What the terminal showed, one line drawn (again) a frame, without colours."""
    return [ANSI.sub("", f) for f in re.split(r"\r|\n", out)]


def test_at_80_columns_the_time_left_is_whole_and_a_resumed_run_says_so_above_the_line(site_server, tmp_path):
    db = tmp_path / "a.db"
    code, _ = on_a_terminal(*crawl_args(site_server, db, "--quiet"))
    assert code == 0
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("update crawl_runs set status = 'interrupted'")
    conn.close()
    code, out = on_a_terminal(*crawl_args(site_server, db, "--full"), columns=80)
    assert code == 0, out[-2000:]
    frames = frames_of(out)
    drawn = [f for f in frames if re.search(r"\d+ pages", f) and not f.startswith("run ")]
    assert drawn and all(len(f) < 80 and "…" not in f for f in drawn), drawn
    assert any(re.match(r"\S \d+:\d\d:\d\d left, \d+ pages, 0 files, \d+ to go, \d+ posts, \d+ errors$", f) for f in drawn), drawn
    assert "resuming run 1" not in out  # --full starts afresh
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("update crawl_runs set status = 'interrupted'")
    conn.close()
    code, out = on_a_terminal(*crawl_args(site_server, db), columns=80)
    assert code == 0, out[-2000:]
    resumed = [f for f in frames_of(out) if "resuming run 2" in f]
    assert resumed == ["resuming run 2, which was interrupted: the pages it fetched are read from the archive, not fetched "
                       "again"], resumed


def test_pages_and_files_are_counted_apart(tmp_path):
    db = tmp_path / "a.db"
    with SiteServer(media_blog()) as blog, SiteServer(media_cdn()) as cdn:
        code, out = on_a_terminal("crawl", f"http://{HOST}/", "--db", str(db), "--delay", "0.2",
                                  "--map-host", f"{HOST}={blog.base}", "--map-host", f"{CDN}={cdn.base}")
        hits = blog.take_hits() + cdn.take_hits()
    assert code == 0, out[-2000:]
    last = [m for f in frames_of(out) if (m := re.search(r"(\d+) pages and (\d+) files of (\d+) known, 0 left", f))][-1]
    pages, files, known = map(int, last.groups())
    answered = [h for h in hits if h.path.startswith(("/img/", "/c/")) and h.path != "/img/huge.png"]  # too large: cut off
    [run] = sqlite3.connect(db).execute("select pages, files from crawl_runs").fetchall()
    assert (files, (pages, files), known) == (len(answered), run, pages + files)
    assert re.search(rf"^run 1 finished: .*; {pages} pages, {files} files, ", ANSI.sub("", out), re.M)
