"""Every command agrees: one convention of exit codes (0 done, 1 failed, 2 usage, 75 busy), a missing
archive refused rather than created, a damaged one refused in one line, and help and output a person can read."""

import contextlib
import importlib.metadata
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from conftest import BLOGARCHIVE, ROOT, rows, run_cli

from archive import ensure_source, open_archive, save_alias, save_post, start_run
from archive.cli import cli
from archive.core.lock import acquire_lock, release_lock
from archive.tables.history import record_version

POST = "https://blog.test/2024/05/hello/"
BARE_POST = "http://blog.test/p/2"  # kept without a trailing slash, over http

# Every command that reads or changes an archive and never creates one ({tmp}: the test's folder).
READERS = [
    ["sources"],
    ["runs"],
    ["search", "hello"],
    ["history", POST],
    ["serve", "--port", "1"],
    ["export", "sql"],
    ["export", "csv", "--table", "posts"],
    ["export", "opml"],
    ["export", "epub", "-o", "{tmp}/out.epub"],
    ["source", "set", "blog.test", "delay=1"],
    ["reextract"],
    ["backup", "-o", "{tmp}/copy.db"],
    ["crawl", "--dry-run"],
    ["crawl"],  # a crawl of the archive's sources: none without an archive
]
CREATORS = [["crawl", "https://blog.test/"], ["add", "https://blog.test/"]]


@pytest.fixture(scope="module")
def small_archive(tmp_path_factory: pytest.TempPathFactory):
    """Forty posts of one blog in one unfinished run: two with a version, one with an alias."""
    path = tmp_path_factory.mktemp("small") / "small.db"
    db = open_archive(path)
    source = ensure_source(db, "https://blog.test/")
    run = start_run(db, [source["id"]])
    urls = [POST, BARE_POST, *(f"https://blog.test/p/{n}/" for n in range(3, 41))]
    for n, url in enumerate(urls, 1):
        text = f"Post number {n} says " + " ".join(f"word{n}x{i}" for i in range(300))
        save_post(db, {"source_id": source["id"], "url": url, "title": f"Hello {n}", "text": text, "markdown": text},
                  run_id=run)
    record_version(db, POST, run_id=None)
    record_version(db, BARE_POST, run_id=None)
    save_alias(db, "https://blog.test/?p=7", POST, "redirect")
    db.close()
    return path


def run_in(folder: Path, args: list[str], **env: str) -> subprocess.CompletedProcess:
    """``blogarchive ARGS`` run in ``folder``, with these environment variables."""
    return subprocess.run([BLOGARCHIVE, *args], capture_output=True, text=True, timeout=30, cwd=folder,
                          env={**os.environ, **env})


@pytest.mark.parametrize("args", READERS, ids=" ".join)
@pytest.mark.parametrize("given", ["option", "environment", "default"])
def test_a_missing_archive_is_refused_in_one_line_and_not_created(tmp_path, args, given):
    db = tmp_path / "typo.db"
    args = [a.format(tmp=tmp_path) for a in args]
    if given == "option":
        proc = run_in(tmp_path, [*args, "--db", str(db)])
        assert (proc.returncode, proc.stderr) == (2, f"Error: no archive at {db}\n")
    elif given == "environment":
        proc = run_in(tmp_path, args, BLOGARCHIVE_DB=str(db))
        assert (proc.returncode, proc.stderr) == (2, f"Error: no archive at {db} (from $BLOGARCHIVE_DB)\n")
    else:
        proc = run_in(tmp_path, args)
        assert (proc.returncode, proc.stderr) == (2, "Error: no archive at archive.db (give --db FILE or set $BLOGARCHIVE_DB)\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", READERS + CREATORS, ids=" ".join)
def test_the_same_usage_error_exits_2_from_every_command(tmp_path, args):
    args = [a.format(tmp=tmp_path) for a in args]
    proc = run_cli(*args, "--db", "/no/such/dir/a.db", check=False, timeout=30)
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith("Error: ") and "/no/such/dir" in line


@pytest.mark.parametrize("args", [["crawl", "https://blog.test/"], ["reextract"]], ids=" ".join)
def test_a_busy_archive_exits_75(small_archive, args):
    lock, _ = acquire_lock(small_archive)
    try:
        proc = run_cli(*args, "--db", str(small_archive), check=False, timeout=30)
    finally:
        release_lock(lock)
    assert proc.returncode == 75
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"Error: another crawl is running on {small_archive} (pid {os.getpid()}")


