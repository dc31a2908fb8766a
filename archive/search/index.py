"""Which posts contain every word of a search: each word answered by an index when one can.

Two FTS5 indexes cover the posts' titles and texts:

- ``posts_fts`` (trigram tokenizer) finds any substring of three characters
  or more, in any script;
- ``posts_grams`` finds words of one or two letters or digits (内, 内存, go):
  each post is indexed as the set of its one- and two-character *grams*,
  taken from each run of letters and digits, lower-cased (``post_grams``).
  It is contentless (the grams are not stored twice) and keeps no positions
  (``detail=none``): a word of two characters is one token, found or not.

A word shorter than three characters that is not all letters and digits
(``c#``) is matched with ``instr()`` over every post, as before either index.
The triggers that keep ``posts_grams`` current call ``post_grams()``, which
every connection that writes posts registers (``register_functions``).
"""

import operator
import re
import sqlite3
from itertools import islice
from typing import Any

MIN_TRIGRAM_CHARS = 3
LOWER_PART = 1_000_000
RUN = re.compile(r"[^\W_]+")  # letters and digits, in any script

FTS_IDS = "select rowid from posts_fts where posts_fts match :fts"
GRAMS_IDS = "select rowid from posts_grams where posts_grams match :grams"
WITHIN = " and rowid between :lo and :hi"
SUBSTRING = "(instr(title, :{0}) > 0 or instr(text, :{0}) > 0)"
SUBSTRING_ANY_CASE = "(instr(lower(title), lower(:{0})) > 0 or instr(lower(text), lower(:{0})) > 0)"


def post_grams(title: str | None, text: str | None, protected: str | None = None) -> str:
    """The one- and two-character grams of a post's title and text (of its title only when it
    is protected), space-separated, each once: what ``posts_grams`` indexes for it.

    The triggers delete a post's old grams by computing them again, so a change to what
    this returns needs a migration that rebuilds the index.
    """
    # each run once (English repeats its words); matches are read one by one, never listed: a
    # 15 MB post has millions of them
    runs: set[str] = set()
    for value in (title, None if protected else text):
        runs.update(map(re.Match.group, RUN.finditer(_lower(value or ""))))
    joined = " ".join(runs)
    # every two characters side by side, overlapping, read lazily; those across a space are no gram
    grams = set(joined)
    grams.update(map(operator.add, joined, islice(joined, 1, None)))
    return " ".join(gram for gram in grams if " " not in gram)


def _lower(value: str) -> str:
    """``value.lower()``, a million characters at a time: lower-casing a string that is not
    ASCII takes 12 bytes a character while it works. Only a capital sigma is lower-cased by
    its neighbours (ς at a word's end), so a text that has one is lower-cased whole."""
    if value.isascii() or len(value) <= LOWER_PART or "Σ" in value:
        return value.lower()
    return "".join(value[i:i + LOWER_PART].lower() for i in range(0, len(value), LOWER_PART))


def register_functions(conn: sqlite3.Connection) -> None:
    """The SQL functions the archive's triggers call, on ``conn``."""
    conn.create_function("post_grams", 3, post_grams, deterministic=True)


def is_gram(word: str) -> bool:
    """Whether ``posts_grams`` answers ``word``: one or two letters or digits."""
    word = word.lower()
    return len(word) < MIN_TRIGRAM_CHARS and RUN.fullmatch(word) is not None


def _fts_phrases(words: list[str]) -> str:
    return " ".join('"{}"'.format(w.replace('"', '""')) for w in words)


def post_ids_sql(words: list[str], *, grams: bool = True, within: bool = False) -> tuple[str, dict[str, Any]]:
    """``select ...`` of the ids of the posts whose title or text contains every word, and its parameters.

    Words of three characters or more go to ``posts_fts``, shorter ones of letters and digits
    to ``posts_grams`` (unless ``grams`` is False: an archive not migrated yet), the rest to
    ``instr()``. When the indexes answer every word, the ids come from them alone: the
    posts' rows are not read (half of 100,000 posts can match a common word).

    With ``within``, only the ids from ``:lo`` to ``:hi`` (both included, parameters the caller
    adds): FTS5 seeks each word's list of posts to ``:lo`` and stops after ``:hi``, so a range
    costs about its share of the whole, and ranges can be read side by side (``Matches``).
    """
    long = [w for w in words if len(w) >= MIN_TRIGRAM_CHARS]
    short = [w for w in words if len(w) < MIN_TRIGRAM_CHARS and grams and is_gram(w)]
    scanned = [w for w in words if len(w) < MIN_TRIGRAM_CHARS and w not in short]
    params: dict[str, Any] = {}
    fts_ids, grams_ids = (FTS_IDS + WITHIN, GRAMS_IDS + WITHIN) if within else (FTS_IDS, GRAMS_IDS)
    if (long or short) and not scanned:
        arms = []
        if long:
            params["fts"] = _fts_phrases(long)
            arms.append(fts_ids)
        if short:
            params["grams"] = _fts_phrases([w.lower() for w in short])
            arms.append(grams_ids)
        return " intersect ".join(arms), params
    where = ["id between :lo and :hi"] if within else []
    if long:
        params["fts"] = _fts_phrases(long)
        where.append(f"id in ({fts_ids})")
    if short:
        params["grams"] = _fts_phrases([w.lower() for w in short])
        where.append(f"id in ({grams_ids})")
    for i, word in enumerate(scanned):
        params[f"w{i}"] = word
        where.append((SUBSTRING if word.lower() == word.upper() else SUBSTRING_ANY_CASE).format(f"w{i}"))
    return "select id from posts where " + " and ".join(where or ["0"]), params
