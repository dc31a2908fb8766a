"""What the reading room promises, through a real ``blogarchive serve``: a feed of a search that
finds nothing is an empty, valid Atom feed; every HTML page sends a strict Content-Security-Policy
that allows its own inline scripts by hash and no other."""

import base64
import hashlib
import re
import sys
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from urllib.parse import quote

import pytest
from conftest import ROOT

ATOM = "{http://www.w3.org/2005/Atom}"
PAGES = ["/", "/{db}", "/{db}/posts", "/{db}/posts/1", "/{db}/posts?_search=sqlite", "/{db}/posts?_facet=lang",
         "/{db}/search?q=sqlite", "/{db}/search?q=zzzqqqnothing", "/{db}/latest", "/{db}/tag_cloud",
         "/{db}/crawl_health", "/{db}?sql=" + quote("select 1"), "/-/versions", "/no-such-page"]
INLINE_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.S | re.I)


@pytest.fixture(scope="module")
def site(example_datasette, example_archive):
    return example_datasette, example_archive.stem


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()


@pytest.mark.parametrize("words", ["zzzqqqnothing", "内存内存内存不存在", "xyzzy plugh"])
def test_a_search_that_finds_nothing_is_an_empty_atom_feed(site, words):
    base, db = site
    status, _, body = get(f"{base}/{db}/search.atom?q={quote(words)}")
    assert status == 200, body[:300]
    feed = ET.fromstring(body)
    assert feed.tag == ATOM + "feed"
    assert feed.find(ATOM + "id").text and feed.find(ATOM + "title").text == "Search posts"
    assert re.match(r"\d{4}-\d\d-\d\dT", feed.find(ATOM + "updated").text)
    assert feed.findall(ATOM + "entry") == []
    status, _, body = get(f"{base}/{db}/search.atom?q=sqlite")  # and a search that finds posts is their feed
    titles = [e.find(ATOM + "title").text for e in ET.fromstring(body).findall(ATOM + "entry")]
    assert status == 200 and "Notes on SQLite WAL Mode" in titles


@pytest.mark.parametrize("path", PAGES)
def test_every_html_page_sends_a_strict_content_security_policy(site, path):
    base, db = site
    _, headers, body = get(base + path.format(db=db))
    assert headers["content-type"].startswith("text/html")
    policy = {d.split()[0]: d.split()[1:] for d in headers["content-security-policy"].split(";") if d.strip()}
    assert policy["default-src"] == ["'none'"]
    assert policy["base-uri"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"]
    assert "'unsafe-inline'" not in policy["script-src"] and "'unsafe-eval'" not in policy["script-src"]
    assert [s for s in policy["script-src"] if not s.startswith("'sha256-")] == ["'self'"]
    inline = [body for attrs, body in INLINE_SCRIPT.findall(body.decode()) if "src=" not in attrs]
    hashes = {"'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'" for s in inline}
    assert hashes == set(policy["script-src"][1:])  # each of its inline scripts, and nothing else


def test_a_script_that_is_not_the_templates_is_not_allowed():
    sys.path.insert(0, str(ROOT / "archive" / "datasette" / "plugins"))
    from archive_csp import policy

    page = "<script>document.body.addEventListener('click', () => {})</script><script>window.__xss = 1</script>"
    assert "sha256" not in policy(page)
    facet = policy("<script>DATASETTE_ALLOW_FACET = true;</script>")
    assert "sha256" in facet and facet != policy("<script>DATASETTE_ALLOW_FACET = alert(1);</script>")
