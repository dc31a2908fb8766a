import json

import pytest
from conftest import SITE

from crawler.discover.feeds import FeedError, looks_like_feed, parse_feed

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


def test_json_feed_items_without_url_are_kept_with_a_stable_id():
    feed = parse_feed(JSON_FEED, "https://blog.test/feed.json")
    entry, linkless = feed["entries"]
    assert (linkless["url"], linkless["guid"]) == (None, "no-url")
    assert entry["guid"] == "42"
    assert entry["author"] == "Ann"
    assert entry["published"] == "2024-07-30T06:03:00Z"
    assert entry["tags"] == ["a", "b"]


@pytest.mark.parametrize("body", [b"", b"<html><body>not a feed</body></html>", b"{not json", b'{"version": "x"}'])
def test_non_feeds_raise(body):
    with pytest.raises(FeedError):
        parse_feed(body, "https://blog.test/feed")


@pytest.mark.parametrize("body", [
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>Tag: bes</title><link>http://a.test/</link></channel></rss>',
    b'<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Empty</title></feed>',
])
def test_an_empty_feed_is_a_feed_with_no_entries(body):
    feed = parse_feed(body, "http://a.test/tag/bes/feed/")
    assert feed["entries"] == [] and feed["replies"] == []


def test_sniffing():
    assert looks_like_feed(RSS)
    assert looks_like_feed(ATOM)
    assert looks_like_feed(JSON_FEED, "application/feed+json")
    assert not looks_like_feed((SITE / "index.html").read_bytes(), "text/html")


RSS_091 = b"""<?xml version="1.0"?>
<rss version="0.91"><channel><title>Old</title><link>http://old.test/</link>
<item><title>Ninety-one</title><link>http://old.test/91.html</link><description>Short</description></item>
</channel></rss>"""
RDF = b"""<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
         xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="http://rdf.test/"><title>RDF</title><link>http://rdf.test/</link></channel>
  <item rdf:about="http://rdf.test/one"><title>One</title><link>http://rdf.test/one</link>
    <dc:date>2024-07-30T14:03:00+08:00</dc:date><dc:subject>notes</dc:subject><dc:creator>Ann</dc:creator></item>
</rdf:RDF>"""
ATOM_03 = b"""<?xml version="1.0" encoding="utf-8"?>
<feed version="0.3" xmlns="http://purl.org/atom/ns#">
  <title>Atom 0.3</title><link rel="alternate" type="text/html" href="http://a03.test/"/>
  <entry><title>Zero three</title><link rel="alternate" type="text/html" href="http://a03.test/e1"/>
    <id>tag:a03.test,2004:1</id><issued>2004-07-30T14:03:00Z</issued><modified>2004-08-01T00:00:00Z</modified></entry>
</feed>"""
GBK_RSS = """<?xml version="1.0" encoding="gb2312"?>
<rss version="2.0"><channel><title>朱镕基 堃</title><link>http://gbk.test/</link>
<item><title>内存泄漏 堃</title><link>http://gbk.test/a/1.html</link><pubDate>Tue, 30 Jul 2024 14:03:00 +0800</pubDate></item>
</channel></rss>""".encode("gbk")


@pytest.mark.parametrize(
    "body,url,title,published",
    [
        (RSS_091, "http://old.test/91.html", "Ninety-one", None),
        (RDF, "http://rdf.test/one", "One", "2024-07-30T06:03:00Z"),
        (ATOM_03, "http://a03.test/e1", "Zero three", "2004-07-30T14:03:00Z"),
    ],
    ids=["rss-0.91", "rss-1.0-rdf", "atom-0.3"],
)
def test_older_feed_formats(body, url, title, published):
    (entry,) = parse_feed(body, "http://feed.test/feed")["entries"]
    assert (entry["url"], entry["title"], entry["published"]) == (url, title, published)


def test_gbk_feed_with_a_wrong_http_charset_is_read_right():
    # GB2312 declared, a GBK-only character (堃) inside, and HTTP says ISO-8859-1.
    feed = parse_feed(GBK_RSS, "http://gbk.test/rss.xml", http_charset="iso-8859-1")
    assert feed["title"] == "朱镕基 堃"
    assert feed["entries"][0]["title"] == "内存泄漏 堃"


@pytest.mark.parametrize("bom", [True, False])
def test_utf16_feed(bom):
    body = ATOM.decode("utf-8").replace('encoding="utf-8"', 'encoding="utf-16"').encode("utf-16-le")
    if bom:
        body = b"\xff\xfe" + body
    assert parse_feed(body, "https://blog.test/atom.xml")["entries"][0]["title"] == "First & last"


