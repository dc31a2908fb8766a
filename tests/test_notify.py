"""Notifications: real Apprise telling a local JSON webhook and a local SMTP server what a crawl changed.

A test blog is crawled, four targets are added (a webhook told of every change, one told of
retractions only, a mailbox told by a digest a run, and a webhook that is down), the blog adds,
edits, retracts and deletes posts, and a crawl tells each what it should, once; the dead webhook,
up again, is told it all on the next run. The secrets of the targets' URLs appear in no output,
log, export, backup summary or Datasette page.
"""

import contextlib
import http.server
import json
import os
import stat
import threading
import time
import urllib.request
import warnings
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from email import message_from_bytes
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from blogserver import Blog, BlogServer
from conftest import free_port, rows, run_cli, serving
from test_incremental import crawl

from archive import open_archive
from archive.notify import deliver, redact, redact_text

SECRETS = ("s3cretPassw0rd", "s3cretPathTok", "s3cretHeaderTok", "s3cretDeadTok")
RETRACTION = "This post has been retracted: its figures were wrong."
EDIT = "An added paragraph with a few more words that the author thought of later on."


class Webhook(http.server.ThreadingHTTPServer):
    """Records each JSON document POSTed to it, by path."""

    def __init__(self, port: int = 0) -> None:
        self.received: list[tuple[str, dict]] = []
        super().__init__(("127.0.0.1", port), WebhookHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return self.server_address[1]

    def messages(self, path: str) -> list[dict]:
        return [json.loads(doc["message"]) for p, doc in self.received if p == path]

    def close(self) -> None:
        self.shutdown()
        self.server_close()


class WebhookHandler(http.server.BaseHTTPRequestHandler):
    server: Webhook

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.received.append((self.path, json.loads(body)))
        self.send_response(200)
        self.end_headers()


class Mailbox:
    def __init__(self) -> None:
        self.messages: list = []

    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        self.messages.append(message_from_bytes(envelope.content))  # type: ignore[attr-defined]
        return "250 OK"


@contextlib.contextmanager
def smtp_server() -> Iterator[tuple[Mailbox, int]]:
    mailbox, port = Mailbox(), free_port()
    controller = Controller(mailbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield mailbox, port
    finally:
        controller.stop()


def deliver_a_day_later(db: Path) -> None:
    """The library's delivery as a run 25 hours on would call it."""
    archive_db = open_archive(db)
    try:
        with warnings.catch_warnings():  # Apprise's e-mail plugin imports imghdr, deprecated (an error here)
            warnings.simplefilter("ignore", DeprecationWarning)
            assert all(d.error is None for d in deliver(archive_db, db, now=datetime.now(timezone.utc) + timedelta(hours=25)))
    finally:
        archive_db.close()


def retract(blog: Blog, slug: str) -> None:
    post = blog.post(slug)
    post.text = RETRACTION
    post.updated = post.modified = datetime.now(timezone.utc).replace(microsecond=0)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    tmp = tmp_path_factory.mktemp("notify")
    db = tmp / "archive.db"
    blog = Blog("notify.test", 4)
    outputs: list[str] = []
    out: dict = {"db": db, "tmp": tmp, "outputs": outputs, "log": tmp / "crawl.log"}
    dead_port = free_port()
    with BlogServer(blog) as server, smtp_server() as (mailbox, smtp_port):
        webhook = Webhook()
        servers = {blog.host: server}
        crawl(db, servers)
        every = f"json://reader:{SECRETS[0]}@127.0.0.1:{webhook.port}/every/{SECRETS[1]}?+X-Token={SECRETS[2]}"
        out["targets"] = [
            every,
            f"json://127.0.0.1:{webhook.port}/retractions --min-grade retraction",
            f"mailto://127.0.0.1:{smtp_port}?from=archive@example.com&to=reader@example.com&mode=insecure --digest run",
            f"json://127.0.0.1:{dead_port}/dead/{SECRETS[3]}",
            f"json://127.0.0.1:{webhook.port}/daily --digest daily",
        ]
        for target in out["targets"]:
            url, *options = target.split(" ")
            outputs.append(run_cli("notify", "add", url, *options, "--db", str(db)).stdout)
        outputs.append(run_cli("notify", "list", "--db", str(db)).stdout)
        out["config_mode"] = stat.S_IMODE(os.stat(f"{db}.notify.json").st_mode)
        time.sleep(1)  # an edit comes at least a second after the last check (dates have second precision)
        new = blog.add(5)
        blog.edit("post-1", EDIT)
        retract(blog, "post-2")
        blog.delete("post-3")
        out["urls"] = {slug: f"http://notify.test/p/{p}/" for slug, p in
                       (("new", new.slug), ("edited", "post-1"), ("retracted", "post-2"), ("deleted", "post-3"))}
        proc = crawl(db, servers, "--log-file", str(out["log"]))
        out["crawl"] = proc
        out["every"], out["retractions"] = webhook.messages("/every/" + SECRETS[1]), webhook.messages("/retractions")
        out["mail"] = list(mailbox.messages)
        out["state"] = {r["target"]: r for r in rows(db, "select * from notify_state")}
        out["daily"] = webhook.messages("/daily")
        out["dead_up"] = Webhook(dead_port)  # the dead webhook answers now: the next run tells it all
        webhook.received.clear()
        blog.edit("post-4", EDIT)
        out["next"] = crawl(db, servers)
        out["after_retry"] = out["dead_up"].messages("/dead/" + SECRETS[3])
        out["next_every"] = webhook.messages("/every/" + SECRETS[1])
        out["next_daily"] = webhook.messages("/daily")
        deliver_a_day_later(db)
        out["day_later"] = webhook.messages("/daily")
        webhook.received.clear()
        out["test"] = run_cli("notify", "test", "--db", str(db))
        out["tested"] = webhook.messages("/every/" + SECRETS[1])
        out["list"] = run_cli("notify", "list", "--db", str(db)).stdout
        dead_id = next(line.split("\t")[0] for line in out["list"].splitlines() if f":{dead_port}/" in line)
        out["removed"] = run_cli("notify", "remove", dead_id, "--db", str(db)).stdout
        out["list_after"] = run_cli("notify", "list", "--db", str(db)).stdout
        out["dead_port"] = dead_port
        webhook.close()
        out["dead_up"].close()
    outputs += [proc.stdout, proc.stderr, out["next"].stdout, out["next"].stderr, out["test"].stdout,
                out["test"].stderr, out["list"], out["removed"], out["list_after"]]
    yield out


def test_each_change_told_once_to_the_webhook(scenario: dict) -> None:
    told = {m["url"]: m for m in scenario["every"]}
    assert len(scenario["every"]) == len(told) == 4, scenario["every"]
    urls = scenario["urls"]
    assert {u: told[u]["grade"] for u in told} == {urls["new"]: "new", urls["edited"]: "edit",
                                                    urls["retracted"]: "retraction", urls["deleted"]: "gone"}
    edited = told[urls["edited"]]
    assert edited["title"] == "Post number 1 on notify.test"
    assert "{+" in edited["diff"] and "added paragraph" in edited["diff"]
    assert 0 < edited["changed_share"] < 0.5
    (version,) = rows(scenario["db"], "select v.id from post_versions v join posts p on p.id = v.post_id"
                                      " where p.url = ? order by v.id desc limit 1", (urls["edited"],))
    assert edited["version_id"] == version["id"]
    assert told[urls["deleted"]]["version_id"] is None
    (edit,) = scenario["next_every"]  # the next run: its one change, the others told once
    assert (edit["url"], edit["grade"]) == ("http://notify.test/p/post-4/", "edit")


def test_min_grade_keeps_what_is_asked_and_events(scenario: dict) -> None:
    urls = scenario["urls"]
    assert sorted(m["url"] for m in scenario["retractions"]) == sorted([urls["new"], urls["retracted"], urls["deleted"]])


def test_digest_is_one_mail_a_run(scenario: dict) -> None:
    (mail,) = scenario["mail"]
    assert mail["Subject"] == "blogarchive: 4 changes"
    (body,) = [part.get_payload(decode=True).decode() for part in mail.walk() if part.get_content_type() == "text/plain"]
    assert all(url in body for url in scenario["urls"].values())
    assert "retraction: Post number 2 on notify.test" in body


def test_daily_digest_waits_a_day(scenario: dict) -> None:
    (first,) = scenario["daily"]
    assert first["digest"] == "daily"
    assert sorted(c["url"] for c in first["changes"]) == sorted(scenario["urls"].values())
    assert scenario["next_daily"] == []  # the next run, within the day: the change waits
    (later,) = scenario["day_later"]
    assert [c["url"] for c in later["changes"]] == ["http://notify.test/p/post-4/"]


def test_list_shows_targets_redacted_and_remove(scenario: dict) -> None:
    port = scenario["dead_port"]
    listed = scenario["list"].splitlines()
    assert len(listed) == 1 + 5
    (dead,) = [line for line in listed if f":{port}/" in line]
    assert f"json://127.0.0.1:{port}/…" in dead and dead.endswith("-")  # retried: no error left
    assert "removed" in scenario["removed"]
    assert len(scenario["list_after"].splitlines()) == 1 + 4 and f":{port}/" not in scenario["list_after"]


def test_failing_target_never_fails_the_crawl_and_is_retried(scenario: dict) -> None:
    proc = scenario["crawl"]
    assert proc.returncode == 0
    warnings = [line for line in proc.stderr.splitlines() if "notification" in line]
    assert len(warnings) == 1 and "retried on the next run" in warnings[0]
    states = list(scenario["state"].values())
    assert sum(1 for s in states if s["last_error"]) == 1
    told = sorted(m["url"] for m in scenario["after_retry"])
    assert told == sorted([*scenario["urls"].values(), "http://notify.test/p/post-4/"])
    assert "notification" not in scenario["next"].stderr


def test_notify_test_sends_a_sample(scenario: dict) -> None:
    assert scenario["test"].returncode == 0, scenario["test"].stdout
    assert scenario["test"].stdout.count(": sent") == 5
    (sample,) = scenario["tested"]
    assert sample["test"] is True and sample["version_id"]


def test_targets_kept_for_the_owner_only(scenario: dict) -> None:
    assert scenario["config_mode"] == 0o600


def test_secrets_appear_nowhere(scenario: dict, tmp_path: Path) -> None:
    db = scenario["db"]
    seen = list(scenario["outputs"])
    seen.append(scenario["log"].read_text())
    tables = [r["name"] for r in rows(db, "select name from sqlite_master where type = 'table'"
                                        " and sql not like 'create virtual%'")]
    assert "notify_state" in tables
    for table in tables:
        for fmt in ("json", "csv"):  # json fails on a table with a blob (captures): what it printed is read
            proc = run_cli("export", fmt, "--table", table, "--db", str(db), check=fmt == "csv")
            seen += [proc.stdout, proc.stderr]
    proc = run_cli("export", "sql", "--db", str(db))
    seen += [proc.stdout, proc.stderr]
    copy = tmp_path / "copy.db"
    proc = run_cli("backup", "-o", str(copy), "--db", str(db))
    seen += [proc.stdout, proc.stderr, copy.read_bytes().decode("latin-1")]
    seen.append(run_cli("notify", "list", "--db", str(db)).stdout)
    with serving(db) as base:
        for path in ("/archive/notify_state", "/archive/notify_state.json",
                     "/archive?sql=select+*+from+notify_state", "/archive.json?sql=select+*+from+notify_state"):
            with urllib.request.urlopen(base + path, timeout=30) as response:
                seen.append(response.read().decode())
    assert any("127.0.0.1" in text for text in seen)  # the grep reads what was printed
    for secret in SECRETS:
        assert not [text[:200] for text in seen if secret in text], secret


@pytest.mark.parametrize("url, shown", [
    (f"jsons://u:{SECRETS[0]}@hooks.example.com:8443/p/{SECRETS[1]}?+X-Token={SECRETS[2]}", "jsons://hooks.example.com:8443/…"),
    (f"tgram://123456789:{SECRETS[1]}/12345", "tgram://…/…"),  # a token in the host's place
    (f"ntfys://{SECRETS[1]}", "ntfys://…/…"),
    ("mailto://127.0.0.1:2525?to=reader@example.com", "mailto://127.0.0.1:2525/…"),
])
def test_redact_shows_the_server_only(url: str, shown: str) -> None:
    assert redact(url) == shown
    said = f"could not send to {url}: {SECRETS[1]} refused, user u, header {SECRETS[2]}"
    assert not [s for s in SECRETS if s in url and s in redact_text(said, [url])]
