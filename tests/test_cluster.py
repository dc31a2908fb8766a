"""``blogarchive crawl --cluster``: two real Scrapyd nodes and a real redis-server on 127.0.0.1.

The project is deployed to each node with scrapyd-deploy (as test_scrapyd does); the six
test blogs crawled by the cluster give the archive one process gives (``archive_rows`` of
test_processes.py), whatever dies on the way.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from blogsite import RouteServer
from conftest import ROOT, proc_stat, rows, run_cli, running
from test_processes import archive_rows, posts_saved, six_blog_servers, six_blogs, summary_counts
from test_scrapyd import free_port, get_json

BIN = Path(sys.executable).parent
REDIS_SERVER = shutil.which("redis-server")
pytestmark = [
    pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed (.ci/run installs it)"),
    pytest.mark.timeout(900),  # two Scrapyd nodes, six blogs, a lease or two to run out, on two shared cores
]


class Redis:
    """A redis-server on a free port, without persistence, that can be stopped and started again."""

    def __init__(self, home: Path):
        self.home = home
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen([REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no", "--dir", str(self.home)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while subprocess.run(["redis-cli", "-p", str(self.port), "ping"], capture_output=True,
                             text=True).stdout.strip() != "PONG":
            assert time.monotonic() < deadline and self.proc.poll() is None, "redis-server did not start"
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(20)
            self.proc = None


class Node:
    """A Scrapyd node on a free port with the project deployed to it, that can be killed and started again."""

    def __init__(self, home: Path, project: Path):
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        home.mkdir()
        (home / "scrapyd.conf").write_text(
            f"[scrapyd]\nbind_address = 127.0.0.1\nhttp_port = {self.port}\neggs_dir = {home}/eggs\n"
            f"logs_dir = {home}/logs\ndbs_dir = {home}/dbs\nitems_dir =\npoll_interval = 0.5\n")
        self.start()
        config = (project / "scrapy.cfg.in").read_text().replace("http://127.0.0.1:6800/", self.url + "/")
        (project / "scrapy.cfg").write_text(config)
        deploy = subprocess.run([str(BIN / "scrapyd-deploy")], cwd=project, capture_output=True, text=True, timeout=120)
        assert deploy.returncode == 0, deploy.stderr

    def start(self) -> None:
        """Start scrapyd on the node's port (the project deployed before is in its eggs folder)."""
        self.proc = subprocess.Popen([str(BIN / "scrapyd")], cwd=self.home, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 30
        while True:
            try:
                assert get_json(self.url + "/daemonstatus.json")["status"] == "ok"
                break
            except OSError:
                assert self.proc.poll() is None and time.monotonic() < deadline, "scrapyd did not start"
                time.sleep(0.2)

    def job_counts(self) -> dict[str, int]:
        """How many jobs this node holds in each state: pending, running, finished."""
        listed = get_json(self.url + "/listjobs.json?project=blogarchive")
        return {state: len(listed[state]) for state in ("pending", "running", "finished")}

    def finished(self) -> dict[str, Path]:
        """The jobs this node has finished, by id, with their log files."""
        listed = get_json(self.url + "/listjobs.json?project=blogarchive")["finished"]
        return {job["id"]: self.home / "logs" / "blogarchive" / "blog" / f"{job['id']}.log" for job in listed}

    def jobs(self) -> list[int]:
        """The pids of the crawl processes this node runs."""
        return [int(p) for p in subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True,
                                               text=True).stdout.split()]

    def kill(self) -> None:
        """kill -9 the node and every job it runs."""
        for pid in self.jobs():
            subprocess.run(["kill", "-9", str(pid)])
        self.proc.kill()
        self.proc.wait()

    def restart(self) -> None:
        """A killed node started again, without the jobs it had queued."""
        shutil.rmtree(self.home / "dbs", ignore_errors=True)
        self.start()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """The project as scrapyd-deploy builds it (it writes a setup.py beside scrapy.cfg)."""
    project = tmp_path_factory.mktemp("project")
    for package in ("crawler", "archive"):
        shutil.copytree(ROOT / package, project / package, ignore=shutil.ignore_patterns("__pycache__"))
    (project / "scrapy.cfg.in").write_text((ROOT / "scrapy.cfg").read_text())
    return project


