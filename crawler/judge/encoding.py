"""Which encoding a page or feed is really in, when HTTP, BOM and the document disagree.

Browsers trust the HTTP charset first; blogs often send a default one
(ISO-8859-1, or UTF-8) that does not match pages written in GBK, Big5 or
Shift_JIS. Here a declaration that decodes the bytes cleanly beats one that
does not, and the document's own declaration beats a single-byte default.
"""

import codecs
import re

from w3lib.encoding import html_body_declared_encoding, html_to_unicode, read_bom, resolve_encoding

XML_DECLARATION = re.compile(rb"^\s*<\?xml[^>]*encoding=[\"']([A-Za-z0-9._-]+)[\"']", re.I)
SINGLE_BYTE = {"cp1252", "latin-1", "iso8859-1", "ascii"}
CHECK_BYTES = 1 << 20


def _decodes(body: bytes, encoding: str | None) -> bool:
    """True when ``body`` is text in ``encoding``: decoded a megabyte at a time, each piece let go
    (decoded whole, a 19 MB page took 19 MB or more of text for the question)."""
    if not encoding:
        return False
    try:
        decoder = codecs.getincrementaldecoder(encoding)()
        for start in range(0, len(body), CHECK_BYTES):
            decoder.decode(body[start:start + CHECK_BYTES])
        decoder.decode(b"", final=True)
    except (UnicodeDecodeError, LookupError):
        return False
    return True


def _resolve(name: str | None) -> str | None:
    resolved = resolve_encoding(name) if name else None
    return codecs.lookup(resolved).name if resolved else None


def choose_encoding(body: bytes, http_charset: str | None, declared: str | None) -> str:
    """The encoding to read ``body`` with, given the HTTP charset and the document's declaration."""
    bom, _ = read_bom(body)
    if bom:
        return _resolve(bom) or "utf-8"
    http = _resolve(http_charset)
    doc = _resolve(declared)
    if doc and doc != http and _decodes(body, doc) and (http is None or http in SINGLE_BYTE or not _decodes(body, http)):
        return doc
    if http and _decodes(body, http):
        return http
    if _decodes(body, "utf-8"):
        return "utf-8"
    return doc or http or "cp1252"


def html_encoding(body: bytes, http_charset: str | None) -> str:
    """The encoding of an HTML page."""
    return choose_encoding(body, http_charset, html_body_declared_encoding(body))


def xml_to_utf8(body: bytes, http_charset: str | None) -> bytes:
    """An XML feed re-encoded as UTF-8, with its declaration saying so."""
    if body[:4] in (b"<\x00?\x00", b"\x00<\x00?"):  # UTF-16 without a BOM
        encoding = "utf-16-le" if body[:1] == b"<" else "utf-16-be"
    else:
        match = XML_DECLARATION.match(body[:200])
        encoding = choose_encoding(body, http_charset, match.group(1).decode() if match else "utf-8")
    text = body.decode(encoding, errors="replace").lstrip("\ufeff")
    text = re.sub(r"^(\s*<\?xml[^>]*?encoding=)[\"'][^\"']*[\"']", r'\1"utf-8"', text, count=1)
    return text.encode("utf-8")


def page_text(page: bytes, encoding: str) -> str:
    """A page's bytes as text, as Scrapy reads a response's ``text`` (a BOM first, then ``encoding``)."""
    return html_to_unicode(f"charset={encoding}", page)[1]
