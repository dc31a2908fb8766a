"""The fetch-only floor: Scrapy fetching a list of URLs, with no parsing and no extraction.

``scrapy runspider bench/fetch.py -a urls=FILE -a out=FILE.json`` (outside the
project, so none of its components run); writes the number of pages and the
seconds between the first request and the last response.
"""

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from scrapy import Request, Spider
from scrapy.http import Response


class FetchSpider(Spider):
    name = "fetch"

    def __init__(self, urls: str, out: str, **kwargs: Any):
        super().__init__(**kwargs)
        self.urls = Path(urls).read_text().split()
        self.out = out
        self.pages = 0
        self.first = self.last = 0.0

    async def start(self) -> AsyncIterator[Request]:
        self.first = time.monotonic()
        for url in self.urls:
            yield Request(url, callback=self.parse, dont_filter=True)

    def parse(self, response: Response) -> None:
        self.pages += 1
        self.last = time.monotonic()

    def closed(self, reason: str) -> None:
        Path(self.out).write_text(json.dumps({"pages": self.pages, "seconds": self.last - self.first}))
