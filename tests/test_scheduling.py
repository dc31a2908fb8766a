"""The crontab line and the systemd units in deploy/ work as written.

They are parsed, checked by ``systemd-analyze verify`` where it exists, and
their commands run, with only the install paths moved into a temporary
folder, against a test blog on 127.0.0.1.
"""

import configparser
import os
import shlex
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from blogserver import Blog, BlogServer
from conftest import BLOGARCHIVE, ROOT

DEPLOY = ROOT / "deploy"
DOCS = (ROOT / "docs" / "scheduling.md").read_text(encoding="utf-8")
INSTALLED = "/opt/blogarchive/bin/blogarchive"


def unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None, delimiters=("=",))
    parser.optionxform = str  # systemd keys are case-sensitive
    parser.read_string((DEPLOY / name).read_text(encoding="utf-8"))
    return parser


def crontab_line(command: str = "crawl") -> str:
    lines = [x for x in (DEPLOY / "crontab").read_text().splitlines() if x.strip() and not x.startswith("#")]
    (line,) = [x for x in lines if f"/blogarchive {command} " in x]
    return line


def moved(text: str, tmp: Path) -> str:
    """``text`` with the install paths moved under ``tmp``."""
    return (text.replace(INSTALLED, BLOGARCHIVE)
            .replace("/var/lib/blogarchive", str(tmp / "state"))
            .replace("/var/log/blogarchive", str(tmp / "log")))


@pytest.fixture
def installed(tmp_path):
    """A state folder whose archive has one source: a test blog on 127.0.0.1."""
    (tmp_path / "state").mkdir()
    (tmp_path / "log").mkdir()
    with BlogServer(Blog("placeholder", 3)) as server:
        server.blog = Blog(server.base.removeprefix("http://"), 3)
        subprocess.run([BLOGARCHIVE, "add", server.base + "/", "--db", str(tmp_path / "state" / "archive.db")],
                       check=True, capture_output=True)
        yield tmp_path, server


def posts(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("select count(*) from posts").fetchone()[0]
    finally:
        conn.close()


def test_service_unit_runs_a_quiet_crawl_that_may_meet_a_running_one():
    service = unit("blogarchive.service")["Service"]
    assert service["Type"] == "oneshot"
    argv = shlex.split(service["ExecStart"])
    assert argv[:3] == [INSTALLED, "crawl", "--quiet"]
    assert "--log-file" in argv
    assert service["SuccessExitStatus"] == "75"
    assert service["KillMode"] == "mixed"
    assert service["Environment"] == "BLOGARCHIVE_DB=/var/lib/blogarchive/archive.db"
    assert service["User"] == "blogarchive" and service["StateDirectory"] == "blogarchive"


def test_timer_unit_starts_it_every_three_hours():
    timer = unit("blogarchive.timer")
    assert timer["Timer"]["OnCalendar"] == "*-*-* 00/3:17:00"
    assert timer["Timer"]["Persistent"] == "true"
    assert timer["Install"]["WantedBy"] == "timers.target"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_units_pass_systemd_analyze_verify(tmp_path):
    for name in ("blogarchive.service", "blogarchive.timer"):
        (tmp_path / name).write_text((DEPLOY / name).read_text().replace(INSTALLED, BLOGARCHIVE))
    proc = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "blogarchive.service"),
                           str(tmp_path / "blogarchive.timer")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    calendar = subprocess.run(["systemd-analyze", "calendar", "*-*-* 00/3:17:00"], capture_output=True, text=True)
    assert "Next elapse:" in calendar.stdout


def test_crontab_line_is_in_the_docs_and_well_formed():
    line = crontab_line()
    assert line in DOCS
    minute, hour, dom, month, dow, command = line.split(None, 5)
    assert (minute, hour, dom, month, dow) == ("17", "*/3", "*", "*", "*")
    assert f"{INSTALLED} crawl --quiet" in command
    assert crontab_line("backup") in DOCS
    for name in ("blogarchive.service", "blogarchive.timer", "crontab"):
        assert f"deploy/{name}" in DOCS


def test_crontab_and_service_commands_crawl_the_archive(installed):
    tmp, server = installed
    env = {k: v for k, v in os.environ.items() if k != "BLOGARCHIVE_DB"}
    command = moved(crontab_line().split(None, 5)[5], tmp)
    cron = subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True, timeout=300)
    assert cron.returncode == 0, cron.stderr
    assert cron.stderr == "" and cron.stdout.startswith("run 1 finished: posts 3 new")
    assert posts(tmp / "state" / "archive.db") == 3
    # the service: its Environment= and ExecStart=, from its WorkingDirectory=
    service = unit("blogarchive.service")["Service"]
    key, _, value = moved(service["Environment"], tmp).partition("=")
    argv = shlex.split(moved(service["ExecStart"], tmp))
    run = subprocess.run(argv, env={**env, key: value}, cwd=moved(service["WorkingDirectory"], tmp),
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("run 2 finished: posts 0 new, 0 updated, 0 unchanged")
    log = (tmp / "log" / "crawl.log").read_text()
    assert log.count("Spider closed (finished)") == 2
    assert {h.status for h in server.take_hits() if h.path == "/"} == {200, 304}
    # the nightly backup, as cron runs it (which reads % as a newline unless escaped)
    (tmp / "state" / "backups").mkdir()
    backup = moved(crontab_line("backup").split(None, 5)[5], tmp).replace("\\%", "%")
    done = subprocess.run(["sh", "-c", backup], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    [copy] = (tmp / "state" / "backups").iterdir()
    assert posts(copy) == 3
