"""Saved pages extracted as the crawl extracts them, no network: ``blogarchive extract`` calls this.

One dict per file: the post's fields, or ``{"file": ..., "error": ...}``.
"""

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

