"""WARC and WACZ out of a crawled archive, checked by warcio and py-wacz themselves; WARC back in."""

import base64
import gzip
import hashlib
import io
import json
import shutil
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import brotli
import pytest
from conftest import EXPECTED, crawl_args, rows, run_cli
from scrapy.downloadermiddlewares.httpcompression import ACCEPTED_ENCODINGS
from scrapy.settings.default_settings import DEFAULT_REQUEST_HEADERS
from testblogs import trap_blog
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from archive.formats.warc import REQUEST_HEADERS

from crawler import settings

BIN = Path(sys.executable).parent


def records(path: Path) -> list[dict]:
    out = []
    with path.open("rb") as f:
        for record in ArchiveIterator(f):
            out.append({
                "type": record.rec_type,
                "headers": dict(record.rec_headers.headers),
                "http": record.http_headers,
                "body": record.content_stream().read(),
            })
    return out


@pytest.fixture(scope="module")
def refetched(site_server, example_archive, tmp_path_factory) -> Path:
    """The example blog crawled, then crawled again in full: every body captured twice."""
    db = tmp_path_factory.mktemp("refetched") / "archive.db"
    shutil.copy(example_archive, db)
    run_cli(*crawl_args(f"http://{EXPECTED['host']}/", db, {EXPECTED["host"]: site_server.base}), "--full")
    return db