@pytest.fixture(scope="module")
def engines(tmp_path_factory, project):
    """A redis-server and two Scrapyd nodes, started and deployed to once for the module's tests."""
    home = tmp_path_factory.mktemp("cluster")
    redis = Redis(home)
    redis.start()
    nodes = [Node(home / f"node{n}", project) for n in (1, 2)]
    yield redis, nodes
    for node in nodes:
        node.stop()
    redis.stop()


@pytest.fixture
def cluster(tmp_path, engines):
    """The module's redis-server and two Scrapyd nodes, running again if a test before stopped or killed
    them; the configuration file that names them, and first a node that cannot be reached (nothing
    listens on its port): its jobs go to the others. Leases are short, so that a test whose job died
    or stalled waits seconds for its host to go to another job."""
    redis, nodes = engines
    if redis.proc is None:
        redis.start()
    for node in nodes:
        if node.proc.poll() is not None:
            node.restart()
    urls = [f"http://127.0.0.1:{free_port()}"] + [n.url for n in nodes]
    config = tmp_path / "cluster.toml"
    config.write_text(f'redis = "{redis.url}"\nnodes = {json.dumps(urls)}\nlease = 8\nstart = 20\n')
    return config, redis, nodes


@pytest.fixture(scope="module")
def one_process(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    db = tmp_path_factory.mktemp("one") / "archive.db"
    with six_blogs() as (urls, options):
        return db, run_cli("crawl", *urls, *options, "--delay", "0", "--db", str(db))


def one_job_at_a_time(servers: list[RouteServer]) -> dict[int, int]:
    """Assert that no two processes fetched from one blog's server at once (from its request log);
    return how many processes fetched from each server."""
    processes = {}
    for server in servers:
        spans: dict[int | None, list[float]] = {}
        for request in server.requests:
            spans.setdefault(request.pid, [request.at, request.at])[1] = request.at
        assert None not in spans, "a request whose process was not found"
        ordered = sorted(spans.values())
        for before, after in zip(ordered, ordered[1:]):
            assert before[1] < after[0], f"two processes fetched from {server.base} at once: {spans}"
        processes[server.port] = len(spans)
    return processes


@pytest.mark.slow
def test_two_nodes_archive_what_one_process_archives(cluster, one_process, tmp_path):
    config, _, nodes = cluster
    db = tmp_path / "archive.db"
    before, logs_before = [node.job_counts() for node in nodes], [node.finished() for node in nodes]
    with six_blog_servers() as (urls, options, servers):
        proc = run_cli("crawl", *urls, *options, "--delay", "0", "--db", str(db), "--cluster", str(config))
    assert set(one_job_at_a_time(servers).values()) == {1}  # one job per host, and it ran once
    assert summary_counts(proc.stdout) == summary_counts(one_process[1].stdout)
    one, two = archive_rows(one_process[0]), archive_rows(db)
    for table in one:
        assert two[table] == one[table], table
    assert [r["status"] for r in rows(db, "select status from crawl_runs")] == ["finished"]
    # (a job's process may still be ending, listed as running, when the coordinator has ingested its end)
    after = [node.job_counts() for node in nodes]
    assert all(now["finished"] > then["finished"] for now, then in zip(after, before))  # both worked
    given = sum(sum(now.values()) - sum(then.values()) for now, then in zip(after, before))
    assert given == len(servers)  # one job a host: none turned away by a node running another
    # each job's log on its node says, at the project's INFO level, what it did and why it ended, whatever the
    # level of the coordinator's own output (WARNING here)
    deadline = time.monotonic() + 60
    while len(logs := {job: log for node, was in zip(nodes, logs_before)
                       for job, log in node.finished().items() if job not in was}) < len(servers):
        assert time.monotonic() < deadline, "a job of the run is not finished a minute after the run"
        time.sleep(0.5)
    for log in logs.values():
        text = log.read_text(encoding="utf-8")
        assert "INFO: Spider opened" in text and "INFO: Spider closed (finished)" in text, text[-2000:]


@pytest.mark.slow
def test_redis_stopped_is_one_line_exit_2_and_the_archive_unchanged(cluster, one_process, tmp_path):
    config, redis, _ = cluster
    db = tmp_path / "archive.db"
    db.write_bytes(one_process[0].read_bytes())
    before = db.read_bytes()
    redis.stop()
    with six_blogs() as (urls, options):
        proc = run_cli("crawl", *urls, *options, "--db", str(db), "--cluster", str(config), check=False)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Redis" in proc.stderr
    assert db.read_bytes() == before


@pytest.mark.slow
def test_a_node_killed_mid_crawl_its_jobs_finish_on_the_other(cluster, one_process, tmp_path):
    config, _, nodes = cluster
    db = tmp_path / "archive.db"
    with six_blog_servers() as (urls, options, servers):
        proc = subprocess.Popen([str(BIN / "blogarchive"), "crawl", *urls, *options, "--delay", "0.2", "--db", str(db),
                                 "--cluster", str(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 90
        while not (posts_saved(db) and nodes[0].jobs()):
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        nodes[0].kill()
        stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert max(one_job_at_a_time(servers).values()) == 2  # a killed job's host was crawled again, after it
    one, two = archive_rows(one_process[0]), archive_rows(db)
    for table in ("posts", "post_versions", "post_aliases"):
        assert two[table] == one[table], table


@pytest.mark.slow
def test_the_coordinator_killed_mid_ingest_then_restarted_loses_and_doubles_nothing(cluster, one_process, tmp_path):
    config, _, _ = cluster
    db = tmp_path / "archive.db"
    with six_blogs() as (urls, options):
        proc = subprocess.Popen([str(BIN / "blogarchive"), "crawl", *urls, *options, "--delay", "0.2", "--db", str(db),
                                 "--cluster", str(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 90
        while not posts_saved(db):
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        assert 0 < posts_saved(db) < 47
        again = run_cli("crawl", *options, "--delay", "0", "--db", str(db), "--cluster", str(config))
    assert "finished" in again.stdout
    assert [r["status"] for r in rows(db, "select status from crawl_runs")] == ["finished"]
    one, two = archive_rows(one_process[0]), archive_rows(db)
    for table in one:
        assert two[table] == one[table], table
    assert rows(db, "select count(*) as n from post_versions")[0]["n"] == 47


@pytest.mark.slow
def test_a_job_stalled_past_its_lease_never_fetches_from_its_host_again(cluster, one_process, tmp_path):
    """A job stopped (SIGSTOP) until its lease ran out and its host went to a new job, then let go
    on (SIGCONT), sends no request more: the server's log shows one process at a time per host."""
    config, _, nodes = cluster
    db = tmp_path / "archive.db"
    with six_blog_servers() as (urls, options, servers):
        proc = subprocess.Popen([str(BIN / "blogarchive"), "crawl", *urls, *options, "--delay", "0.2", "--db", str(db),
                                 "--cluster", str(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 90
        while not (posts_saved(db) and (jobs := nodes[0].jobs())
                   and (server := next((s for s in servers if jobs[0] in {r.pid for r in s.requests}), None))):
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        stalled = jobs[0]
        started = proc_stat(stalled)[19]
        os.kill(stalled, signal.SIGSTOP)
        deadline = time.monotonic() + 180
        while not {r.pid for r in server.requests} - {stalled}:  # the host's next job has begun
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        os.kill(stalled, signal.SIGCONT)
        # 38 s alone; 60 s and more in a full run on two cores, where its process waits for a core
        deadline = time.monotonic() + 150
        while running(stalled, started):  # it stops, and its server is still there to log what it sends
            assert time.monotonic() < deadline, "the stalled job goes on"
            time.sleep(0.2)
        stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert one_job_at_a_time([server]) == {server.port: 2}
    one, two = archive_rows(one_process[0]), archive_rows(db)
    for table in ("posts", "post_versions", "post_aliases"):
        assert two[table] == one[table], table


def test_a_killed_job_s_plan_folder_is_removed_by_the_next_job(tmp_path):
    from crawler.store.cluster_writer import FOLDER_PREFIX, sweep_stale_folders

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()  # a process that has ended
    (tmp_path / f"{FOLDER_PREFIX}{gone}-abc123").mkdir()
    (tmp_path / f"{FOLDER_PREFIX}{gone}-abc123" / "plan.db").write_bytes(b"x")
    (tmp_path / f"{FOLDER_PREFIX}{os.getpid()}-def456").mkdir()  # a running job's
    (tmp_path / f"{FOLDER_PREFIX}ghi789").mkdir()  # not named after a process: left alone
    assert sweep_stale_folders(str(tmp_path)) == [str(tmp_path / f"{FOLDER_PREFIX}{gone}-abc123")]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{FOLDER_PREFIX}{os.getpid()}-def456", f"{FOLDER_PREFIX}ghi789"]
