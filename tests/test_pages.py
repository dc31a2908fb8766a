import pytest
from parsel import Selector

from crawler.judge.pages import (
    PageEvidence,
    SectionStats,
    article_marks,
    below,
    dated,
    decide,
    listing_links,
    listing_reason,
    read_evidence,
    site_page_entry,
    teasers,
    url_shape,
    visible_date,
)

SCOPE = "https://blog.test/"


@pytest.mark.parametrize(
    "url",
    [
        "https://blog.test/",
        "https://blog.test/page/2/",
        "https://blog.test/page3/",
        "https://blog.test/?page=2",
        "https://blog.test/t/sqlite/",
        "https://blog.test/tags/sqlite/",
        "https://blog.test/category/notes/",
        "https://blog.test/archives/2024/07/",
        "https://blog.test/archives/",
        "https://blog.test/archives/page/3/",
        "https://blog.test/author/ann/",
        "https://blog.test/about/",
        "https://blog.test/search/?q=x",
    ],
)
def test_listing_and_site_page_urls(url):
    assert listing_reason(url, SCOPE)


@pytest.mark.parametrize(
    "url",
    [
        "https://blog.test/p/378",
        "https://blog.test/2024/07/30/hello/",
        "https://blog.test/?p=12",
        "https://blog.test/posts/about-time/",
        "https://blog.test/archives/123",
        "https://blog.test/archives/12.html",
    ],
)
def test_post_urls_are_not_listings(url):
    assert listing_reason(url, SCOPE) is None


def test_blog_under_a_path_has_its_own_home():
    assert listing_reason("https://example.com/blog/", "https://example.com/blog/") == "the blog's home page"
    assert listing_reason("https://example.com/blog/my-post/", "https://example.com/blog/") is None


def test_url_shapes_mask_dates():
    assert url_shape("https://blog.test/2016/05/19/ci-cd/", SCOPE) == "9999/99/99/*"
    assert url_shape("https://blog.test/2017/11/02/other/", SCOPE) == url_shape("https://blog.test/2016/05/19/ci-cd/", SCOPE)
    assert url_shape("https://blog.test/posts/x/", SCOPE) == "posts/*"
    assert url_shape("https://blog.test/archives/12.html", SCOPE) == "archives/*.html"


def test_evidence():
    sel = Selector(text="""<html lang="zh-CN"><head>
      <meta property="og:type" content="article">
      <meta property="article:published_time" content="2024-07-30T14:03:00+08:00">
      <link rel="canonical" href="https://blog.test/p/1">
      <script type="application/ld+json">{"@context": "https://schema.org", "@graph": [{"@type": "BlogPosting"}, {"@type": "Person"}]}</script>
      </head><body><article>x</article></body></html>""")
    ev = read_evidence(sel)
    assert (ev.og_type, ev.published, ev.canonical, ev.articles, ev.lang) == (
        "article", "2024-07-30T14:03:00+08:00", "https://blog.test/p/1", 1, "zh-CN")
    assert ev.ld_types == ["BlogPosting", "Person"] and ev.ld_article


def test_meta_refresh_is_an_alias():
    ev = read_evidence(Selector(text='<meta http-equiv="refresh" content="0; url=https://blog.test/posts/new/">'))
    assert decide("https://blog.test/old/", SCOPE, ev, in_feed=False, dated_text=False, sections=SectionStats()) == (
        "alias", "meta refresh to https://blog.test/posts/new/")


