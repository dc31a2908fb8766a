"""OPML subscription lists, in and out, as feed readers write and read them (OPML 2.0).

``parse_opml`` reads every outline that names a feed (``xmlUrl``) or only a
site (``htmlUrl``), with its title and the folders it sits in (a feed filed in
two folders is one entry with both). The XML is parsed strictly, by lxml,
with no entities and no network: a malformed list is refused whole.
``add_subscriptions`` makes each entry a source; ``export_opml`` writes the
sources back, each in its folders.
"""

import json
from datetime import datetime, timezone
from email.utils import format_datetime
from typing import Any

from lxml import etree
from sqlite_utils import Database

from archive.core.urls import is_http_url, normalize_url
from archive.core.xmlsafety import check_entities
from archive.tables.writes import ensure_source

PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


def parse_opml(data: bytes) -> tuple[list[dict[str, Any]], list[str]]:
    """The subscriptions of an OPML document, and the outlines skipped (a URL that is not http(s)).

    Raises:
        ValueError: not well-formed XML, or not OPML.
        archive.core.xmlsafety.XmlEntitiesError: entities that could grow the document, or an external one.
    """
    check_entities(data)  # lxml expands none here; an entity bomb is still said to be one
    try:
        root = etree.fromstring(data, PARSER)
    except etree.XMLSyntaxError as e:
        raise ValueError(f"not well-formed XML: {e}") from None
    body = root.find("body") if root.tag == "opml" else None
    if body is None:
        raise ValueError(f"not an OPML subscription list (its root is <{root.tag}>, with no <body>)")
    entries: dict[str, dict[str, Any]] = {}
    skipped: list[str] = []
    _walk(body, [], entries, skipped)
    return list(entries.values()), skipped


def _walk(parent: Any, path: list[str], entries: dict[str, dict[str, Any]], skipped: list[str]) -> None:
    for outline in parent.iterchildren("outline"):
        attrs = {k.lower(): v.strip() for k, v in outline.attrib.items()}  # xmlUrl, xmlurl: readers differ
        title = attrs.get("title") or attrs.get("text") or ""
        url = attrs.get("xmlurl") or attrs.get("htmlurl")
        if url and not is_http_url(url):
            skipped.append(f"{title or url}: not an http(s) URL: {url}")
        elif url:
            entry = entries.setdefault(normalize_url(url), {"url": url, "title": title, "site_url": attrs.get("htmlurl"),
                                                            "feed": bool(attrs.get("xmlurl")), "folders": []})
            if path and "/".join(path) not in entry["folders"]:
                entry["folders"].append("/".join(path))
        _walk(outline, [*path, title] if not url else path, entries, skipped)


def add_subscriptions(db: Database, entries: list[dict[str, Any]]) -> list[tuple[dict[str, Any], bool]]:
    """Make each entry a source (named by its title where that name is free); return (source, new)."""
    results = []
    with db.atomic():
        for entry in entries:
            known = list(db.query("select * from sources where url = ?", [normalize_url(entry["url"])]))
            free = entry["title"] and not list(db.query("select 1 from sources where name = ?", [entry["title"]]))
            source = known[0] if known else ensure_source(db, entry["url"], name=entry["title"] if free else None)
            folders = [f for f in (source.get("folder") or "").splitlines() if f]
            folders += [f for f in entry["folders"] if f not in folders]
            db.table("sources").update(source["id"], {"folder": "\n".join(folders) or None,
                                                "title": source.get("title") or entry["title"] or None,
                                                "site_url": source.get("site_url") or entry["site_url"],
                                                # what the list says the URL is, until a crawl finds out
                                                "kind": source["kind"] or ("feed" if entry["feed"] else None)})
            results.append((dict(db.table("sources").get(source["id"])), not known))
    return results


def export_opml(db: Database) -> str:
    """The sources as an OPML 2.0 subscription list: title, ``xmlUrl`` (the feed), ``htmlUrl`` (the blog)."""
    root = etree.Element("opml", version="2.0")
    head = etree.SubElement(root, "head")
    etree.SubElement(head, "title").text = "blogarchive sources"
    etree.SubElement(head, "dateCreated").text = format_datetime(datetime.now(timezone.utc), usegmt=True)  # RFC 822
    body = etree.SubElement(root, "body")
    folders: dict[str, Any] = {"": body}
    for source in db.query("select * from sources order by id"):
        for path in (source.get("folder") or "").splitlines() or [""]:
            etree.SubElement(_folder(folders, path), "outline", _outline(source))
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + etree.tostring(root, encoding="unicode", pretty_print=True)


def _folder(folders: dict[str, Any], path: str) -> Any:
    if path not in folders:
        parent, _, name = path.rpartition("/")
        folders[path] = etree.SubElement(_folder(folders, parent), "outline", text=name, title=name)
    return folders[path]


def _outline(source: dict[str, Any]) -> dict[str, str]:
    title = source.get("title") or source["name"]
    feeds = json.loads(source["feeds"] or "[]")
    site = source.get("site_url")
    if source["kind"] == "feed":
        feed, html = source["url"], site or source["scope"]
    else:
        feed, html = (feeds[0] if feeds else None), site or (source["scope"] if source["kind"] == "sitemap" else source["url"])
    attrs = {"text": title, "title": title, "type": "rss", "xmlUrl": feed, "htmlUrl": html}
    if not feed:
        del attrs["type"], attrs["xmlUrl"]
    return attrs
