"""Start-up: what the command line and the crawl's process import before the first request.

Only the extraction workers need trafilatura and its helpers (and numpy, through its language
detector); only a cluster needs Redis; only a notification needs Apprise (a crawl with no target
never imports it); only a page that needs a browser needs Playwright (docs/rendering.md); nothing
needs Scrapy's remote control (aiohttp), nor pydantic (itemadapter loads it when installed; the
items are dataclasses). Each
costs tenths of a second at every start (docs/benchmarks.md, start-up)."""

import subprocess
import sys

from conftest import ROOT

HEAVY = ("trafilatura", "htmldate", "justext", "py3langid", "numpy", "redis", "scrapy_redis", "aiohttp", "pydantic",
         "apprise", "playwright", "scrapy_playwright")

# The crawl's process before its first request: its settings, the spider, and every component
# those settings name (Scrapy's base lists included), loaded as Scrapy loads them.
CRAWL = """
import sys
from scrapy.settings import Settings
from scrapy.utils.misc import load_object
import crawler.settings
settings = Settings()
settings.setmodule(crawler.settings, priority="project")
import crawler.spiders.blog
for name in ("DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES", "ITEM_PIPELINES", "EXTENSIONS"):
    for path in settings.get_component_priority_dict_with_base(name):  # imports the keys set to None too
        load_object(path)
for path in settings.getwithbase("DOWNLOAD_HANDLERS").values():
    if path:
        load_object(path)
print(sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1:])))
"""


def imported(code: str, *args: str) -> str:
    return subprocess.run([sys.executable, "-c", code, *HEAVY, *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_the_command_line_imports_nothing_heavy():
    assert imported("import sys, archive.cli; print(sorted({m.split('.')[0] for m in sys.modules} & set(sys.argv[1:])))") == "[]"


def test_the_crawl_imports_nothing_heavy_before_its_first_request():
    assert imported(CRAWL) == "[]"


def test_numpy_is_still_importable_after_the_archive():
    out = imported("import archive, numpy; print(numpy.zeros(2).tolist())")
    assert out == "[0.0, 0.0]"


def test_pydantic_is_still_importable_after_the_crawl_s_settings():
    out = imported("import crawler.settings, itemadapter, pydantic; print(pydantic.BaseModel.__name__)")
    assert out == "BaseModel"


def test_a_crawl_without_notify_targets_imports_no_apprise(tmp_path):
    code = ("import sys; from archive.notify import deliver_after_crawl; deliver_after_crawl(sys.argv[-1]);"
            " print(sorted({m.split('.')[0] for m in sys.modules} & set(sys.argv[1:])))")
    assert imported(code, str(tmp_path / "archive.db")) == "[]"
