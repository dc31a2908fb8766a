"""Network and HTTP faults, served by a misbehaving server on 127.0.0.1 (tests/faultserver.py):
whatever a site does, the crawl records it, keeps what it can, and goes on."""

import random
import socket
import sqlite3
import subprocess
import sys
import threading
import zlib

import brotli
import pytest
from conftest import BLOGARCHIVE, ROOT
from faultserver import FaultServer, answer, compressed, drop_after, sequence, stall

HOST = "faults.test"
BOMB_BYTES = 300 * 1024 * 1024  # decompressed; 15 times the 20 MB download cap


def post(title: str) -> bytes:
    body = " ".join(f"Sentence {i} of the post called {title}, which has enough words to be an article." for i in range(40))
    return (f'<html lang="en"><head><title>{title}</title><meta property="og:type" content="article">'
            f'<meta property="og:title" content="{title}">'
            f'<meta property="article:published_time" content="2024-05-01T10:00:00+00:00"></head>'
            f"<body><article><h1>{title}</h1><p>{body}</p></article></body></html>").encode()


def zero_stream(encoding: str, size: int) -> bytes:
    """``size`` zero bytes compressed, without holding them all in memory."""
    if encoding == "br":
        return brotli.compress(b"\0" * (size // 64), quality=5) if size < 0 else _br_zeros(size)
    comp = zlib.compressobj(9, zlib.DEFLATED, 31 if encoding == "gzip" else 15)
    chunk = b"\0" * (1 << 20)
    return b"".join(comp.compress(chunk) for _ in range(size >> 20)) + comp.flush()


def _br_zeros(size: int) -> bytes:
    comp = brotli.Compressor(quality=5)
    chunk = b"\0" * (1 << 20)
    return b"".join(comp.process(chunk) for _ in range(size >> 20)) + comp.finish()


PAGES = {
    "/good/1/": "A good post", "/good/2/": "Another good post", "/flaky/": "A post behind a 500",
    "/busy/": "A post behind a 429",
}
TRUNCATED = ["gzip", "deflate", "br", "zstd"]
FAULTS = ["/slow/", "/dropped/", "/short/", *(f"/truncated-{e}/" for e in TRUNCATED), "/loop/", "/gone/", "/missing/",
          "/bomb-gzip/", "/bomb-deflate/", "/bomb-br/", "/huge/", "/binary/", "/nested/"]


def routes() -> dict:
    links = "".join(f'<a href="{p}">{p}</a> ' for p in [*PAGES, *FAULTS, "/paper.pdf", "/photo.png"])
    rng = random.Random(7)
    return {
        "/": answer(200, f"<html><head><title>Faults</title></head><body>{links}</body></html>".encode()),
        "/robots.txt": answer(200, b"User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"}),
        "/good/1/": answer(200, post(PAGES["/good/1/"])),
        "/good/2/": answer(200, post(PAGES["/good/2/"])),
        "/flaky/": sequence(answer(500, b"oops", reason="Internal Server Error"), answer(200, post(PAGES["/flaky/"]))),
        "/busy/": sequence(answer(429, b"slow down", {"Retry-After": "1"}, reason="Too Many Requests"),
                           answer(200, post(PAGES["/busy/"]))),
        "/slow/": stall(30, b"<html><body>"),
        "/dropped/": drop_after(post("Dropped"), 200),
        "/short/": answer(200, post("Short")[:300], length=len(post("Short"))),
        **{f"/truncated-{e}/": compressed(post(f"Truncated {e}"), e, truncate=120) for e in TRUNCATED},
        "/loop/": answer(301, b"", {"Location": "/loop2/"}, reason="Moved Permanently"),
        "/loop2/": answer(301, b"", {"Location": "/loop/"}, reason="Moved Permanently"),
        "/gone/": answer(410, b"gone", reason="Gone"),
        "/missing/": answer(404, b"missing", reason="Not Found"),
        "/bomb-gzip/": answer(200, zero_stream("gzip", BOMB_BYTES), {"Content-Encoding": "gzip"}),
        "/bomb-deflate/": answer(200, zero_stream("deflate", BOMB_BYTES), {"Content-Encoding": "deflate"}),
        "/bomb-br/": answer(200, zero_stream("br", BOMB_BYTES), {"Content-Encoding": "br"}),
        "/huge/": answer(200, b"<html><body><p>" + b"words " * (5 * 1024 * 1024) + b"</p></body></html>"),
        "/binary/": answer(200, rng.randbytes(50_000)),
        "/nested/": answer(200, b"<html><body>" + b"<div>" * 50_000 + b"<p>Deep.</p>" + b"</div>" * 50_000 + b"</body></html>"),
        "/paper.pdf": answer(200, b"%PDF-1.4", {"Content-Type": "application/pdf"}),
        "/photo.png": answer(200, b"\x89PNG", {"Content-Type": "image/png"}),
    }


# Runs its arguments, then prints the largest resident set of any process below it (in kB):
# this crawl's processes only, not those of the tests before it.
MEASURED = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(code)")


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    db = tmp_path_factory.mktemp("faults") / "faults.db"
    with FaultServer(routes()) as server:
        proc = subprocess.run(
            [sys.executable, "-c", MEASURED, sys.executable, "-m", "scrapy", "crawl", "blog", "-a", f"url=http://{HOST}/",
             "-s", f"ARCHIVE_PATH={db}", "-s", f'ARCHIVE_MAP_HOSTS={{"{HOST}": "{server.base}"}}',
             "-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=0", "-s", "DOWNLOAD_TIMEOUT=3",
             "-s", "RETRY_TIMES=1", "-s", "LOG_LEVEL=WARNING", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8"],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
        )
        hits = dict(server.hits)
    peak_mb = int(proc.stderr.strip().splitlines()[-1]) / 1024
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    tables = {t: [dict(r) for r in conn.execute(f"select * from {t}")] for t in ("posts", "crawl_errors", "crawl_runs")}
    conn.close()
    return proc, hits, peak_mb, tables


def errors_at(tables, path):
    return [(e["kind"], e["message"]) for e in tables["crawl_errors"] if e["url"] == f"http://{HOST}{path}"]


def test_the_crawl_finishes_and_keeps_every_good_post(crawl):
    proc, _, _, t = crawl
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert t["crawl_runs"][0]["status"] == "finished"
    assert sorted(p["title"] for p in t["posts"]) == sorted(PAGES.values())


def test_500_then_200_is_retried_and_429_waits_and_retries(crawl):
    _, hits, _, t = crawl
    assert hits["/flaky/"] == 2 and hits["/busy/"] == 2
    assert errors_at(t, "/flaky/") == errors_at(t, "/busy/") == []


@pytest.mark.parametrize("path,kind,words", [
    ("/slow/", "timeout", "took longer than"),
    ("/dropped/", "reset", "the connection broke before the whole answer arrived"),
    ("/short/", "reset", "the connection broke before the whole answer arrived"),
    *((f"/truncated-{e}/", "truncated", f"the {e} body (120 bytes) is cut short") for e in TRUNCATED),
    ("/loop/", "ignored", "max redirections"),
    ("/gone/", "http", "HTTP 410"),
    ("/missing/", "http", "HTTP 404"),
])
def test_each_fault_is_one_recorded_error(crawl, path, kind, words):
    _, _, _, t = crawl
    [(got_kind, message)] = errors_at(t, path)
    assert got_kind == kind and words in message


@pytest.mark.parametrize("path", ["/bomb-gzip/", "/bomb-deflate/", "/bomb-br/", "/huge/"])
def test_bombs_and_huge_pages_stop_at_the_size_cap(crawl, path):
    _, _, peak_mb, t = crawl
    [(kind, message)] = errors_at(t, path)
    assert kind == "too-large" and "max" in message.lower()
    assert peak_mb < 600  # each bomb is 300 MB decompressed, three of them


def test_garbage_and_truncated_bodies_archive_nothing_and_crash_nothing(crawl):
    proc, _, _, t = crawl
    refused = ("/binary/", "/nested/", *(f"/truncated-{e}/" for e in TRUNCATED))
    assert not any(p["url"].endswith(refused) for p in t["posts"])
    assert errors_at(t, "/binary/") == errors_at(t, "/nested/") == []


def test_files_that_are_not_pages_are_never_fetched(crawl):
    _, hits, _, _ = crawl
    assert "/paper.pdf" not in hits and "/photo.png" not in hits


def test_a_host_that_does_not_resolve_is_one_recorded_error_and_no_traceback(tmp_path):
    db = tmp_path / "archive.db"
    # .invalid never resolves (RFC 2606)
    proc = subprocess.run([BLOGARCHIVE, "crawl", "http://no-such-blog.invalid/feed.xml",
                           "--db", str(db), "--delay", "0"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "no-such-blog.invalid" in proc.stderr
    errors = sqlite3.connect(db).execute("select kind, message from crawl_errors").fetchall()
    # said as what happened to the host, not as a refusal of its robots.txt
    [(kind, message)] = errors
    assert kind == "seed" and "no-such-blog.invalid is down" in message and "its name does not resolve" in message
    assert "robots" not in message
    assert "its name does not resolve" in proc.stderr


def test_each_network_failure_is_one_line_and_one_row_that_names_its_kind(tmp_path):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    plain = socket.create_server(("127.0.0.1", 0))  # answers a TLS hello in plain HTTP

    def answer_plainly():
        for _ in range(10):
            try:
                conn, _ = plain.accept()
            except OSError:
                return
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            conn.close()

    threading.Thread(target=answer_plainly, daemon=True).start()
    port = plain.getsockname()[1]
    seeds = {"dns": "http://nowhere.invalid/", "refused": "http://closed.test/", "tls": "http://tls.test/"}
    proc = subprocess.run(
        [BLOGARCHIVE, "crawl", *seeds.values(), "--db", str(tmp_path / "a.db"), "--delay", "0",
         "--map-host", f"closed.test=http://127.0.0.1:{closed.getsockname()[1]}",
         "--map-host", f"tls.test=https://127.0.0.1:{port}"],  # a TLS hello to a plain HTTP server
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    closed.close()
    plain.close()
    assert "Traceback" not in proc.stderr and "WARNING" not in proc.stderr, proc.stderr
    rows = dict(sqlite3.connect(tmp_path / "a.db").execute("select url, message from crawl_errors").fetchall())
    assert sorted(rows) == sorted(seeds.values())
    for kind, url in seeds.items():
        assert "is down for the rest of this run" in rows[url] and f"({kind}: " in rows[url], rows[url]
        assert "robots" not in rows[url]  # what happened to the host, not a rule of its robots.txt
        host = url.split("/")[2]
        assert sum(host in line for line in proc.stderr.splitlines() if "ERROR" in line) == 1, proc.stderr
