"""What a crawl remembers per blog stays bounded in memory: beyond a limit it goes to disk."""

import json
import subprocess
import sys
import tracemalloc

from blogserver import Blog, BlogServer
from conftest import ROOT
from test_interruptions import snapshot

from crawler.spiders.spill import SpillDict, SpillSet


def test_spilled_keys_read_back_like_a_dict():
    d = SpillDict(2)
    entries = {f"https://blog.test/p/{n}": {"title": f"Post {n}", "tags": ["a", str(n)]} for n in range(6)}
    for key, value in entries.items():
        d[key] = value
    assert len(d.memory) == 2 and d.spilled == 4 and len(d) == 6
    assert dict(d.items()) == entries and set(d) == set(entries)
    assert "https://blog.test/p/5" in d and "https://blog.test/p/6" not in d
    assert d.get("https://blog.test/p/6") is None
    d["https://blog.test/p/5"] = {"title": "changed"}  # replaced on disk, not counted twice
    assert len(d) == 6 and d["https://blog.test/p/5"] == {"title": "changed"}
    del d["https://blog.test/p/4"], d["https://blog.test/p/0"]
    assert len(d) == 4 and "https://blog.test/p/4" not in d and "https://blog.test/p/0" not in d
    d.close()
    assert len(d) == 0 and d.disk is None


def test_memory_stays_flat_past_the_limit():
    keys = [f"https://blog.test/posts/2024/{n:06d}/a-long-enough-slug-for-a-post/" for n in range(200_000)]
    peaks = {}
    for limit in (1_000, len(keys)):
        tracemalloc.start()
        seen = SpillSet(limit)
        for key in keys:
            seen.add(key)
        assert len(seen) == len(keys) and keys[-1] in seen and keys[0] in seen
        peaks[limit] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        seen.close()
    assert peaks[1_000] < 2_000_000  # what stays in memory: a thousand keys
    assert peaks[len(keys)] > 10 * peaks[1_000]  # all in memory: the growth the limit prevents


def test_a_crawl_past_the_limit_archives_the_same(tmp_path):
    blog = Blog("spill.test", 30)
    snapshots, stderr = {}, {}
    with BlogServer(blog, delay=0) as server:
        for keys in (100_000, 4):
            db = tmp_path / f"keys-{keys}.db"
            proc = subprocess.run(
                [sys.executable, "-m", "scrapy", "crawl", "blog", "-a", "url=http://spill.test/",
                 "-s", f"ARCHIVE_PATH={db}", "-s", f"ARCHIVE_MAP_HOSTS={json.dumps({'spill.test': server.base})}",
                 "-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=0", "-s", f"ARCHIVE_MEMORY_KEYS={keys}",
                 "-s", "LOG_LEVEL=INFO"],
                cwd=ROOT, capture_output=True, text=True, timeout=300,
            )
            assert proc.returncode == 0, proc.stderr[-2000:]
            snapshots[keys], stderr[keys] = snapshot(db), proc.stderr
    assert len(snapshots[4]["posts"]) == 30
    assert snapshots[4] == snapshots[100_000]
    assert "'archive/keys_on_disk': 0," in stderr[100_000]
    assert "'archive/keys_on_disk'" in stderr[4] and "'archive/keys_on_disk': 0," not in stderr[4]
