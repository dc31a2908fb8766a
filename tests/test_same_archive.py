"""The same blog gives the same archive (issue 46): two crawls of one unchanged real blog of the
corpus, whose server answers each path after a delay drawn from a different seed each time (so
that pages arrive in another order), archive the same posts with the same fields.

A static blog with Disqus's embed on every post (tests/corpus/0t2-hugo-zh): before issue 46, a
short page with such a widget went to the browser, and what the browser made of it in the time
it had made one crawl differ from the next. The client-rendered blog's two crawls, at the
default delay and at a small one, are compared in tests/test_render.py.
"""

import json
from pathlib import Path

import pytest
from conftest import ROOT, ShuffledHandler, StaticServer, rows, run_cli

CORPUS = ROOT / "tests" / "corpus"
FIELDS = "url, title, published, updated, author, tags, categories, lang, text_hash, summary"


def crawl(name: str, db: Path, seed: str, *options: str) -> tuple[list[dict], set[str]]:
    """The blog's posts (their fields) and the pages the browser rendered."""
    info = json.loads((CORPUS / name / "blog.json").read_text())
    ShuffledHandler.seed = seed
    with StaticServer(CORPUS / name / "site", ShuffledHandler) as server:
        maps = [arg for host in info["internal_hosts"] for arg in ("--map-host", f"{host}={server.base}")]
        run_cli("crawl", info["start"], "--db", str(db), "--media", "off", *maps, *options, timeout=240)
    rendered = {p["url"] for p in rows(db, "select url from pages where fetched_via like 'browser%'")}
    return rows(db, f"select {FIELDS} from posts order by url"), rendered


@pytest.mark.slow
def test_a_static_blog_with_comment_widgets_gives_the_same_archive_in_any_order(tmp_path):
    first, rendered_first = crawl("0t2-hugo-zh", tmp_path / "a.db", "first", "--delay", "0", "--concurrency", "8")
    second, rendered_second = crawl("0t2-hugo-zh", tmp_path / "b.db", "second", "--delay", "0", "--concurrency", "8")
    assert len(first) == 16
    assert first == second
    assert rendered_first == rendered_second == set()  # Disqus's embed on every post: no browser
