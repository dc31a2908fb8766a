"""Every process the tests start ends with the pytest process that started it: at its end, on its SIGINT
and SIGTERM, and at its exit (``install``, from tests/conftest.py, in the controller and in each
pytest-xdist worker).

The processes are found by descent, from /proc, rather than listed as they start: a test starts them in
many ways (``subprocess``, Selenium's chromedriver, a command forked by tests/forked_cli.py), and they
start more (Scrapyd its jobs, a crawl its scrapy process and extraction workers, Chromium its zygotes,
MariaDB's installer its server). Each pytest process is a child subreaper (``PR_SET_CHILD_SUBREAPER``),
so that a process whose parent has ended (Chromium's crash handler, a crawl's scrapy process once its
``blogarchive`` is killed, the servers of a worker that was killed) becomes its child rather than init's:
what it started stays in its tree, whatever session or process group each is in. Scrapyd nodes, MariaDB
and PHP's server lead sessions of their own, out of the terminal's reach: its Ctrl-C went only to the
processes of its foreground process group, and the others lived on when their fixture's teardown did not
run or waited (issue 46).

Ending them: SIGTERM to every one, then SIGKILL to those still there after ``GRACE`` seconds (or at
once, on a second Ctrl-C). A pytest process interrupted ends its tree first, then goes on as Python
would (SIGINT: KeyboardInterrupt, so that pytest reports; SIGTERM: ended by it); a signal that comes once
that is done ends it at once. The controller's tree holds its workers: it ends them with the rest.
"""

import atexit
import ctypes
import os
import signal
import threading
import time
from pathlib import Path
from types import FrameType

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
GRACE = 3.0  # seconds from SIGTERM to SIGKILL: MariaDB and Scrapyd shut down in one or two


def _processes() -> dict[int, tuple[str, int, int, int, str]]:
    """Every process: its state, parent, process group, session and start time (/proc/PID/stat)."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            table[int(entry)] = (fields[0], int(fields[1]), int(fields[2]), int(fields[3]), fields[19])
    return table


def descendants(root: int) -> dict[int, str]:
    """The live processes under ``root`` (zombies aside), with their start times: its children, theirs,
    and every member of a process group or session one of them leads (a member whose parent ended
    while it was reparented elsewhere)."""
    table = _processes()
    children: dict[int, set[int]] = {}
    led: dict[int, set[int]] = {}  # the members of the group or session a process leads
    for pid, (_, parent, group, session, _) in table.items():
        children.setdefault(parent, set()).add(pid)
        for leader in {group, session} - {pid}:
            led.setdefault(leader, set()).add(pid)
    own = table.get(root)
    for outside in (root, *(own[2:4] if own else ())):  # our own group and session (a pipe's other end): not ours
        led.pop(outside, None)
    found: set[int] = set()
    todo = [root]
    while todo:
        pid = todo.pop()
        for member in children.get(pid, set()) | led.get(pid, set()):
            if member not in found and member != root:
                found.add(member)
                todo.append(member)
    return {pid: table[pid][4] for pid in found if table[pid][0] not in "ZX"}


def _running(pid: int, started: str) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[19] == started and fields[0] not in "ZX"


def _send(pid: int, started: str, signum: int) -> None:
    if _running(pid, started):  # not another process that took its pid since
        try:
            os.kill(pid, signum)
        except OSError:
            pass


class Reaper:
    """This process's tree, ended on demand, on SIGINT and SIGTERM, and at exit."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.ending = False  # ending the tree now
        self.hurry = False  # a second Ctrl-C: SIGKILL at once
        self.then: int | None = None  # the signal to end this process by, once its tree has ended
        self.interrupted = False  # the tree ended on a signal: this process is on its way out

    def end_tree(self, grace: float = GRACE) -> None:
        """End every process under this one: SIGTERM, then SIGKILL after ``grace`` seconds (at once
        on a second Ctrl-C meanwhile); return once they have all ended (10 s at most after SIGKILL)."""
        outer, self.ending = not self.ending, True
        try:
            seen: dict[int, str] = {}
            deadline, killed = time.monotonic() + grace, None
            while True:
                for pid, started in descendants(self.pid).items():  # again and again: orphans come to us
                    if pid not in seen:
                        seen[pid] = started
                        _send(pid, started, signal.SIGKILL if killed else signal.SIGTERM)
                left = {pid: started for pid, started in seen.items() if _running(pid, started)}
                if not left:
                    return
                now = time.monotonic()
                if killed is None and (now >= deadline or self.hurry):
                    killed = now
                if killed is not None:
                    if now - killed > 10:
                        return
                    for pid, started in left.items():
                        _send(pid, started, signal.SIGKILL)
                time.sleep(0.05)
        finally:
            if outer:
                self.ending = False

    def on_signal(self, signum: int, frame: FrameType | None) -> None:
        if os.getpid() != self.pid:  # a child forked from this process, its handlers inherited: as Python would
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        if self.ending:  # the tree is being ended: a second Ctrl-C hurries it, a SIGTERM is obeyed after
            if signum == signal.SIGINT:
                self.hurry = True
            else:
                self.then = signum
            return
        if self.interrupted:  # on its way out after the first signal (pytest reporting, fixtures torn down): now
            self.hurry = True
            self.end_tree(0)
            os._exit(128 + signum)
        self.end_tree()
        self.interrupted = True
        signum = self.then or signum
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        signal.signal(signum, signal.SIG_DFL)
        os.kill(self.pid, signum)

    def at_exit(self) -> None:
        if os.getpid() == self.pid:  # not a child forked from this process
            self.end_tree()


_reaper: Reaper | None = None


def install() -> Reaper:
    """Make this process a subreaper whose tree ends with it, on SIGINT and SIGTERM and at exit; once
    a process (later calls return the same)."""
    global _reaper
    if _reaper is None or _reaper.pid != os.getpid():
        _reaper = Reaper()
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, _reaper.on_signal)
        atexit.register(_reaper.at_exit)
    return _reaper
