import json

import pytest
from conftest import SITE

from crawler.feeds import FeedError, looks_like_feed, parse_feed

RSS = (SITE / "feed.xml").read_bytes()
ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Notes</title><link href="https://blog.test/"/>
  <link rel="next" href="https://blog.test/atom.xml?page=2"/>
  <entry>
    <title>First &amp; last</title>
    <link href="/2024/07/30/first/"/>
    <id>tag:blog.test,2024:1</id>
    <published>2024-07-30T14:03:00+08:00</published>
    <updated>2024-08-01T00:00:00Z</updated>
    <author><name>Ann</name></author>
    <category term="notes"/><category term="sqlite"/>
    <content type="html">&lt;p&gt;Full text&lt;/p&gt;</content>
  </entry>
</feed>"""
JSON_FEED = json.dumps(
    {
        "version": "https://jsonfeed.org/version/1.1",
        "title": "Notes",
        "home_page_url": "https://blog.test/",
        "items": [
            {
                "id": "42",
                "url": "https://blog.test/p/42",
                "title": "JSON",
                "date_published": "2024-07-30T14:03:00+08:00",
                "authors": [{"name": "Ann"}],
                "tags": ["a", "b"],
                "content_html": "<p>Hello</p>",
            },
            {"id": "no-url"},
        ],
    }
).encode()


def test_rss_entries_have_guid_dates_and_categories():
    feed = parse_feed(RSS, "http://example-notes.test/feed.xml")
    assert feed["title"] == "Example Notes"
    assert len(feed["entries"]) == 5
    newest = feed["entries"][0]
    assert newest["url"] == "http://example-notes.test/p/107/"
    assert newest["guid"] == "example-notes-107"
    assert newest["published"] == "2024-07-01T23:15:00Z"
    assert len(newest["tags"]) >= 2


def test_atom_entry_relative_link_and_next_page():
    feed = parse_feed(ATOM, "https://blog.test/atom.xml")
    (entry,) = feed["entries"]
    assert entry["url"] == "https://blog.test/2024/07/30/first/"
    assert entry["title"] == "First & last"
    assert entry["guid"] == "tag:blog.test,2024:1"
    assert entry["published"] == "2024-07-30T06:03:00Z"
    assert entry["updated"] == "2024-08-01T00:00:00Z"
    assert entry["author"] == "Ann"
    assert entry["tags"] == ["notes", "sqlite"]
    assert entry["content"] == "<p>Full text</p>"
    assert feed["next"] == ["https://blog.test/atom.xml?page=2"]


def test_json_feed_items_without_url_are_skipped():
    feed = parse_feed(JSON_FEED, "https://blog.test/feed.json")
    (entry,) = feed["entries"]
    assert entry["guid"] == "42"
    assert entry["author"] == "Ann"
    assert entry["published"] == "2024-07-30T06:03:00Z"
    assert entry["tags"] == ["a", "b"]


@pytest.mark.parametrize("body", [b"", b"<html><body>not a feed</body></html>", b"{not json", b'{"version": "x"}'])
def test_non_feeds_raise(body):
    with pytest.raises(FeedError):
        parse_feed(body, "https://blog.test/feed")


def test_sniffing():
    assert looks_like_feed(RSS)
    assert looks_like_feed(ATOM)
    assert looks_like_feed(JSON_FEED, "application/feed+json")
    assert not looks_like_feed((SITE / "index.html").read_bytes(), "text/html")
