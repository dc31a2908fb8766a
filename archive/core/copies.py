"""Copies of a post within one blog: the same title and text at a second URL is the same post.

A static generator may publish a post twice (a copy in an asset folder, at
``/post/post/``); a blog may serve one post under two paths that no redirect or
canonical link ties together. A post's title and text, normalised, are
hashed (``text_key``); a second URL of the same source with the same hash becomes an
alias of the post (``why`` = ``COPY``). Which URL is the post's own is decided by
what names each and by their shapes (``outranks``), so the outcome does not depend on which copy was
fetched first. Texts too short to tell a post from a stub (a
password form, "coming soon") have no key here (``archive.tables.writes`` keys a short text with its
publication day too).
"""

import hashlib
import re
import unicodedata
from collections.abc import Iterator
from urllib.parse import urlsplit

COPY = "the same text"  # post_aliases.why of a copy
MIN_CHARS = 200  # of normalised text: below, two posts may well say the same few words
CHUNK = 1 << 18  # characters normalised and hashed at a time
SPACE = re.compile(r"\s+")


def text_key(title: str | None, text: str | None) -> str | None:
    """SHA-256 of the title and the text, Unicode and white space normalised; None for a short or
    empty text. The title is part of it: posts of one template (a series' "nothing new this week")
    or whose pages gave only the theme's words have one text and are still several posts."""
    digest = hashlib.sha256(f"{''.join(_normal(title or ''))}\n".encode())
    length = 0
    for part in _normal(text or ""):  # a 15 MB text is not held a second time, whole or as words
        digest.update(part.encode())
        length += len(part)
    return digest.hexdigest() if length >= MIN_CHARS else None


def _normal(text: str) -> Iterator[str]:
    """The text in NFKC, its white space collapsed to single spaces and stripped at both ends,
    in parts of at most CHUNK characters: the white space of a 15 MB text replaced at once
    makes a list of its 5 million words and spaces (190 MB)."""
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    started = space = False  # a word was given; a space is owed before the next one
    for start in range(0, len(text), CHUNK):
        part = SPACE.sub(" ", text[start:start + CHUNK])
        words = part.strip(" ")
        if words:
            if started and (space or part[0] == " "):
                yield " "
            yield words
            started, space = True, part[-1] == " "
        elif part:
            space = True


def outranks(url: str, guid: str | None, other: str, other_guid: str | None) -> bool:
    """True when ``url`` is more surely the post's own URL than ``other``: a feed lists it (the
    post has the feed's guid) and not the other; else its path is shorter; else it has no query
    string where the other has one, or a shorter one (``/a/`` before ``/a/?from=home``); else it
    sorts first. Never the order in which the two were known: only what the archive keeps of every
    run counts (a listing read before or after the page, a sitemap unchanged since, would make the
    choice depend on the order the pages answered in), and two different URLs never tie."""
    mine, theirs = urlsplit(url), urlsplit(other)
    rank = (guid is not None, -len(mine.path), -len(mine.query))
    other_rank = (other_guid is not None, -len(theirs.path), -len(theirs.query))
    return rank > other_rank if rank != other_rank else url < other
