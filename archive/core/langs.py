"""Language codes as ``posts.lang`` holds them: ISO 639-1, so that one code finds a language.

A code comes from a page's ``lang`` (``zh-Hans-CN``, ``yue-HK``, ``cmn``) or from a guess at
the text (py3langid names some languages by their ISO 639-3 code: ``wuu``, ``yue``, ``arz``).
Its language subtag is kept, lower-cased, and an ISO 639-3 code becomes the ISO 639-1 code of
its language or, for a member of a macrolanguage, of the macrolanguage (``wuu``, ``yue`` and
``cmn`` are Chinese, ``zh``), from SIL's tables (``archive.core.iso639``). A code of a language with
neither keeps its ISO 639-3 form; a two-letter code is kept as it is (``id`` stays Indonesian,
not the Malay macrolanguage).
"""

from archive.core.iso639 import ISO639_1  # ISO 639-3 code: ISO 639-1 code


def iso639_1(code: str | None) -> str | None:
    """The language of ``code`` (a language tag, ``_`` or ``-`` between its parts) as
    ``posts.lang`` holds it; None for no code."""
    language = (code or "").replace("_", "-").split("-")[0].lower()
    return ISO639_1.get(language, language) or None
