"""Copies of a post within one blog: the same title and text at a second URL is the same post.

A static generator may publish a post twice (a copy in an asset folder, at
``/post/post/``); a blog may serve one post under two paths that no redirect or
canonical link ties together. A post's title and text, normalised, are
hashed (``text_key``); a second URL of the same source with the same hash becomes an
alias of the post (``why`` = ``COPY``). Which URL is the post's own is decided by
the evidence that names each (``outranks``), so the outcome does not depend on
which copy was fetched first. Texts too short to tell a post from a stub (a
password form, "coming soon") have no key and are never merged.
"""

import hashlib
import unicodedata
from urllib.parse import urlsplit

COPY = "the same text"  # post_aliases.why of a copy
MIN_CHARS = 200  # of normalised text: below, two posts may well say the same few words


def text_key(title: str | None, text: str | None) -> str | None:
    """SHA-256 of the title and the text, Unicode and white space normalised; None for a short or
    empty text. The title is part of it: posts of one template (a series' "nothing new this week")
    or whose pages gave only the theme's words have one text and are still several posts."""
    normal = " ".join(unicodedata.normalize("NFKC", text or "").split())
    if len(normal) < MIN_CHARS:
        return None
    heading = " ".join(unicodedata.normalize("NFKC", title or "").split())
    return hashlib.sha256(f"{heading}\n{normal}".encode("utf-8")).hexdigest()


def outranks(url: str, evidence: list[str], other: str, other_evidence: list[str]) -> bool:
    """True when ``url`` is more surely the post's own URL than ``other``: more of the blog's
    sources name it (its feeds, sitemaps, listings, its own rel=canonical), or as many and its
    path is shorter. Ties go to ``other``, the URL known first."""
    return (len(set(evidence)), -len(urlsplit(url).path)) > (len(set(other_evidence)), -len(urlsplit(other).path))