def test_wordpress_feeds_are_recognised():
    body = RSS.replace(b"<channel>", b"<channel><generator>https://wordpress.org/?v=6.5</generator>", 1)
    assert parse_feed(body, "http://example-notes.test/feed.xml")["wordpress"]
    assert not parse_feed(RSS, "http://example-notes.test/feed.xml")["wordpress"]


BROKEN_RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>Broken &amp; kept</title>
<item><title>No link, no guid</title><description>Only words &nbsp; here &eacute;t&eacute;</description></item>
<item><title>Twin one</title><link>http://b.test/1</link><guid isPermaLink="false">same</guid><pubDate>yesterday-ish</pubDate></item>
<item><title>Twin two</title><link>http://b.test/2</link><guid isPermaLink="false">same</guid></item>
<item><title>Unclosed & ampersand</title><link>http://b.test/3</link>
</channel></rss>"""


def test_broken_feed_entries_are_kept_with_warnings():
    feed = parse_feed(BROKEN_RSS, "http://b.test/feed")
    linkless, twin1, twin2, *rest = feed["entries"]
    assert linkless["url"] is None and linkless["guid"].startswith("sha1:")
    assert parse_feed(BROKEN_RSS, "http://b.test/feed")["entries"][0]["guid"] == linkless["guid"]  # stable
    assert (twin1["guid"], twin2["guid"]) == ("same", None)
    assert twin1["published"] is None
    assert sorted(feed["warnings"]) == [
        "duplicate guid 'same' (entry http://b.test/2): kept without it",
        "unreadable date 'yesterday-ish' (entry http://b.test/1): kept without a date",
    ]


def test_json_feed_lone_surrogates_become_replacement_characters():
    body = b'{"version": "https://jsonfeed.org/version/1.1", "items": [{"id": "1", "url": "https://b.test/1", "title": "bad \\ud800 title"}]}'
    (entry,) = parse_feed(body, "https://b.test/feed.json")["entries"]
    assert entry["title"] == "bad \ufffd title"


def test_terms_whose_scheme_is_a_category_page_are_categories():
    atom = b"""<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>B</title>
    <entry><title>P</title><link href="https://blog.test/p/1/"/><id>1</id><updated>2024-01-01T00:00:00Z</updated>
    <category term="Tox Core" scheme="https://blog.test/categories/Jenkins/Tox-Core/"/>
    <category term="audio" scheme="https://blog.test/tags/audio/"/><category term="plain"/></entry></feed>"""
    entry = parse_feed(atom, "https://blog.test/atom.xml")["entries"][0]
    assert entry["categories"] == ["Tox Core"]
    assert entry["tags"] == ["audio", "plain"]


@pytest.mark.parametrize("kind", ["rss", "atom", "json"])
def test_a_huge_feed_is_read_up_to_its_first_entries(kind):
    count, limit = 120, 50
    if kind == "rss":
        items = "".join(f"<item><title>E{i}</title><link>https://b.test/p/{i}/</link></item>" for i in range(count))
        body = f'<rss version="2.0"><channel><title>T</title>{items}</channel></rss>'.encode()
    elif kind == "atom":
        items = "".join(f'<atom:entry><atom:title>E{i}</atom:title><atom:link href="https://b.test/p/{i}/"/>'
                        f"<atom:id>urn:{i}</atom:id></atom:entry>" for i in range(count))
        body = f'<atom:feed xmlns:atom="http://www.w3.org/2005/Atom"><atom:title>T</atom:title>{items}</atom:feed>'.encode()
    else:
        body = json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "T",
                           "items": [{"id": str(i), "url": f"https://b.test/p/{i}/"} for i in range(count)]}).encode()
    feed = parse_feed(body, "https://b.test/feed", max_entries=limit)
    assert [e["url"] for e in feed["entries"]] == [f"https://b.test/p/{i}/" for i in range(limit)]
    assert feed["warnings"] == [f"more than {limit} entries: only the first {limit} read"]
    whole = parse_feed(body, "https://b.test/feed", max_entries=count)
    assert len(whole["entries"]) == count and whole["warnings"] == []


def test_a_generators_zero_date_is_no_date():
    # Hugo's site feed lists an undated page with the zero date; feedparser reads the year 0001 as 2001
    feed = parse_feed(b"""<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><link>http://t.test/</link>
      <item><title>Resume</title><link>http://t.test/resume/</link><pubDate>Mon, 01 Jan 0001 00:00:00 +0000</pubDate></item>
      <item><title>A post</title><link>http://t.test/posts/a/</link><pubDate>Tue, 02 Jan 2024 10:00:00 +0000</pubDate></item>
      </channel></rss>""", "http://t.test/index.xml")
    assert [e["published"] for e in feed["entries"]] == [None, "2024-01-02T10:00:00Z"]
