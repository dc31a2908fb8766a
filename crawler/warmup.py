"""Imported once by the extraction forkserver, before it forks any worker.

The first extraction in a process loads what trafilatura, htmldate and
py3langid load lazily (half a second, tens of megabytes); done here, every
worker starts warm and shares those pages with the others. They are then frozen
(``gc.freeze()``): a worker's collector never goes through them, so it never
writes to their pages, which stay shared instead of being copied into each worker.
"""

import gc

from .extract import extract_post

SAMPLE = """<html lang="en"><head><title>Warm-up</title>
<meta property="article:published_time" content="2024-05-01T10:00:00Z"></head>
<body><article><h1>Warm-up</h1><p>{}</p></article></body></html>""".format(
    "This paragraph is long enough for the language of its text to be guessed, "
    "and for the extractor to take it for the body of an article about nothing at all. " * 4
)

extract_post("https://example.com/2024/05/warm-up/", SAMPLE)
gc.collect()
gc.freeze()
