"""Stopping the tests stops them (issue 46): Ctrl-C, as a terminal sends it (SIGINT to the foreground
process group), ends pytest and every process its tests started within seconds, and leaves none behind.

``pytest -n 2`` runs tests/stopping_target.py, whose tests start the suite's servers through its own
helpers and fixtures and then wait, in a process group of its own. Every process under it, and every
process whose environment carries this test's mark (one that was reparented elsewhere), is recorded
until its servers are up; then the group gets SIGINT, and each recorded process must have ended, with
pytest, within ``LIMIT`` seconds. A process that ignores SIGINT and SIGTERM ends too, on a second Ctrl-C
at once, and on SIGTERM to pytest alone.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from conftest import ROOT
from reaper import GRACE

MARK = "BLOGARCHIVE_STOPPING_MARK"
LIMIT = 15  # seconds from SIGINT until pytest and every process it started have ended


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


class Watch:
    """The processes under ``root`` or marked with ``mark``, each recorded (pid and start time) when first seen."""

    def __init__(self, root: int, mark: str):
        self.root = root
        self.mark = f"{MARK}={mark}".encode()
        self.seen: dict[tuple[int, str], str] = {}

    def scan(self) -> None:
        table = {int(e): s for e in os.listdir("/proc") if e.isdigit() and (s := _stat(int(e))) is not None}
        live = {pid for pid, fields in table.items() if fields[0] not in "ZX"}
        children: dict[int, list[int]] = {}
        for pid, fields in table.items():
            children.setdefault(int(fields[1]), []).append(pid)
        found, todo = set(), [self.root]
        while todo:
            for child in children.get(todo.pop(), []):
                found.add(child)
                todo.append(child)
        for pid in live - found - {self.root}:  # pytest itself aside
            try:
                if self.mark in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                    found.add(pid)
            except OSError:
                continue
        for pid in found & live:
            self.seen.setdefault((pid, table[pid][19]), _command(pid))

    def running(self) -> dict[int, str]:
        """The recorded processes still running (not ended, not a zombie, not another that took the pid)."""
        left = {}
        for (pid, started), command in self.seen.items():
            fields = _stat(pid)
            if fields is not None and fields[19] == started and fields[0] not in "ZX":
                left[pid] = command
        return left

    def kill(self) -> None:
        for pid in self.running():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def run_then_stop(tmp_path: Path, selection: list[str], ready: set[str],
                  signals: list[str]) -> tuple[Watch, float, str]:
    """``pytest SELECTION`` on tests/stopping_target.py until its tests have said ``ready``; then
    ``signals`` a second apart ("INT": to its process group, as a terminal; "TERM": to pytest alone).
    Asserts that pytest and every process recorded have ended within ``LIMIT`` seconds of the first;
    returns the watch, the seconds until the last of its processes had ended, and pytest's output."""
    mark, folder = uuid.uuid4().hex, tmp_path / "ready"
    folder.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # not a worker of ours
    env.update({MARK: mark, "BLOGARCHIVE_STOPPING_READY": str(folder)})
    log = tmp_path / "pytest.log"
    inner = Path(tempfile.mkdtemp(prefix="stopping-"))  # short: MariaDB's socket path is 107 bytes at most
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--basetemp", str(inner),
                                 *selection, "tests/stopping_target.py"],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    watch = Watch(proc.pid, mark)
    try:
        deadline = time.monotonic() + 120
        while {p.name for p in folder.iterdir()} < ready:
            watch.scan()
            assert proc.poll() is None, "pytest ended before its servers were up:\n" + log.read_text()
            assert time.monotonic() < deadline, "its servers were not up in 120 s:\n" + log.read_text()
            time.sleep(0.2)
        for _ in range(5):  # what the tests' processes start as they settle
            watch.scan()
            time.sleep(0.1)
        started = time.monotonic()
        for n, name in enumerate(signals):
            if n:
                time.sleep(1)
            if name == "INT":
                os.killpg(proc.pid, signal.SIGINT)
            else:
                proc.send_signal(getattr(signal, f"SIG{name}"))
        emptied = None  # when the last of its processes ended
        while time.monotonic() - started < LIMIT and (proc.poll() is None or emptied is None):
            watch.scan()
            if emptied is None and not watch.running():
                emptied = time.monotonic() - started
            time.sleep(0.1)
        took = time.monotonic() - started
        left = watch.running()
        assert proc.poll() is not None and not left, (
            f"{took:.1f} s after {signals}: pytest {'ended' if proc.poll() is not None else 'still runs'}, "
            f"and {len(left)} of its processes still run: {sorted(left.values())}\n{log.read_text()}")
        print(f"{signals}: its {len(watch.seen)} processes ended in {emptied:.1f} s, pytest in {took:.1f} s")
        return watch, emptied, log.read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        watch.kill()
        shutil.rmtree(inner, ignore_errors=True)


def _why_not() -> str | None:
    from wordpress import missing

    absent = [c for c in ("redis-server", "redis-cli", "chromium", "chromedriver") if shutil.which(c) is None]
    return f"{', '.join(absent)} not installed (.ci/run installs them)" if absent else missing()


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_ctrl_c_ends_the_tests_and_every_server_they_started(tmp_path):
    why = _why_not()
    if why:
        pytest.skip(why)
    watch, _, output = run_then_stop(tmp_path, ["-n", "2", "--dist", "loadgroup", "-k", "not stubborn"],
                                     {"cluster", "wordpress"}, ["INT"])
    commands = "\n".join(watch.seen.values())
    for started in ("redis-server", "bin/scrapyd", "scrapyd.runner crawl", "blogarchive crawl", "scrapy crawl",
                    "crawler.extract.worker", "tests/forked_cli.py", "mariadbd", "php -d opcache.enable_cli=1 -S",
                    "chromedriver", "chromium"):
        assert started in commands, f"no {started} was started:\n{commands}"  # what the test stopped
    assert "KeyboardInterrupt" in output  # pytest said why it stopped


@pytest.mark.parametrize("signals", [["INT"], ["INT", "INT"], ["TERM"]], ids=["ctrl-c", "ctrl-c-twice", "sigterm"])
@pytest.mark.timeout(120)
def test_a_process_that_ignores_sigint_and_sigterm_ends_too(tmp_path, signals):
    """SIGTERM, then SIGKILL ``GRACE`` seconds later; at once on a second Ctrl-C (a second after the
    first); on SIGTERM to pytest alone (``kill PID``) as on Ctrl-C."""
    watch, emptied, _ = run_then_stop(tmp_path, ["-n", "1", "-k", "stubborn"], {"stubborn"}, signals)
    assert any("trap" in command for command in watch.seen.values())
    if len(signals) == 2:
        assert emptied < 1 + GRACE, emptied  # killed on the second, not after the grace
    else:
        assert emptied >= GRACE, emptied  # it had its grace
