"""What a blog repeats on its pages is the site's, not a post's: its name, tagline and header.

A ``SiteLearner`` watches one blog's pages during a crawl (their ``<title>``,
``og:site_name``, headings) and its feeds' channel titles. What it has learned,
a ``SiteParts``, goes with each page to extraction, which strips the site's
parts from title candidates and never chooses one of them as a post's title.
Pure: no Scrapy, no network.
"""

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

# Where a <title> joins a post's title to the site's name or tagline. Spaced
# separators are usual; "_", "｜" and long dashes also join unspaced ("Post_Site").
SEPARATOR = re.compile(r"\s+(?:[|\-–—·•»~/:]|::)\s+|\s*[_｜|–—·•»]\s*")
# An affix is the site's when this many pages and this share of them repeat it.
MIN_PAGES = 3
MIN_SHARE = 0.3
# Past this many remembered affixes, those seen once are forgotten (they are posts' own).
MAX_AFFIXES = 20_000
QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "«": '"', "»": '"', "「": '"', "」": '"'})


def fold(text: str | None) -> str:
    """``text`` for comparison: NFKC, typographic quotes and dashes, case and spaces folded."""
    text = unicodedata.normalize("NFKC", text or "").translate(QUOTES)
    text = re.sub(r"[‐‑‒–—―]", "-", text)
    return " ".join(text.casefold().split())


@dataclass(frozen=True)
class SiteParts:
    """The texts a blog repeats on its pages, as far as they are known."""

    names: frozenset[str] = frozenset()  # folded: site names, taglines, repeated headings
    prefixes: tuple[str, ...] = ()  # "Site | ", longest first
    suffixes: tuple[str, ...] = ()  # " | Site - Tagline", longest first
    keywords: frozenset[str] = frozenset()  # folded <meta name="keywords"> of listings and site pages

    def is_keywords(self, keywords: str | None) -> bool:
        """True when a page's keywords are the site's own, written on its listings too."""
        return fold(keywords) in self.keywords

    def is_site(self, text: str | None) -> bool:
        """True when ``text`` is one of the site's own texts, not a post's."""
        folded = fold(text)
        return bool(folded) and (folded in self.names or folded in {fold(a.strip(" |-–—_:·•»｜~/")) for a in (*self.prefixes, *self.suffixes)})

    def strip(self, title: str | None) -> str | None:
        """``title`` without the site's prefix, suffix or name parts; as it was if nothing is left."""
        title = " ".join((title or "").split())
        if not title:
            return None
        folded = fold(title)
        if folded in self.names:
            return title
        out = title
        for suffix in self.suffixes:
            if fold(out).endswith(fold(suffix)) and len(out) > len(suffix):
                out = out[: len(out) - len(suffix)]
                break
        for prefix in self.prefixes:
            if fold(out).startswith(fold(prefix)) and len(out) > len(prefix):
                out = out[len(prefix):]
                break
        parts = SEPARATOR.split(out)
        # a name at one end of what is left: last ("Post | Site") or, failing that, first
        end = len(parts)
        while len(parts) > 1 and fold(parts[-1]) in self.names:
            parts.pop()
        while len(parts) == end and len(parts) > 1 and fold(parts[0]) in self.names:
            parts.pop(0)
            end -= 1
        if len(parts) < len(SEPARATOR.split(out)):
            out = _rejoin(out, parts)
        return out.strip() or title


def _rejoin(title: str, kept: list[str]) -> str:
    """The span of ``title`` from the first kept part to the last, with its own separators."""
    start = title.find(kept[0])
    end = title.rfind(kept[-1]) + len(kept[-1])
    return title[start:end] if 0 <= start < end else " ".join(kept)


class SiteLearner:
    """Learns a blog's own texts from its pages and feeds, one page at a time."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.prefixes: Counter[str] = Counter()
        self.suffixes: Counter[str] = Counter()
        self.headings: Counter[str] = Counter()
        self.on_site_pages: Counter[str] = Counter()  # affixes seen on listings and site pages
        self.keywords: set[str] = set()
        # what has reached MIN_PAGES in each counter: all that ``parts`` ever needs to look at,
        # so a page costs the same however many unique titles came before it
        self.frequent: dict[int, set[str]] = {id(c): set() for c in (self.prefixes, self.suffixes, self.headings)}
        self.pages = 0
        self.posts = 0
        self._parts: SiteParts | None = None

    def note_name(self, name: str | None) -> None:
        """A name the blog gives itself: a feed's channel title, ``og:site_name``, its home page's title."""
        name = " ".join((name or "").split())
        if not name:
            return
        for text in (name, *SEPARATOR.split(name)):
            if fold(text) and fold(text) not in self.names:
                self.names.add(fold(text))
                self._parts = None

    def note_keywords(self, keywords: str | None) -> None:
        """The ``<meta name="keywords">`` of a listing or site page: the site's, not a post's tags."""
        if fold(keywords) and fold(keywords) not in self.keywords and len(self.keywords) < MAX_AFFIXES:
            self.keywords.add(fold(keywords))
            self._parts = None

    def note_page(self, title: str | None, headings: list[str], *, post: bool) -> None:
        """One page's ``<title>`` and top headings; ``post`` when the page was judged a post.

        An affix is learned only once a listing or site page has shown it too:
        a series' common prefix ("Weekly - 12") repeats on posts alone.
        """
        title = " ".join((title or "").split())
        self.pages += 1
        self._parts = None
        for match in SEPARATOR.finditer(title):
            if 0 < match.start() and match.end() < len(title):
                suffix, prefix = title[match.start():], title[: match.end()]
                self._count(self.suffixes, suffix)
                self._count(self.prefixes, prefix)
                if not post:
                    self.on_site_pages.update((suffix, prefix))
        if post:  # listings repeat their posts' titles; a heading on many posts is the site's
            self.posts += 1
            for text in set(headings):
                self._count(self.headings, fold(text))
        for counter in (self.prefixes, self.suffixes, self.headings, self.on_site_pages):
            if len(counter) > MAX_AFFIXES:
                for key in [k for k, n in counter.items() if n == 1]:
                    del counter[key]

    def _count(self, counter: Counter[str], key: str) -> None:
        counter[key] += 1
        if counter[key] == MIN_PAGES:
            self.frequent[id(counter)].add(key)

    def _repeated(self, counter: Counter[str], *, site_pages: bool = False, among: int | None = None) -> list[str]:
        floor = max(MIN_PAGES, MIN_SHARE * (self.pages if among is None else among))
        found = (k for k in self.frequent[id(counter)]
                 if counter[k] >= floor and (not site_pages or self.on_site_pages[k]))
        return sorted(found, key=len, reverse=True)

    @property
    def parts(self) -> SiteParts:
        """What is known now (recomputed only after something new was noted)."""
        if self._parts is None:
            names = set(self.names) | set(self._repeated(self.headings, among=2 * self.posts))
            suffixes = self._repeated(self.suffixes, site_pages=True)
            prefixes = self._repeated(self.prefixes, site_pages=True)
            self._parts = SiteParts(frozenset(names), tuple(prefixes), tuple(suffixes), frozenset(self.keywords))
        return self._parts
