"""Search snippets: about two lines of whole words around the first word found, in English and
in Chinese, from the snippet function and from a real ``blogarchive serve``'s search."""

import json
import re
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest

from archive.search.snippets import char_width, snippet

CORPUS = Path(__file__).parent / "corpus"
EN = (CORPUS / "tmzh-hugo-en/source/content/post/2023-06-24-llm-powered-faq-chat-bot.md").read_text(encoding="utf-8")
ZH = (CORPUS / "yuqingc-hugo-zh/source/content/zh-cn/posts/2020/github-actions.md").read_text(encoding="utf-8")


def plain(value: str) -> str:
    return value.replace("<mark>", "").replace("</mark>", "")


def inside_a_word(left: str, right: str) -> bool:
    """Whether a cut between these two characters splits a Latin word."""
    return all(c.isalnum() and char_width(c) == 1 for c in (left, right))


def cut_between_words(text: str, body: str) -> bool:
    """Whether ``body``, a piece of ``text``, starts and ends between words."""
    at = text.index(body)
    end = at + len(body)
    return not (at and inside_a_word(text[at - 1], body[0])) and not (end < len(text) and inside_a_word(body[-1], text[end]))


def width(value: str) -> int:
    return sum(map(char_width, plain(value).strip("…")))


@pytest.mark.parametrize("word", ["embeddings", "retrieval", "Mistral", "chunk", "hallucination"])
def test_an_english_snippet_is_about_two_lines_of_whole_words(word):
    text = " ".join(EN.split())
    found = snippet(EN, [word])
    assert f"<mark>{word}</mark>".lower() in found.lower()
    assert 150 <= width(found) <= 250
    assert plain(found).strip("…") in text
    assert cut_between_words(text, plain(found).strip("…"))


@pytest.mark.parametrize("word", ["工作流", "仓库", "部署", "构建"])
def test_a_chinese_snippet_is_about_two_lines(word):
    text = re.sub(r"\s+", " ", ZH).strip()
    assert word in text
    found = snippet(ZH, [word])
    assert f"<mark>{word}</mark>" in found
    assert 150 <= width(found) <= 250
    body = plain(found).strip("…")
    assert body in text
    at = text.index(body)
    # it starts at the text's start, after a space or a punctuation mark, or at the word found
    assert at == 0 or text[at - 1] in " 。，、；：！？）」』" or body.startswith(word)


def test_a_short_text_is_whole_and_a_text_without_the_word_starts_at_its_start():
    assert snippet("A short post about SQLite.", ["sqlite"]) == "A short post about <mark>SQLite</mark>."
    assert snippet(EN, ["zzzqqq"]).startswith(" ".join(EN.split())[:20]) and snippet(EN, ["zzzqqq"]).endswith("…")


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.load(r)


def test_the_search_page_answers_snippets_of_whole_words(example_datasette, example_archive):
    site = f"{example_datasette}/{example_archive.stem}"
    rows = get_json(f"{site}/search.json?_shape=array&q={quote('sqlite')}")
    assert rows
    for row in rows:
        [post] = get_json(f"{site}/posts/{row['post_id']}.json?_shape=array")
        text = " ".join(post["text"].split())
        body = plain(row["snippet"]).strip("…")
        assert "<mark>" in row["snippet"] and body in text and width(row["snippet"]) <= 250
        assert cut_between_words(text, body)
        assert width(row["snippet"]) >= 150 or body == text


@pytest.mark.parametrize("query", ["sqlite", "索引", "内存"])
def test_the_command_line_search_prints_the_same_snippets(example_archive, query):
    # `blogarchive search` printed about 20 characters cut inside words (…The PSC is a [vCent]…); it
    # now prints the reading room's snippet, its words found between brackets
    from archive.core.db import open_archive
    from archive.core.queries import search_posts

    db = open_archive(str(example_archive))
    try:
        rows = search_posts(db, query)
        texts = {row["id"]: " ".join(db.execute("select text from posts where id = ?", [row["id"]]).fetchone()[0].split())
                 for row in rows}
    finally:
        db.close()
    assert rows
    for row in rows:
        body = row["snippet"].replace("[", "").replace("]", "").strip("…")
        assert f"[{query}]".lower() in row["snippet"].lower()
        assert body in texts[row["id"]] and cut_between_words(texts[row["id"]], body)
        assert width(body) >= 150 or body == texts[row["id"]]