@pytest.fixture(scope="module")
def warc(refetched, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("warc") / "blogs.warc.gz"
    proc = run_cli("export", "warc", "-o", str(out), "--db", str(refetched))
    assert proc.stderr.strip() == f"{len(rows(refetched, 'select id from captures'))} captures written to {out}"
    return out


def test_warcio_checks_and_indexes_it(warc):
    check = subprocess.run([BIN / "warcio", "check", "-v", str(warc)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
    assert "digest pass" in check.stdout and "fail" not in check.stdout
    index = subprocess.run([BIN / "warcio", "index", str(warc)], capture_output=True, text=True, check=True)
    types = [json.loads(line)["warc-type"] for line in index.stdout.splitlines()]
    assert types[0] == "warcinfo" and {"response", "request", "revisit"} <= set(types)


def test_every_record_is_gzipped_on_its_own(warc):
    data = warc.read_bytes()
    members = data.count(b"\x1f\x8b\x08")
    assert members >= len(records(warc))
    assert gzip.decompress(data).startswith(b"WARC/1.1\r\nWARC-Type: warcinfo\r\n")


def test_one_response_or_revisit_per_capture_with_its_url_time_status_and_headers(warc, refetched, site_server):
    captures = rows(refetched, "select * from captures order by fetched_at, id")
    answers = [r for r in records(warc) if r["type"] in ("response", "revisit")]
    assert len(answers) == len(captures)
    for record, capture in zip(answers, captures):
        assert record["headers"]["WARC-Target-URI"] == capture["url"]
        assert record["headers"]["WARC-Date"] == capture["fetched_at"]
        assert record["http"].get_statuscode() == str(capture["status"])
        stored = json.loads(capture["headers"])
        assert record["http"].get_header("content-type") == stored.get("content-type")
        assert record["http"].get_header("last-modified") == stored.get("last-modified")
    assert all(site_server.base.split("//")[1] not in r["headers"]["WARC-Target-URI"] for r in answers)


def test_payload_digests_and_revisits_of_bodies_stored_once(warc, refetched):
    seen: dict[str, str] = {}
    revisits = 0
    for record in records(warc):
        if record["type"] == "response":
            digest = "sha1:" + base64.b32encode(hashlib.sha1(record["body"]).digest()).decode()
            assert record["headers"]["WARC-Payload-Digest"] == digest
            seen[digest] = record["headers"]["WARC-Target-URI"]
        elif record["type"] == "revisit":
            revisits += 1
            h = record["headers"]
            assert h["WARC-Profile"] == "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
            assert seen[h["WARC-Payload-Digest"]] == h["WARC-Refers-To-Target-URI"]
    distinct = rows(refetched, "select count(distinct sha256) n, count(*) total from captures")[0]
    assert revisits == distinct["total"] - distinct["n"] > 0


def test_a_request_beside_each_response(warc):
    recs = records(warc)
    ids = {r["headers"]["WARC-Record-ID"]: r for r in recs if r["type"] in ("response", "revisit")}
    requests = [r for r in recs if r["type"] == "request"]
    assert len(requests) == len(ids)
    for request in requests:
        answer = ids[request["headers"]["WARC-Concurrent-To"]]
        assert request["headers"]["WARC-Target-URI"] == answer["headers"]["WARC-Target-URI"]
        assert request["http"].protocol == "GET" and request["http"].get_header("Host") == EXPECTED["host"]


def test_request_records_send_what_the_crawl_sends():
    sent = dict(REQUEST_HEADERS)
    assert sent["User-Agent"] == settings.USER_AGENT
    assert {k: sent[k] for k in DEFAULT_REQUEST_HEADERS} == DEFAULT_REQUEST_HEADERS
    assert sent["Accept-Encoding"] == b", ".join(ACCEPTED_ENCODINGS).decode()


def test_the_warcinfo_names_the_sources(warc):
    info = records(warc)[0]
    assert info["type"] == "warcinfo" and b"software: blogarchive/" in info["body"]
    assert info["headers"]["WARC-Filename"] == warc.name
    line = next(x for x in info["body"].decode().splitlines() if x.startswith("blogarchive-sources:"))
    assert [s["url"] for s in json.loads(line.split(":", 1)[1])] == [f"http://{EXPECTED['host']}/"]


def test_since_and_source_select_captures(refetched, tmp_path):
    out = tmp_path / "none.warc.gz"
    assert run_cli("export", "warc", "-o", str(out), "--since", "2999-01-01", "--db", str(refetched)).stderr.startswith("0 captures")
    assert [r["type"] for r in records(out)] == ["warcinfo"]
    proc = run_cli("export", "warc", "-o", str(out), "--source", "nobody", "--db", str(refetched), check=False)
    assert proc.returncode == 2 and proc.stderr == "Error: no source named 'nobody' (see blogarchive sources)\n"
    proc = run_cli("export", "warc", "-o", str(out), "--since", "soon", "--db", str(refetched), check=False)
    assert proc.returncode == 2 and proc.stderr == "Error: not a date: 'soon'\n"
    assert [r["type"] for r in records(out)] == ["warcinfo"]  # a failed export leaves the file as it was
    named = run_cli("export", "warc", "-o", str(out), "--source", EXPECTED["host"], "--db", str(refetched))
    assert int(named.stderr.split()[0]) == len(rows(refetched, "select id from captures where source_id = 1"))


def test_wacz_passes_its_validation_with_a_page_per_post(refetched, tmp_path):
    out = tmp_path / "blogs.wacz"
    run_cli("export", "wacz", "-o", str(out), "--db", str(refetched))
    check = subprocess.run([BIN / "wacz", "validate", "-f", str(out)], capture_output=True, text=True)
    assert check.returncode == 0 and "Validation succeeded" in check.stdout, check.stdout
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
        pages = [json.loads(line) for line in z.read("pages/pages.jsonl").decode().splitlines()]
        cdxj = gzip.decompress(z.read("indexes/index.cdx.gz")).decode()
    assert {"datapackage.json", "archive/blogarchive.warc.gz", "indexes/index.idx"} <= names
    posts = rows(refetched, "select url, title, published from posts")
    assert pages[0]["format"] == "json-pages-1.0"
    assert sorted((p["url"], p["title"], p["date"]) for p in pages[1:]) == sorted(
        (p["url"], p["title"], p["published"]) for p in posts)
    assert all(f'"url": "{p["url"]}"' in cdxj for p in posts)


def test_import_is_a_crawl_of_the_captures_and_adds_nothing_twice(warc, refetched, tmp_path):
    db = tmp_path / "imported.db"
    first = run_cli("import", "warc", str(warc), "--db", str(db), "--quiet")
    assert f"posts {len(EXPECTED['posts'])} new" in first.stdout and "0 requests" in first.stdout
    assert rows(db, "select name, url from sources") == rows(refetched, "select name, url from sources")
    counts = "select (select count(*) from posts) p, (select count(*) from post_versions) v, (select count(*) from captures) c"
    before = rows(db, counts)
    assert before[0]["c"] == rows(refetched, "select count(*) n from captures")[0]["n"]
    again = run_cli("import", "warc", str(warc), "--db", str(db), "--quiet")
    assert "posts 0 new, 0 updated" in again.stdout and "0 captures imported" in again.stderr
    assert rows(db, counts) == before


def test_import_of_a_file_that_is_not_warc_changes_nothing(warc, example_archive, tmp_path):
    db = tmp_path / "archive.db"
    shutil.copy(example_archive, db)
    before = db.read_bytes()
    bad = tmp_path / "notes.warc.gz"
    bad.write_bytes(b"not a warc\n")
    proc = run_cli("import", "warc", str(warc), str(bad), "--db", str(db), check=False)
    assert proc.returncode == 1 and proc.stderr.startswith(f"Error: {bad}: not a readable WARC file")
    assert len(proc.stderr.splitlines()) == 1
    assert db.read_bytes() == before and not (tmp_path / "archive.db.lock").exists()
    assert run_cli("import", "warc", str(bad), "--db", str(tmp_path / "new.db"), check=False).returncode == 1
    assert not (tmp_path / "new.db").exists()


def test_import_of_a_warc_with_no_page_changes_nothing(tmp_path):
    only_css = tmp_path / "styles.warc.gz"
    with only_css.open("wb") as f:
        writer = WARCWriter(f, gzip=True)
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/css")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record("http://a.test/style.css", "response",
                                                      payload=io.BytesIO(b"p {}"), length=4, http_headers=headers))
    proc = run_cli("import", "warc", str(only_css), "--db", str(tmp_path / "new.db"), check=False)
    assert proc.returncode == 1
    assert proc.stderr == f"Error: {only_css}: no blog in this file (no HTML page to start from)\n"
    assert not (tmp_path / "new.db").exists()


def test_a_crawlers_br_and_chunked_bodies_are_decoded(tmp_path):
    """browsertrix and wget keep the body as the server sent it: compressed, in chunks."""
    html = "<html><head><title>Brotli</title></head><body><p>Compressed in transit, stored decoded.</p></body></html>".encode()
    packed = brotli.compress(html)
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(packed), packed)
    warc = tmp_path / "crawler.warc.gz"
    with warc.open("wb") as f:
        writer = WARCWriter(f, gzip=True)
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8"), ("Content-Encoding", "br"),
                                              ("Transfer-Encoding", "chunked")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record("http://br.test/", "response", payload=io.BytesIO(chunked),
                                                      length=len(chunked), http_headers=headers))
    db = tmp_path / "archive.db"
    run_cli("import", "warc", str(warc), "--db", str(db), "--quiet")
    capture = rows(db, "select c.headers, b.body from captures c join capture_bodies b using (sha256)")[0]
    assert zlib.decompress(capture["body"]) == html
    assert "content-encoding" not in json.loads(capture["headers"])
    assert rows(db, "select url from sources") == [{"url": "http://br.test/"}]


def test_the_http_redirects_that_led_to_posts_are_records_of_their_own(tmp_path):
    blog = trap_blog()
    db, out = tmp_path / "archive.db", tmp_path / "trap.warc.gz"
    with blog.serve() as server:
        run_cli(*crawl_args(blog.home, db, {blog.host: server.base}))
    run_cli("export", "warc", "-o", str(out), "--db", str(db))
    redirects = {r["alias"]: (r["why"], r["url"]) for r in rows(
        db, "select a.alias, a.why, p.url from post_aliases a join posts p on p.id = a.post_id "
            "where a.why like 'redirect %'")}
    assert redirects  # the trap blog's 301s
    written = {r["headers"]["WARC-Target-URI"]: (f"redirect {r['http'].get_statuscode()}", r["http"].get_header("location"))
               for r in records(out) if r["type"] == "response" and r["http"].get_statuscode().startswith("3")}
    assert written == redirects
