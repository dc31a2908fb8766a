"""Imported once by each extraction worker, before it takes any page.

The first extraction in a process loads what trafilatura, htmldate and
py3langid load lazily (half a second, tens of megabytes); done here, a
worker says it is ready only once it is warm, and its first page takes no
longer than the others. What it loaded is then frozen (``gc.freeze()``): the
collector never goes through those objects again.
"""

import gc

from crawler.extract.post import extract_post

SAMPLE = """<html lang="en"><head><title>Warm-up</title>
<meta property="article:published_time" content="2024-05-01T10:00:00Z"></head>
<body><article><h1>Warm-up</h1><p>{}</p></article></body></html>""".format(
    "This paragraph is long enough for the language of its text to be guessed, "
    "and for the extractor to take it for the body of an article about nothing at all. " * 4
)

extract_post("https://example.com/2024/05/warm-up/", SAMPLE)
gc.collect()
gc.freeze()
