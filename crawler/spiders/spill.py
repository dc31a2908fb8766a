"""A dict and a set that keep their first keys in memory and the rest on disk.

What a crawl remembers per blog (the URLs it has seen, the pages it judged,
the feed's entries) grows with the blog. Up to ``limit`` keys stay in a plain
dict; beyond that they go to a temporary SQLite database on disk (SQLite's
``""`` file: private, deleted when closed), whose page cache is small and
fixed, so the crawl's memory stays bounded however large the blog.
"""

import pickle
import sqlite3
from collections.abc import Iterator, MutableMapping
from typing import Any

CACHE_KIB = 2048  # SQLite's page cache for the spilled keys


class SpillDict(MutableMapping[str, Any]):
    def __init__(self, limit: int):
        self.limit = limit
        self.memory: dict[str, Any] = {}
        self.disk: sqlite3.Connection | None = None
        self.spilled = 0  # keys on disk

    def _on_disk(self, key: str) -> bytes | None:
        if self.disk is None:
            return None
        row = self.disk.execute("select value from spilled where key = ?", (key,)).fetchone()
        return row[0] if row else None

    def __contains__(self, key: object) -> bool:
        return key in self.memory or (isinstance(key, str) and self._on_disk(key) is not None)

    def __getitem__(self, key: str) -> Any:
        if key in self.memory:
            return self.memory[key]
        value = self._on_disk(key)
        if value is None:
            raise KeyError(key)
        return pickle.loads(value)

    def __setitem__(self, key: str, value: Any) -> None:
        if key in self.memory or (len(self.memory) < self.limit and self._on_disk(key) is None):
            self.memory[key] = value
            return
        if self.disk is None:
            self.disk = sqlite3.connect("")
            self.disk.execute(f"pragma cache_size = -{CACHE_KIB}")
            self.disk.execute("create table spilled (key text primary key, value blob not null) without rowid")
        if self._on_disk(key) is None:
            self.spilled += 1
        self.disk.execute("insert or replace into spilled values (?, ?)", (key, pickle.dumps(value)))

    def __delitem__(self, key: str) -> None:
        if key in self.memory:
            del self.memory[key]
        elif self._on_disk(key) is not None:
            assert self.disk is not None
            self.disk.execute("delete from spilled where key = ?", (key,))
            self.spilled -= 1
        else:
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        yield from list(self.memory)
        if self.disk is not None:
            yield from (key for (key,) in self.disk.execute("select key from spilled").fetchall())

    def __len__(self) -> int:
        return len(self.memory) + self.spilled

    def close(self) -> None:
        """Delete what was spilled (the temporary file goes with its connection)."""
        if self.disk is not None:
            self.disk.close()
            self.disk = None
        self.memory.clear()
        self.spilled = 0


class SpillSet(SpillDict):
    """The keys of a ``SpillDict``, as a set that only grows."""

    def add(self, key: str) -> None:
        self[key] = None
