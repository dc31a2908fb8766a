import pytest

from archive.core.urls import host_of, is_http_url, normalize_url, parse_host_map


@pytest.mark.parametrize(
    "url,expected",
    [
        ("HTTP://Example.COM:80/a/index.html#top", "http://example.com/a/"),
        ("https://example.com:443/p/378", "https://example.com/p/378"),
        ("https://example.com:8443/p/378", "https://example.com:8443/p/378"),
        ("https://example.com/p/1?utm_source=rss&utm_medium=feed&b=2&a=1", "https://example.com/p/1?a=1&b=2"),
        ("https://user:secret@example.com/p/1", "https://example.com/p/1"),
        ("http://example.com", "http://example.com/"),
    ],
)
def test_normalize_url(url, expected):
    assert normalize_url(url) == expected


def test_raw_cjk_and_percent_encoded_paths_are_one_url():
    raw = normalize_url("http://adu.404nf.cn/2016/03/30/HTTP协议详解/")
    encoded = normalize_url("http://adu.404nf.cn/2016/03/30/HTTP%E5%8D%8F%E8%AE%AE%E8%AF%A6%E8%A7%A3/")
    assert raw == encoded == "http://adu.404nf.cn/2016/03/30/HTTP%E5%8D%8F%E8%AE%AE%E8%AF%A6%E8%A7%A3/"


def test_host_of_keeps_only_non_default_ports():
    assert host_of("http://LocalHost:1313/posts/") == "localhost:1313"
    assert host_of("https://example.com:443/") == "example.com"


@pytest.mark.parametrize("url", ["ftp://example.com/", "mailto:a@b.c", "javascript:alert(1)", "/relative", "http://"])
def test_only_absolute_http_urls_are_crawlable(url):
    assert not is_http_url(url)


def test_parse_host_map():
    assert parse_host_map(["localhost:1313=http://127.0.0.1:8000/", "Example.com=https://mirror.test"]) == {
        "localhost:1313": "http://127.0.0.1:8000",
        "example.com": "https://mirror.test",
    }


@pytest.mark.parametrize("pair", ["example.com", "=http://x", "example.com=ftp://x", "example.com=", "a/b=http://x"])
def test_parse_host_map_rejects(pair):
    with pytest.raises(ValueError, match="HOST=BASE"):
        parse_host_map([pair])
