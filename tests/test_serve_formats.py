"""The front page of ``blogarchive serve`` links a WARC and an OPML download, made live from the archive."""

import io
import re
import shutil
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from conftest import EXPECTED, crawl_args, rows, run_cli, serving
from warcio.archiveiterator import ArchiveIterator

from archive.cli.serve import DATASETTE_DIR

DATASETTE = Path(sys.executable).with_name("datasette")
PLUGINS = DATASETTE_DIR / "plugins"


def get(url: str) -> tuple[int, dict, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def answers(warc: bytes) -> list[str]:
    return [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(io.BytesIO(warc))
            if r.rec_type in ("response", "revisit")]


def test_the_front_page_links_live_warc_and_opml(example_archive, site_server, tmp_path):
    db = tmp_path / "blogs.db"
    shutil.copy(example_archive, db)
    with serving(db) as base:
        _, _, page = get(base + "/")
        links = dict(re.findall(r'<a href="(/-/blogarchive/blogs\.(?:warc\.gz|opml))">(\w+)</a>', page.decode()))
        assert links == {"/-/blogarchive/blogs.warc.gz": "WARC", "/-/blogarchive/blogs.opml": "OPML"}
        status, headers, warc = get(base + "/-/blogarchive/blogs.warc.gz")
        assert status == 200 and headers["content-type"] == "application/warc"
        assert headers["content-disposition"] == 'attachment; filename="blogs.warc.gz"'
        assert len(answers(warc)) == len(rows(db, "select id from captures"))
        status, headers, opml = get(base + "/-/blogarchive/blogs.opml")
        assert status == 200 and headers["content-type"].startswith("text/x-opml")
        assert f'xmlUrl="http://{EXPECTED["host"]}/feed.xml"' in opml.decode()
        # while it is served, the archive grows: the downloads follow
        run_cli(*crawl_args(f"http://{EXPECTED['host']}/", db, {EXPECTED["host"]: site_server.base}), "--full")
        run_cli("add", "https://another.example/", "--db", str(db))
        _, _, again = get(base + "/-/blogarchive/blogs.warc.gz")
        assert len(answers(again)) == len(rows(db, "select id from captures")) > len(answers(warc))
        _, _, opml = get(base + "/-/blogarchive/blogs.opml")
        assert 'htmlUrl="https://another.example/"' in opml.decode()
        assert get(base + "/-/blogarchive/nothing.warc.gz")[0] == 404


def test_a_database_that_is_not_an_archive_has_no_downloads(tmp_path):
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("create table t (x)").connection.close()
    for name in ("other.opml", "other.warc.gz"):
        proc = subprocess.run([DATASETTE, str(other), "--plugins-dir", str(PLUGINS), "--get", f"/-/blogarchive/{name}"],
                              capture_output=True, text=True)
        assert proc.returncode == 1 and "other is not a blogarchive archive" in proc.stdout
