"""``python -m crawler.extract.offline FILE ... [--url URL]``: extract saved pages, no network.

Prints one JSON object per file, in order: the post's fields, or
``{"file": ..., "error": ...}``. ``blogarchive extract`` runs this, so the
archive's command line uses the crawler's extraction without importing it.
"""

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from w3lib.encoding import html_to_unicode

from crawler.extract.post import extract_post


def extract_file(path: str, url: str | None) -> dict:
    """Extract one saved HTML file; the result or an error, as a dict."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        return {"file": path, "error": f"cannot read: {e.strerror}"}
    _, html = html_to_unicode(None, data)  # BOM, then <meta charset>, then UTF-8
    post = extract_post(url or Path(path).resolve().as_uri(), html)
    if post is None:
        return {"file": path, "error": "no article text found"}
    fields = asdict(post)
    del fields["source_id"], fields["aliases"]  # known only to a crawl
    return {"file": path, **fields}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crawler.extract.offline")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--url")
    args = parser.parse_args(argv)
    for path in args.files:
        print(json.dumps(extract_file(path, args.url), ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
