"""Entity bombs in XML (feeds, sitemaps, OPML lists) are refused before anything parses them.

A document's DTD may declare entities, and each reference to one is replaced by its text: ten
levels of ten references (billion laughs) make a billion copies of three letters; one entity of
100,000 characters referred to a million times (the quadratic blowup) makes 100 GB of a 3 MB
document. Expat stops at a ratio of its own, and feedparser then reads the document again with
its lenient parser, which does not expand them but holds every reference: 400 MB for one
such feed. An external entity names a file or a URL, which no parser here may read.

``check_entities`` reads the document's prologue alone (expat, stopped at the root element) and
refuses it when it declares an external entity, a parameter entity, or an entity whose text is
longer than a reference to it: what remains (``<!ENTITY nbsp "&#160;">``, as hand-written feeds
declare) never makes the document bigger than it is.
"""

import re
from xml.parsers import expat

ENTITY_DECLARATION = re.compile(rb"<!ENTITY", re.IGNORECASE)
CHUNK = 1 << 16


class XmlEntitiesError(ValueError):
    """The document declares entities that could expand past its own size, or read what is not in it."""


class _RootReached(Exception):
    pass


def check_entities(xml: bytes) -> None:
    """Return when ``xml``'s entities never make it bigger than it is (or it declares none).

    Raises:
        XmlEntitiesError: an external or parameter entity, or one whose text is longer than a
            reference to it; or a document whose prologue expat cannot read that declares entities.
    """
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.EntityDeclHandler = _declared
    parser.StartElementHandler = _root
    try:
        for start in range(0, len(xml), CHUNK):
            parser.Parse(xml[start:start + CHUNK], False)
        parser.Parse(b"", True)
    except _RootReached:
        return
    except expat.ExpatError as e:
        # not XML as expat reads it: feedparser's lenient parser reads it next, and holds every
        # reference to a declared entity, expanded or not
        if ENTITY_DECLARATION.search(xml):
            raise XmlEntitiesError(f"declares entities and is not well-formed XML ({e})") from None


def _declared(name: str, is_parameter: int, value: str | None, base: str | None, system_id: str | None,
              public_id: str | None, notation: str | None) -> None:
    if is_parameter:
        raise XmlEntitiesError(f"declares the parameter entity %{name};: never read")
    if value is None:
        raise XmlEntitiesError(f"declares the external entity &{name}; ({system_id or public_id}): never read")
    if len(value) > len(name) + 2:
        raise XmlEntitiesError(f"declares the entity &{name}; of {len(value):,} characters, longer than a reference "
                               "to it: each reference would grow the document (an entity bomb), not read")


def _root(name: str, attributes: dict[str, str]) -> None:
    raise _RootReached
