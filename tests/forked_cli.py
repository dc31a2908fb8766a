"""``blogarchive`` commands run in processes forked from one that has imported the command line.

A command's process spends 0.2 s of CPU importing sqlite-utils, click and the archive before it
does anything, and the suite runs hundreds of commands. ``ForkedCommands`` starts this module once
per pytest worker, as a process that imports ``archive.cli`` and waits; for each command it forks a
child that takes the command's arguments, working folder and environment, writes its output to
files, runs ``blogarchive`` as the console script does and exits as a process exits (its exit
handlers run, its files and databases are closed). Each command still runs in a process of its own,
fresh from the same imports: nothing one command does is seen by the next. ``run`` answers as
``subprocess.run(..., capture_output=True, text=True)`` does.

The forking process ends with the pytest process that started it (its stdin closed at exit).
Protocol: one JSON request a line on stdin ({"args", "cwd", "env", "out", "err"}); the answer is
one line with the child's pid, then one with its exit code (negative: the signal that ended it).
"""

import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOGARCHIVE = str(Path(sys.executable).with_name("blogarchive"))


class ForkedCommands:
    """The test side: one forking process, its commands one at a time (``run`` returns None when it is busy)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.lock = threading.Lock()
        self.count = 0
        self._start()
        atexit.register(self.close)

    def _start(self) -> None:
        self.env = _settled(os.environ)
        with (self.folder / "forked_cli.log").open("ab") as log:
            self.process = subprocess.Popen([sys.executable, __file__], cwd=ROOT, stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=log, text=True, bufsize=1)

    def _stop(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(10)
        self.process.stdout.close()

    def run(self, args: list[str], timeout: float) -> subprocess.CompletedProcess | None:
        """``blogarchive ARGS`` in a forked process, with this process's environment, in the project's
        folder; None when a command is running already, or the forking process is gone. A forking
        process started before the environment changed is replaced first (what its imports read is as
        it was then)."""
        if not self.lock.acquire(blocking=False):
            return None
        try:
            if self.process.poll() is not None:
                return None
            if _settled(os.environ) != self.env:
                self._stop()
                self._start()
            self.count += 1
            out, err = self.folder / f"{self.count}.out", self.folder / f"{self.count}.err"
            request = {"args": args, "cwd": str(ROOT), "env": dict(os.environ), "out": str(out), "err": str(err)}
            stdin, stdout = self.process.stdin, self.process.stdout
            assert stdin is not None and stdout is not None
            stdin.write(json.dumps(request) + "\n")
            pid = json.loads(stdout.readline())["pid"]
            answer: list[str] = []
            reader = threading.Thread(target=lambda: answer.append(stdout.readline()), daemon=True)
            reader.start()
            reader.join(timeout)
            if not answer:  # as subprocess.run does on a timeout: the command is killed
                os.kill(pid, signal.SIGKILL)
                reader.join()
                raise subprocess.TimeoutExpired([BLOGARCHIVE, *args], timeout, _read(out), _read(err))
            proc = subprocess.CompletedProcess([BLOGARCHIVE, *args], json.loads(answer[0])["code"], _read(out), _read(err))
            out.unlink()
            err.unlink()
            return proc
        finally:
            self.lock.release()


    def close(self) -> None:
        """End the forking process (at the end of the pytest process) and remove its folder."""
        self._stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def _settled(env: "os._Environ[str]") -> dict[str, str]:
    """The environment but for what pytest changes at each test (``PYTEST_CURRENT_TEST``)."""
    return {k: v for k, v in env.items() if k != "PYTEST_CURRENT_TEST"}


def _read(path: Path) -> str:
    """A file written by the command, read as ``text=True`` reads a pipe (the locale's encoding, universal newlines)."""
    with open(path, encoding=None, newline=None) as f:
        return f.read()


def serve() -> None:
    """The forking side: fork a child for each request, say its pid, wait for it, say its exit code."""
    import archive.cli  # noqa: F401  (the imports every command shares, made once)

    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _command(request)  # exits
        print(json.dumps({"pid": pid}), flush=True)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"code": os.waitstatus_to_exitcode(status)}), flush=True)


def _command(request: dict) -> None:
    """In the child: become ``blogarchive ARGS`` run by the console script, and exit as it would."""
    from archive.cli import cli

    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                            (2, request["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
        opened = os.open(path, flags, 0o644)
        os.dup2(opened, fd)
        os.close(opened)
    sys.argv = [BLOGARCHIVE, *request["args"]]
    sys.exit(cli())


if __name__ == "__main__":
    serve()
