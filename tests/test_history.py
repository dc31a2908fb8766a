"""Post versions: one per distinct content, classified; deletions and returns."""

import json

import pytest

from archive import ensure_source, open_archive, save_post, start_run
from archive.tables.history import (
    NoPost,
    diff_versions,
    list_versions,
    mark_gone,
    record_version,
)

URL = "https://blog.test/p/1"


@pytest.fixture
def db(db_path):
    db = open_archive(db_path)
    ensure_source(db, "https://blog.test/")
    yield db
    db.close()


def save(db, **fields):
    post = {"source_id": 1, "url": URL, "title": "Hello", "author": "Ann", "text": "one\ntwo\nthree",
            "markdown": "one\n\ntwo\n\nthree", "tags": ["a"], **fields}
    save_post(db, post, run_id=start_run(db, [1]))
    return record_version(db, URL, run_id=None)


def test_versions_are_classified_and_unchanged_refetches_add_none(db):
    assert save(db) == "new"
    assert save(db) is None
    assert save(db, title="Hello again") == "title"
    assert save(db, title="Hello again", text="one\n2\nthree\nfour", markdown="one\n\n2\n\nthree\n\nfour") == "text"
    assert save(db, title="Bye", text="one", markdown="one") == "title+text"
    assert save(db, title="Bye", text="one", markdown="one", author="Bob", tags=["a", "b"]) == "metadata"
    rows = list_versions(db, URL)
    assert [r["change"] for r in rows] == ["new", "title", "text", "title+text", "metadata"]
    assert [r["diff_lines"] for r in rows][2:4] == [3, 3]  # -two +2 +four, then -2 -three -four
    assert json.loads(rows[4]["changed"]) == ["author", "tags"]
    assert rows[1]["title"] == "Hello again" and rows[0]["title"] == "Hello"


def test_gone_and_back(db):
    save(db)
    assert mark_gone(db, URL) is True
    assert mark_gone(db, URL) is False  # already gone: the first date stays
    gone_at = db.execute("select gone_at from posts").fetchone()[0]
    assert gone_at
    assert db.execute("select text from posts").fetchone()[0] == "one\ntwo\nthree"  # content stays
    assert save(db) == "restored"
    assert db.execute("select gone_at from posts").fetchone()[0] is None
    mark_gone(db, URL)
    assert save(db, title="Back, renamed") == "restored, title"


def test_diff_is_unified_over_title_and_markdown(db):
    save(db)
    save(db, title="Hello again", markdown="one\n\nTWO\n\nthree")
    old, new = list_versions(db, URL)
    diff = diff_versions(old, new).splitlines()
    assert diff[0].startswith("--- version 1 (") and diff[1].startswith("+++ version 2 (")
    assert [line for line in diff[2:] if line[:1] in "+-"] == ["-# Hello", "+# Hello again", "-two", "+TWO"]


def test_history_of_an_unknown_post(db):
    with pytest.raises(NoPost, match="no post at https://blog.test/nope"):
        list_versions(db, "https://blog.test/nope")