@pytest.mark.parametrize("args", [
    ["source", "set", "nope", "delay=1"],
    ["reextract", "--source", "nope"],
    ["export", "warc", "-o", "{tmp}/out.warc.gz", "--source", "nope"],
    ["export", "wacz", "-o", "{tmp}/out.wacz", "--source", "nope"],
    ["export", "epub", "-o", "{tmp}/out.epub", "--source", "nope"],
], ids=" ".join)
def test_an_unknown_source_is_the_same_usage_error_everywhere(small_archive, tmp_path, args):
    proc = run_cli(*[a.format(tmp=tmp_path) for a in args], "--db", str(small_archive), check=False)
    assert (proc.returncode, proc.stderr) == (2, "Error: no source named 'nope' (see blogarchive sources)\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [["add", "https://other.test/"], ["source", "set", "blog.test", "delay=2"]], ids=" ".join)
def test_an_archive_another_process_writes_to_is_busy_too(small_archive, tmp_path, args):
    db = tmp_path / "busy.db"
    shutil.copy(small_archive, db)
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("begin immediate")
        writer.execute("update sources set delay = 5")
        proc = run_cli(*args, "--db", str(db), check=False, timeout=30)
    finally:
        writer.close()
    assert (proc.returncode, proc.stderr) == (75, f"Error: {db} is busy: database is locked; try again\n")


def damage(archive: bytes, how: str) -> bytes:
    if how == "garbage":
        return b"not a database at all" * 500
    return archive[:len(archive) // 2]  # its header and schema intact, half its pages gone


@pytest.mark.parametrize("how", ["garbage", "truncated"])
@pytest.mark.parametrize("args", [a for a in READERS if a[0] != "export"], ids=" ".join)
def test_a_damaged_archive_is_one_line_from_every_command(small_archive, tmp_path, args, how):
    db = tmp_path / "damaged.db"
    db.write_bytes(damage(small_archive.read_bytes(), how))
    before = db.read_bytes()
    proc = run_cli(*[a.format(tmp=tmp_path) for a in args], "--db", str(db), check=False, timeout=30)
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith("Error: ") and str(db) in line, line
    assert db.read_bytes() == before


@pytest.mark.parametrize("how", ["garbage", "truncated"])
@pytest.mark.parametrize("args", [
    ["sql"], ["csv", "--table", "posts"], ["json", "--query", "select * from posts"], ["ndjson", "--table", "posts"],
    ["markdown"], ["warc"], ["wacz"], ["opml"], ["epub"],
], ids=lambda a: a[0])
def test_every_export_of_a_damaged_archive_is_one_line_and_leaves_no_file(small_archive, tmp_path, args, how):
    db = tmp_path / "damaged.db"
    db.write_bytes(damage(small_archive.read_bytes(), how))
    before = db.read_bytes()
    proc = run_cli("export", *args, "-o", str(tmp_path / "out"), "--db", str(db), check=False)
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"Error: cannot read the archive {db}: "), line
    assert [p.name for p in tmp_path.iterdir()] == ["damaged.db"]
    assert db.read_bytes() == before


@pytest.mark.parametrize("url", [
    POST,
    "http://blog.test/2024/05/hello/",
    "https://blog.test/2024/05/hello",
    "https://blog.test/2024/05/hello/?utm_source=feed&utm_medium=rss",
    "HTTP://Blog.Test/2024/05/hello?fbclid=abc#comments",
    "https://blog.test/?p=7",  # an alias: it redirected to the post
])
def test_history_finds_a_post_whatever_the_slash_scheme_or_tracking(small_archive, url):
    proc = run_cli("history", url, "--db", str(small_archive))
    assert proc.stdout.split("\t")[2:] == ["new", "Hello 1\n"]


def test_history_finds_a_post_kept_without_a_slash_over_http(small_archive):
    proc = run_cli("history", "https://blog.test/p/2/", "--db", str(small_archive))
    assert proc.stdout.split("\t")[2:] == ["new", "Hello 2\n"]


def test_history_of_no_post_still_fails(small_archive):
    proc = run_cli("history", "https://blog.test/p/999/", "--db", str(small_archive), check=False)
    assert (proc.returncode, proc.stderr) == (1, "Error: no post at https://blog.test/p/999/\n")


@pytest.mark.parametrize("url", ["http://[::1/p/1/", "blog.test/p/1/"])
def test_history_of_no_url_is_a_usage_error(small_archive, url):
    proc = run_cli("history", url, "--db", str(small_archive), check=False)
    assert (proc.returncode, proc.stderr) == (2, f"Error: not an http(s) URL: {url}\n")


def test_a_search_without_result_says_so(small_archive):
    proc = run_cli("search", "nowhere to be found", "--db", str(small_archive))
    assert (proc.stdout, proc.stderr) == ("", "no post matches 'nowhere to be found'\n")
    assert "Hello 3\t" in run_cli("search", "word3x7", "--db", str(small_archive)).stdout


def test_runs_prints_a_header(small_archive):
    header, run = run_cli("runs", "--db", str(small_archive)).stdout.splitlines()
    assert header.split("\t") == ["id", "started", "status", "new", "updated", "unchanged", "pages", "errors", "seconds"]
    assert run.split("\t")[0] == "1" and run.split("\t")[3] == "40"


def test_version():
    proc = run_cli("--version")
    assert proc.stdout == f"blogarchive, version {importlib.metadata.version('blogarchive')}\n"


def _commands(group: click.Group, path: list[str]):
    for name, command in group.commands.items():
        yield [*path, name]
        if isinstance(command, click.Group):
            yield from _commands(command, [*path, name])


@pytest.mark.parametrize("path", list(_commands(cli, [])), ids=" ".join)
def test_help_shows_no_raw_markup(path):
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0
    assert "``" not in result.output and "\b" not in result.output


def test_the_shell_completion_the_readme_gives_works():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'eval "$(_BLOGARCHIVE_COMPLETE=bash_source blogarchive)"' in readme
    env = {**os.environ, "_BLOGARCHIVE_COMPLETE": "bash_source"}
    proc = subprocess.run([BLOGARCHIVE], capture_output=True, text=True, env=env, timeout=30)
    assert "complete -o nosort -F _blogarchive_completion blogarchive" in proc.stdout
    words = {"COMP_WORDS": "blogarchive ex", "COMP_CWORD": "1", "_BLOGARCHIVE_COMPLETE": "bash_complete"}
    done = subprocess.run([BLOGARCHIVE], capture_output=True, text=True, env={**os.environ, **words}, timeout=30)
    assert done.stdout.split() == ["plain,export", "plain,extract"]


def invoke(*args: str) -> tuple[int, str, str]:
    """``blogarchive ARGS`` in this process: its exit code, output and errors."""
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("args", READERS + [["notify", "list"], ["notify", "add", "json://hooks.test/x"]], ids=" ".join)
def test_an_empty_file_is_no_archive_and_stays_empty(tmp_path, args):
    db = tmp_path / "empty.db"
    db.touch()
    code, _, errors = invoke(*[a.format(tmp=tmp_path) for a in args], "--db", str(db))
    assert (code, errors) == (2, f"Error: no archive at {db} (an empty file)\n")
    assert [p.name for p in tmp_path.iterdir()] == ["empty.db"] and db.stat().st_size == 0


def test_add_makes_an_empty_file_an_archive(tmp_path):
    db = tmp_path / "empty.db"
    db.touch()
    assert invoke("add", "https://blog.test/", "--db", str(db)) == (0, "source blog.test: https://blog.test/\n", "")
    assert invoke("sources", "--db", str(db))[1].startswith("blog.test\thttps://blog.test/\t")


READING = [
    ["sources"], ["runs"], ["search", "word3x7"], ["history", POST], ["notify", "list"],
    ["export", "sql"], ["export", "csv", "--table", "posts"], ["export", "json", "--query", "select url from posts"],
    ["export", "markdown", "-o", "{out}/md"], ["export", "opml"], ["export", "epub", "-o", "{out}/blog.epub"],
    ["export", "warc", "-o", "{out}/blog.warc.gz"], ["crawl", "--dry-run"],
]
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []


@pytest.fixture(scope="module")
def unwritable_archive(small_archive):
    """The small archive in a folder its reader cannot write (read as nobody when the tests run as root,
    whom no permission stops), beside a folder it can write its exports to."""
    base = Path(tempfile.mkdtemp(prefix="blogarchive-ro-"))
    (base / "ro").mkdir()
    (base / "out").mkdir()
    db = base / "ro" / "archive.db"
    shutil.copy(small_archive, db)
    db.chmod(0o444)
    for folder, mode in ((base, 0o755), (base / "ro", 0o555), (base / "out", 0o777)):
        folder.chmod(mode)
    yield db
    (base / "ro").chmod(0o755)
    shutil.rmtree(base)


@pytest.mark.parametrize("args", READING, ids=" ".join)
def test_reading_commands_read_an_archive_in_a_folder_the_user_cannot_write(unwritable_archive, args):
    db, out = unwritable_archive, unwritable_archive.parent.with_name("out")
    tried = subprocess.run([*NOBODY, "touch", str(db.parent / "x")], capture_output=True, text=True)
    assert tried.returncode == 1 and "Permission denied" in tried.stderr  # the folder is truly read-only to the reader
    before = db.read_bytes()
    proc = subprocess.run([*NOBODY, BLOGARCHIVE, *[a.format(out=out) for a in args], "--db", str(db)],
                          capture_output=True, text=True, timeout=60, cwd=out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout or "written to" in proc.stderr
    assert sorted(p.name for p in db.parent.iterdir()) == ["archive.db"] and db.read_bytes() == before


@contextlib.contextmanager
def committing(db: Path, every: float) -> Iterator[None]:
    """Another connection that writes to ``db`` as a crawl's writer does: a short transaction every ``every`` seconds."""
    stop = threading.Event()

    def write() -> None:
        conn = sqlite3.connect(db, isolation_level=None, timeout=30)
        while not stop.is_set():
            conn.execute("begin immediate")
            conn.execute("update crawl_runs set pages = coalesce(pages, 0) + 1")
            conn.execute("commit")
            time.sleep(every)
        conn.close()

    writer = threading.Thread(target=write)
    writer.start()
    try:
        yield
    finally:
        stop.set()
        writer.join()


APPRISE_IMGHDR = "ignore:'imghdr' is deprecated:DeprecationWarning"  # Apprise's e-mail plugin imports imghdr


@pytest.mark.filterwarnings(APPRISE_IMGHDR)
def test_settings_commands_wait_for_a_writer_that_commits_often(small_archive, tmp_path):
    db = tmp_path / "busy.db"
    shutil.copy(small_archive, db)
    with committing(db, every=0.002):
        done = [invoke("source", "set", "blog.test", f"delay={n}", "--db", str(db))[0] for n in range(40)]
        done += [invoke("notify", "add", f"json://hooks.test/{n}", "--db", str(db))[0] for n in range(10)]
        done += [invoke("add", f"https://blog{n}.test/", "--db", str(db))[0] for n in range(20)]
    assert done == [0] * 70
    assert rows(db, "select delay from sources where name = 'blog.test'") == [{"delay": 39.0}]
    assert len(rows(db, "select * from notify_state")) == 10 and len(rows(db, "select * from sources")) == 21


@pytest.mark.filterwarnings(APPRISE_IMGHDR)
@pytest.mark.parametrize("args", [["notify", "add", "json://hooks.test/x"], ["source", "set", "blog.test", "delay=5"]],
                         ids=" ".join)
def test_a_command_refused_as_busy_changes_nothing(small_archive, tmp_path, monkeypatch, args):
    db = tmp_path / "busy.db"
    shutil.copy(small_archive, db)
    monkeypatch.setattr("archive.core.db.BUSY_TIMEOUT_MS", 200)
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("begin immediate")
        code, _, errors = invoke(*args, "--db", str(db))
    finally:
        writer.close()
    assert (code, errors) == (75, f"Error: {db} is busy: database is locked; try again\n")
    assert not list(tmp_path.glob("*.json*"))  # no notification target kept
    assert rows(db, "select delay from sources") == [{"delay": None}]


@pytest.mark.parametrize("args", [["backup", "-o", "{ro}/copy.db"], ["export", "epub", "-o", "{ro}/blog.epub"],
                                  ["export", "sql", "-o", "{ro}/dump.sql"], ["export", "wacz", "-o", "{ro}/blog.wacz"]],
                         ids=lambda a: a[0] + " " + a[1])
def test_writing_into_a_folder_the_user_cannot_write_is_one_line(unwritable_archive, args):
    db = unwritable_archive
    args = [a.format(ro=db.parent) for a in args]
    proc = subprocess.run([*NOBODY, BLOGARCHIVE, *args, "--db", str(db)], capture_output=True, text=True, timeout=60,
                          cwd=db.parent)
    assert (proc.returncode, proc.stderr) == (1, f"Error: cannot write {args[-1]}: Permission denied\n")
    assert sorted(p.name for p in db.parent.iterdir()) == ["archive.db"]


def readme_rows() -> list[list[str]]:
    """The README's command table: each row's command cell and what it says."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return [line[2:].split("` | ", 1) for line in readme.splitlines() if line.startswith("| `blogarchive ")]


@pytest.mark.parametrize("path", [p for p in _commands(cli, []) if not isinstance(cli.commands[p[0]], click.Group) or len(p) > 1],
                         ids=" ".join)
def test_the_readme_table_gives_every_command_its_exit_codes(path):
    rows = [said for command, said in readme_rows() if " ".join(path) in command]
    assert rows, f"no row of the README's command table for {' '.join(path)}"
    for said in rows:
        codes = said.partition("Exit codes: ")[2]
        assert codes and codes.startswith("0") and set(re.findall(r"\b(\d+) ", codes)) <= {"0", "1", "2", "75"}, said[-300:]
