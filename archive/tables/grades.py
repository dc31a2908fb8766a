"""How much a post changed: the grade of a new version, the share of its text changed, a word diff.

Grades, from the least to the most a reader would want to hear of:

- ``typo``: a few characters (``TYPO_WORDS`` words and ``TYPO_CHARS`` characters at most), or only
  the formatting (the Markdown changed, not the words) or the metadata (dates, tags, summary);
- ``edit``: words changed (``changed_share`` says how much of the text);
- ``title``: the title changed (whatever the text did, short of a retraction);
- ``retraction``: most of the text removed or replaced (``RETRACTION_SHARE``), or a notice of a
  retraction or correction added.

``new`` is a post's first version; ``gone`` is a post that answered 404 or 410 (``posts.gone_at``,
no version of its own). Words are the text's runs between spaces, and each CJK character alone,
so a Chinese edit is measured as finely as an English one.
"""

import difflib
import re
from typing import Any

GRADES = ("typo", "edit", "title", "retraction")  # rising: ``min_grade`` keeps a grade and those after it
EVENTS = ("new", "gone")  # graded too, and always told
TYPO_WORDS = 3
TYPO_CHARS = 20
RETRACTION_SHARE = 0.5
# Characters of a text whose words are compared one by one: a longer text's share is measured on its lines.
MAX_CHARS = 100_000
DIFF_CHARS = 300  # of the word diff kept with a version
CONTEXT_WORDS = 4
CUT_WORDS = 6  # words shown at each end of a long removal or addition
_CJK = "\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
WORDS = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+")
CJK = re.compile(rf"[{_CJK}]")
NOTICE = re.compile(
    r"\b(?:retract(?:ed|ion)|withdrawn|correction|corrected|erratum|errata)\b|撤回|撤稿|更正|勘误|訂正|撤回します",
    re.I,
)


def rank(grade: str | None) -> int:
    """A grade's place for ``min_grade`` filters: events first (always told), then ``GRADES`` in order;
    -1 for no grade."""
    if grade in EVENTS:
        return len(GRADES)
    return GRADES.index(grade) if grade in GRADES else -1


def grade_change(old: dict[str, Any] | None, new: dict[str, Any]) -> tuple[str, float | None, str | None]:
    """The grade of the change from version ``old`` (None: there is none) to post ``new``, the share
    of the text changed (0 to 1), and a short word diff (``[-removed-] {+added+}``, with context)."""
    if old is None:
        return "new", None, None
    old_text, new_text = old.get("text") or "", new.get("text") or ""
    share, diff, removed, added = _compare(old_text, new_text)
    changed_chars = sum(len(w) for w in removed) + sum(len(w) for w in added)
    if not removed and not added:
        text_grade = "typo"  # the same words: formatting or metadata only
    elif share >= RETRACTION_SHARE or (NOTICE.search(" ".join(added)) and not NOTICE.search(old_text)):
        text_grade = "retraction"
    elif max(len(removed), len(added)) <= TYPO_WORDS and changed_chars <= TYPO_CHARS:
        text_grade = "typo"
    else:
        text_grade = "edit"
    title_grade = "title" if (old.get("title") or "") != (new.get("title") or "") else "typo"
    return max(text_grade, title_grade, key=GRADES.index), (round(share, 4) if old_text or new_text else None), diff


def _compare(old_text: str, new_text: str) -> tuple[float, str | None, list[str], list[str]]:
    """Share of the text changed, the word diff, the words removed and added."""
    if old_text == new_text:
        return 0.0, None, [], []
    if len(old_text) + len(new_text) > 2 * MAX_CHARS:
        # a long text: its lines compared, not its words (difflib's matching grows with their
        # product, and a 15 MB text's words are millions of strings)
        old_lines, new_lines = old_text.splitlines(), new_text.splitlines()
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        kept = sum(size for _, _, size in matcher.get_matching_blocks())
        share = 1 - kept / max(len(old_lines), len(new_lines), 1)
        removed = [w for tag, i1, i2, _, _ in matcher.get_opcodes() if tag in ("replace", "delete")
                   for line in old_lines[i1:i2] for w in WORDS.findall(line)]
        added = [w for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("replace", "insert")
                 for line in new_lines[j1:j2] for w in WORDS.findall(line)]
        return share, _shorten(_diff_text(removed, added, [], [])), removed, added
    before, after = WORDS.findall(old_text), WORDS.findall(new_text)
    if before == after:
        return 0.0, None, [], []  # the same words: the white space changed
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    kept = sum(size for _, _, size in matcher.get_matching_blocks())
    share = 1 - kept / max(len(before), len(after))
    removed, added, pieces = [], [], []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        removed += before[i1:i2]
        added += after[j1:j2]
        pieces.append(_diff_text(before[i1:i2], after[j1:j2], before[max(0, i1 - CONTEXT_WORDS):i1],
                                 before[i2:i2 + CONTEXT_WORDS]))
    return share, _shorten(" … ".join(pieces)), removed, added


def _diff_text(removed: list[str], added: list[str], left: list[str], right: list[str]) -> str:
    parts = [_join(left)] if left else []
    if removed:
        parts.append(f"[-{_join(_cut(removed))}-]")
    if added:
        parts.append(f"{{+{_join(_cut(added))}+}}")
    if right:
        parts.append(_join(right))
    return " ".join(parts)


def _cut(words: list[str]) -> list[str]:
    """A long run of words as its first and last few: each change of a diff shows."""
    return words if len(words) <= 2 * CUT_WORDS else [*words[:CUT_WORDS], "…", *words[-CUT_WORDS:]]


def _join(words: list[str]) -> str:
    """Words as the text has them: a space between two, none between two CJK characters."""
    out = ""
    for word in words:
        if out and not (CJK.match(out[-1]) and CJK.match(word)):
            out += " "
        out += word
    return out


def _shorten(text: str) -> str:
    return text if len(text) <= DIFF_CHARS else text[:DIFF_CHARS - 1] + "…"
