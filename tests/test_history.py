"""Post versions: one per distinct content, classified; deletions and returns."""

import json

import pytest
from conftest import run_cli

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


LONG = " ".join(f"The archive keeps sentence {i} of this post about databases." for i in range(40))


def grades(db):
    return [(v["grade"], v["changed_share"], v["word_diff"]) for v in list_versions(db, URL)]


def test_each_version_is_graded_with_the_share_of_its_text_changed_and_a_word_diff(db):
    save(db, text=LONG)
    save(db, text=LONG.replace("databases", "databse", 1))  # one word
    save(db, text=LONG.replace("databases", "databse", 1), markdown="**" + LONG + "**")  # formatting only
    save(db, text=LONG.replace("databases", "databse", 1), author="Bob", tags=["b"])  # metadata only
    edited = LONG.replace("sentence 3 of", "sentence three, rewritten at length, of")
    save(db, text=edited)
    save(db, text=edited, title="Hello, revised")
    save(db, text="This post is withdrawn. " + edited)  # a notice
    save(db, text="Nothing to see here any more.", title="Hello, revised")  # most of it gone
    got = grades(db)
    assert [g for g, _, _ in got] == ["new", "typo", "typo", "typo", "edit", "title", "retraction", "retraction"]
    assert got[0][1:] == (None, None) and got[2][1:] == (0.0, None) and got[3][1:] == (0.0, None)
    assert got[1][2] == "of this post about [-databases.-] {+databse.+} The archive keeps sentence"
    assert 0 < got[4][1] < 0.1 and "{+three, rewritten at length,+}" in got[4][2] and "[-3-]" in got[4][2]
    assert got[6][2].startswith("{+This post is withdrawn.+}")
    assert got[7][1] > 0.9


def test_a_chinese_edit_is_measured_character_by_character(db):
    text = "数据库把整个数据保存在一个文件里，读者不会阻塞写入者。" * 10
    save(db, text=text)
    save(db, text=text.replace("一个文件", "一个单独的文件", 1))
    (_, _, _), (grade, share, diff) = grades(db)
    assert grade == "typo" and 0 < share < 0.02  # two characters of 270
    assert diff == "存在一个 {+单独的+} 文件里，"  # four characters of context on each side


def test_versions_recorded_before_grades_are_graded_from_their_kind(tmp_path):
    import sqlite3

    db = open_archive(tmp_path / "old.db")
    ensure_source(db, "https://blog.test/")
    save_post(db, {"source_id": 1, "url": URL, "title": "Hello", "text": "x"}, run_id=start_run(db, [1]))
    for kind in ("new", "title", "text", "title+text", "metadata", "restored, text"):
        db["post_versions"].insert({"post_id": 1, "change": kind, "text": "x"})
    db.execute("drop index idx_post_versions_grade_captured_at")
    for column in ("grade", "changed_share", "word_diff"):  # as an archive made before them
        db.execute(f"alter table post_versions drop column {column}")
    db.execute("delete from _sqlite_migrations where name = 'add_version_grades'")
    db.conn.commit()
    db.close()
    open_archive(tmp_path / "old.db").close()
    conn = sqlite3.connect(tmp_path / "old.db")
    assert [r[0] for r in conn.execute("select grade from post_versions order by id")] == [
        "new", "title", "edit", "title", "typo", "edit"]


def test_recent_changes_keep_a_grade_and_the_graver_ones_and_their_atom_feed_carries_the_diff(db, db_path):
    import subprocess
    import sys
    from pathlib import Path

    save(db, text=LONG)
    save(db, text=LONG.replace("databases", "databse", 1))
    save(db, text=LONG.replace("sentence 3 of", "sentence three, rewritten at length, of"))
    save(db, text="This post is withdrawn.")
    mark_gone(db, URL)
    db.conn.commit()
    metadata = Path(__file__).resolve().parents[1] / "archive" / "datasette" / "metadata.yml"

    def get(path: str) -> str:
        return subprocess.run([str(Path(sys.executable).with_name("datasette")), str(db_path), "-m", str(metadata),
                               "--get", path], capture_output=True, text=True, check=True).stdout

    db_name = db_path.stem
    every = json.loads(get(f"/{db_name}/changes.json?_shape=array"))
    assert [r["grade"] for r in every] == ["gone", "retraction", "edit", "typo"]
    edits = json.loads(get(f"/{db_name}/changes.json?_shape=array&min_grade=edit"))
    assert [r["grade"] for r in edits] == ["gone", "retraction", "edit"]
    atom = get(f"/{db_name}/changes.atom?min_grade=retraction")
    assert atom.count("<entry>") == 2 and "[retraction] Hello" in atom and "withdrawn.+}</content>" in atom


def test_history_numbers_a_post_versions_one_way_in_its_list_its_diff_and_its_errors(db, db_path):
    other = "https://blog.test/p/other"
    save_post(db, {"source_id": 1, "url": other, "title": "Other", "text": "x"}, run_id=None)
    record_version(db, other, run_id=None)  # version id 1: the post's own are 2 and 3
    save(db)
    save(db, title="Hello again")
    listed = run_cli("history", URL, "--db", str(db_path)).stdout.splitlines()
    assert [line.split("\t")[0] for line in listed[:2]] == ["1", "2"]
    assert listed[2].startswith("--- version 1 (") and listed[3].startswith("+++ version 2 (")
    diff = run_cli("history", URL, "--diff", "2", "1", "--db", str(db_path)).stdout.splitlines()
    assert diff[2].startswith("--- version 2 (") and diff[3].startswith("+++ version 1 (")
    refused = run_cli("history", URL, "--diff", "1", "3", "--db", str(db_path), check=False)
    assert (refused.returncode, refused.stderr) == (2, "Error: --diff: the post's versions are 1 to 2\n")
    one = run_cli("history", other, "--diff", "1", "2", "--db", str(db_path), check=False)
    assert (one.returncode, one.stderr) == (2, "Error: --diff: the post has one version, 1\n")
