"""A search's snippet: about two lines of a post's text around the first word found, cut between
words, never inside one.

Width is counted as a reader sees it: a Chinese, Japanese or Korean character is as wide as two
Latin letters, so two lines hold about 220 letters or 110 such characters. English is cut at
spaces; a text without spaces (Chinese) is cut after a punctuation mark when one is near
(``。，、；：！？``), else between two characters, which is between words of such a script too.
"""

import re
import unicodedata

WIDTH = 220  # about two lines of the search results, in Latin letters
BEFORE = WIDTH // 4  # how much of it comes before the first word found
NEAR = 24  # how far a cut moves to fall on a space or a punctuation mark
PAUSE = "。，、；：！？）」』"  # a text without spaces may be cut after these
SPACE = re.compile(r"\s+")


def char_width(ch: str) -> int:
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _start(text: str, at: int) -> int:
    """Where a snippet whose first word found is at ``at`` starts: about ``BEFORE`` wide before
    it, moved forward onto the start of a word."""
    start, width = at, 0
    while start > 0 and width < BEFORE:
        start -= 1
        width += char_width(text[start])
    if start == 0:
        return 0
    for i in range(start, min(at, start + NEAR)):  # just after a space or a pause
        if text[i - 1] == " " or text[i - 1] in PAUSE:
            return i
    if text[start - 1].isalnum() and text[start].isalnum() and char_width(text[start]) == 1:
        return at  # inside a word, with no space near: start at the word found
    return start


def _end(text: str, start: int, at: int) -> int:
    """Where a snippet starting at ``start`` ends: about ``WIDTH`` wide, moved back onto the end of a
    word, never before ``at`` (the first word found is whole)."""
    end, width = start, 0
    while end < len(text) and width < WIDTH:
        width += char_width(text[end])
        end += 1
    if end >= len(text):
        return len(text)
    for i in range(end, max(at, end - NEAR), -1):  # just before a space, or after a pause
        if text[i] == " " or text[i - 1] in PAUSE:
            return i
    if text[end - 1].isalnum() and text[end].isalnum() and char_width(text[end]) == 1:
        # inside a Latin word with no space near: on to its end
        while end < len(text) and text[end].isalnum():
            end += 1
    return end


def snippet(text: str | None, terms: list[str]) -> str:
    """About two lines of ``text`` around the first of ``terms`` in it (its start when none is),
    whole words, with ``…`` where it is cut, each term between ``<mark>`` and ``</mark>``.

    The result is plain text: whoever shows it as HTML escapes it first.
    """
    text = SPACE.sub(" ", text or "").strip()
    pattern = re.compile("|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)), re.IGNORECASE) if terms else None
    first = pattern.search(text) if pattern else None
    at = first.end() if first else 0
    start = _start(text, first.start()) if first else 0
    end = _end(text, start, at)
    piece = text[start:end].strip()
    if pattern:
        piece = pattern.sub(lambda m: f"<mark>{m.group(0)}</mark>", piece)
    return ("…" if start else "") + piece + ("…" if end < len(text) else "")
