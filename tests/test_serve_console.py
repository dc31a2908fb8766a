"""The console of a real ``blogarchive serve``: one line per problem. Loading the front and
database pages logs no SQL error (Datasette's table counts skip the contentless ``posts_grams``,
which cannot be scanned), a 404 is its access-log line and no traceback, and a port that another
server holds is refused before the "Serving ..." banner, with exit 2."""

import json
import socket
import subprocess
import time
import urllib.error
import urllib.request

from conftest import BLOGARCHIVE, EXPECTED, free_port


def served_console(db, paths: list[str]) -> tuple[str, dict[str, int], dict[str, bytes]]:
    """Serve ``db``, ask for each of ``paths``, stop: the console's output, each path's status and body."""
    port = free_port()
    proc = subprocess.Popen([BLOGARCHIVE, "serve", "--db", str(db), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base, statuses, bodies = f"http://127.0.0.1:{port}", {}, {}
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(base + "/-/versions.json", timeout=2)
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "datasette did not start"
                time.sleep(0.2)
        for path in paths:
            try:
                with urllib.request.urlopen(base + path, timeout=30) as r:
                    statuses[path], bodies[path] = r.status, r.read()
            except urllib.error.HTTPError as e:
                statuses[path] = e.code
        time.sleep(0.5)  # the access log's last lines
    finally:
        proc.terminate()
        output = proc.communicate(timeout=10)[0]
    return output, statuses, bodies


def test_front_page_loads_log_no_error_and_show_the_tables_counts(example_archive):
    db = example_archive.stem
    output, statuses, bodies = served_console(example_archive, ["/", f"/{db}", "/", f"/{db}.json"])
    assert set(statuses.values()) == {200}
    assert "ERROR" not in output and "posts_grams" not in output, output
    # every count known, Datasette shows them (one failed count hid them all)
    counts = {t["name"]: t["count"] for t in json.loads(bodies[f"/{db}.json"])["tables"]}
    assert counts["posts"] == len(EXPECTED["posts"]) and "posts_grams" not in counts


def test_a_404_is_one_line_not_a_traceback(example_archive):
    db = example_archive.stem
    output, statuses, _ = served_console(example_archive, ["/no-such-page", f"/{db}/no_such_table", f"/{db}/posts/999999"])
    assert set(statuses.values()) == {404}
    assert "Traceback" not in output and "│" not in output, output
    for path in statuses:
        assert len([line for line in output.splitlines() if path in line]) == 1, output


def test_a_taken_port_is_refused_before_the_banner_with_exit_2(example_archive):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run([BLOGARCHIVE, "serve", "--db", str(example_archive), "--port", str(port)],
                              capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "Serving" not in proc.stderr + proc.stdout
    assert proc.stderr.strip().splitlines() == [f"Error: port {port} on 127.0.0.1 is in use: stop what serves there "
                                                "or choose another --port"]