def test_decisions():
    sections = SectionStats()
    article = PageEvidence(og_type="article")
    # article markup alone: a post when a listing shows it, a site page when nothing does
    assert decide("https://blog.test/p/1", SCOPE, article, in_feed=False, dated_text=False, listed=True,
                  sections=sections)[0] == "post"
    assert decide("https://blog.test/p/1", SCOPE, article, in_feed=False, dated_text=False, sections=sections) == (
        "page", "in no feed and no listing, and no date")
    # a page's name is no verdict: a dated article that a listing shows is a post
    assert decide("https://blog.test/contact.html", SCOPE, article, in_feed=False, dated_text=True, listed=True,
                  sections=sections)[0] == "post"
    assert decide("https://blog.test/contact.html", SCOPE, article, in_feed=False, dated_text=True,
                  sections=sections)[0] == "page"
    website = PageEvidence(og_type="website")
    assert decide("https://blog.test/p/1", SCOPE, website, in_feed=True, dated_text=False, sections=sections) == (
        "page", "og:type is website")
    # a theme that calls every page a website: the feed and the date outweigh it
    assert decide("https://blog.test/p/1", SCOPE, website, in_feed=True, dated_text=True, sections=sections)[0] == "post"
    assert decide("https://blog.test/p/1", SCOPE, website, in_feed=False, dated_text=True, sections=sections)[0] == "page"
    # with no feed, a listing's link does what the feed entry does
    assert decide("https://blog.test/p/1", SCOPE, website, in_feed=False, dated_text=True, listed=True,
                  sections=sections)[0] == "post"
    assert decide("https://blog.test/p/1", SCOPE, website, in_feed=False, dated_text=False, listed=True,
                  sections=sections) == ("page", "og:type is website")
    # whatever its og:type, a page of "Read more" teasers or a section's index is a listing
    assert decide("https://blog.test/posts/", SCOPE, PageEvidence(og_type="website", read_more=4), in_feed=False,
                  dated_text=False, sections=sections)[0] == "listing"
    assert decide("https://blog.test/posts/", SCOPE, website, in_feed=False, dated_text=False, children_linked=4,
                  sections=sections)[0] == "listing"
    # /YYYY/MM/DD/ is a day's archive, unless the feed lists it as a post
    assert decide("https://blog.test/2024/07/30/", SCOPE, bare_dated := PageEvidence(og_type="article"),
                  in_feed=False, dated_text=True, sections=sections)[0] == "listing"
    assert decide("https://blog.test/2024/07/30/", SCOPE, bare_dated, in_feed=True, dated_text=True,
                  sections=sections)[0] == "post"
    assert decide("https://blog.test/tags.html", SCOPE, bare_dated, in_feed=False, dated_text=True,
                  sections=sections)[0] == "listing"
    bare = PageEvidence()
    assert decide("https://blog.test/p/1", SCOPE, bare, in_feed=False, dated_text=False, sections=sections)[0] == "page"
    assert decide("https://blog.test/p/1", SCOPE, bare, in_feed=False, dated_text=True, sections=sections) == (
        "post", "an article body with a publish date")
    assert decide("https://blog.test/t/x/", SCOPE, article, in_feed=True, dated_text=True, sections=sections)[0] == "listing"


def test_a_small_section_beside_the_posts_is_not_posts():
    sections = SectionStats(min_share=0.2)
    for _ in range(20):
        sections.add("posts/*")
    sections.add("projects/*")
    kind, reason = decide("https://blog.test/projects/x/", SCOPE, PageEvidence(og_type="article"),
                          in_feed=True, dated_text=True, sections=sections)
    assert kind == "page" and "projects/*" in reason
    assert decide("https://blog.test/posts/y/", SCOPE, PageEvidence(og_type="article"),
                  in_feed=True, dated_text=True, sections=sections)[0] == "post"
    # A shape the feed never showed is a post when a listing shows it (an old URL scheme)...
    assert decide("https://blog.test/2010/old/", SCOPE, PageEvidence(og_type="article"),
                  in_feed=False, dated_text=True, listed=True, sections=sections)[0] == "post"
    # ...and a standalone page when nothing but its own markup says post.
    kind, reason = decide("https://blog.test/visitors-book/", SCOPE, PageEvidence(og_type="article"),
                          in_feed=False, dated_text=True, sections=sections)
    assert kind == "page" and "none of the 21 feed entries" in reason


def test_a_page_whose_content_links_to_the_feeds_posts_is_a_listing():
    article = PageEvidence(og_type="article", ld_types=["Article"])
    assert decide("https://blog.test/posts/", SCOPE, article, in_feed=False, dated_text=True, listed=True,
                  posts_linked=6, sections=SectionStats()) == ("listing", "its content links to 6 posts of the feeds")
    # an index post the feed lists stays a post
    assert decide("https://blog.test/my-reading-list/", SCOPE, article, in_feed=True, dated_text=True,
                  posts_linked=6, sections=SectionStats())[0] == "post"


def test_deep_pagination_is_not_a_calendar_trap():
    from crawler.spiders.spill import SpillDict, SpillSet
    from crawler.spiders.state import SourceState

    state = SourceState(id=1, url=SCOPE, scope=SCOPE, origin="https://blog.test", aliases=set(), bases=set(),
                        max_pages=10, max_depth=500, max_links=10_000, max_query_variants=50, sections=SectionStats(),
                        seen=SpillSet(10), parsed=SpillDict(10), entries=SpillDict(10), listed=SpillDict(10), dated_entries=SpillSet(10), lacking=SpillDict(10),
                        unsure=SpillDict(10))
    assert state.trap("https://blog.test/page/1000/", 1) is None
    assert state.trap("https://blog.test/?paged=2500", 1) is None
    assert state.trap("https://blog.test/calendar/?month=1850-01", 1) == "a calendar page outside 1990 to next year"
    assert state.trap("https://blog.test/archives/3000/01/", 1) == "a calendar page outside 1990 to next year"


def test_a_translation_of_the_blog_is_judged_as_the_original():
    sections = SectionStats(min_share=0.2)
    for _ in range(20):
        sections.add("posts/*")
    sections.add("about/*")
    article = PageEvidence(og_type="article")
    assert decide("https://blog.test/en/posts/x/", SCOPE, article, in_feed=False, dated_text=True,
                  sections=sections)[0] == "post"
    assert decide("https://blog.test/en/about/me/", SCOPE, article, in_feed=False, dated_text=True,
                  sections=sections)[0] == "page"
    # the same before the translation's own feed is read, when a listing's language switch links to it
    assert decide("https://blog.test/en/about/me/", SCOPE, article, in_feed=False, dated_text=True, listed=True,
                  sections=sections)[0] == "page"
    # a translated section the feeds list once is judged by the original's share
    for _ in range(6):
        sections.add("archive/*")
    sections.add("en/archive/*")
    assert decide("https://blog.test/en/archive/x/", SCOPE, article, in_feed=True, dated_text=True,
                  sections=sections)[0] == "post"


def test_a_sections_index_that_links_to_the_pages_below_it_is_a_listing():
    article = PageEvidence(og_type="article")
    assert decide("https://blog.test/uniapp/", SCOPE, article, in_feed=False, dated_text=True, children_linked=4,
                  sections=SectionStats()) == ("listing", "a section's index: its content links to 4 pages below it")
    assert decide("https://blog.test/uniapp/", SCOPE, article, in_feed=True, dated_text=True, children_linked=4,
                  sections=SectionStats())[0] == "post"
    assert below("https://blog.test/uniapp/a.html", "https://blog.test/uniapp/index.html")
    assert not below("https://blog.test/uniapp/", "https://blog.test/uniapp/index.html")
    assert not below("https://blog.test/a.html", "https://blog.test/")


def test_a_date_after_an_html_comment_is_read_in_the_comment_s_parent():
    sel = Selector(text="<html><body><h1>Post</h1><p class='meta'>发布于：<!-- date -->2024-07-30</p></body></html>")
    assert visible_date(sel) == "2024-07-30"


def test_a_listing_s_links_in_its_entries_headers_are_its_own():
    page = Selector(text="""<html><body><header><a href="/">Home</a></header><main>
      <article class="post-preview"><header><p class="publish-date">7 November 2020</p>
        <a href="/posts/a"><h3>A - the first</h3></a></header><p>Teaser.</p><a href="/posts/a">Read more</a></article>
      </main><footer><a href="/about">About</a></footer></body></html>""")
    assert listing_links(page.root) == [("/posts/a", "A - the first", True, True), ("/posts/a", "", True, True)]


def test_a_link_in_a_sentence_of_a_listing_shows_a_page_without_listing_it():
    page = Selector(text="""<html><body><main>
      <p>Hello, I am Jane, and this is where I write about the systems I build and the books I read.
         There is more <a href="/colophon/">about this site</a>.</p>
      <p><a href="/posts/a/">A post with a long title about lifetimes</a> · July 30, 2024 · 5 min read</p>
      <p>A teaser of the post that goes on about what the post says at some length, then:
         <a href="/posts/b/">Read more</a></p>
      <ul><li><a href="/posts/c/">C</a></li></ul></main></body></html>""")
    # the date beside a link in its entry (a list of posts shows each post's), not one elsewhere in the list
    assert listing_links(page.root) == [("/colophon/", "about this site", False, False),
                                        ("/posts/a/", "A post with a long title about lifetimes", True, True),
                                        ("/posts/b/", "", True, False), ("/posts/c/", "C", True, False)]


def test_a_zero_date_is_no_date():
    zero = PageEvidence(og_type="article", published="0001-01-01T00:00:00Z")
    assert not dated(zero, "https://blog.test/about/")
    assert dated(zero, "https://blog.test/2024/07/30/about/")
    assert dated(PageEvidence(published="2024-07-30T14:03:00+08:00"), "https://blog.test/about/")
    assert not dated(PageEvidence(published="{{ .Date }}"), "https://blog.test/about/")


# -- the blog's own structure (issue 48) ----------------------------------------------------------

def test_article_marks_on_the_home_page_are_the_theme_s_furniture():
    marked = ('<html><head><meta property="og:type" content="article"><script type="application/ld+json">'
              '{"@type": "BlogPosting", "datePublished": "2024-09-01T10:00:00+00:00"}</script></head>'
              '<body><h1>Resume</h1><p>What I did.</p></body></html>')
    home = read_evidence(Selector(text=marked))
    furniture = article_marks(home)
    assert furniture == {"og:type article", "JSON-LD article"}
    page = read_evidence(Selector(text=marked), furniture=furniture)
    assert page.og_type is None and not page.ld_article and page.published is None  # the theme's stamp, no date
    # a page's own machine-readable date is not the theme's
    own = read_evidence(Selector(text=marked.replace("<head>", '<head><meta property="article:published_time" '
                                                     'content="2024-03-02T08:00:00+00:00">')), furniture=furniture)
    assert own.published == "2024-03-02T08:00:00+00:00"
    assert article_marks(read_evidence(Selector(text="<html><body><h1>Home</h1></body></html>"))) == frozenset()


def test_an_undated_feed_entry_in_a_shape_of_no_dated_entry_is_a_site_page():
    sections = SectionStats()
    for _ in range(3):
        sections.add("posts/*")
    sections.add("*", dated=False)
    assert site_page_entry({"published": None, "updated": None}, "*", sections)
    assert not site_page_entry({"published": "2024-01-02T00:00:00Z", "updated": None}, "*", sections)
    assert not site_page_entry({"published": None, "updated": None}, "posts/*", sections)  # an undated post among posts
    few = SectionStats()
    few.add("posts/*")
    few.add("*", dated=False)
    assert not site_page_entry({"published": None, "updated": None}, "*", few)  # too few dated entries to tell


def test_a_lone_read_more_is_a_pointer_and_a_titled_one_a_teaser():
    def count(body: str) -> int:
        ev = read_evidence(Selector(text=f"<html><body>{body}</body></html>"))
        return teasers(ev, lambda href: href if href.startswith("/") and href != "/self/" else None)

    assert count('<article><p>Text.</p><a href="/other/">Read more</a></article>') == 0
    assert count('<article><p>Text.</p><a href="https://elsewhere.example/">Read more</a></article>') == 0
    # one entry: its title and its "read more" lead to the same post
    assert count('<h2><a href="/a/">A</a></h2><p>Teaser.</p><a href="/a/">Read more</a>') == 1
    assert count('<p>Teaser.</p><a href="/a/">Read more</a><p>Teaser.</p><a href="/b/">Read more</a>') == 2
    assert count('<h2><a href="/self/">This</a></h2><a href="/self/">Read more</a>') == 0
