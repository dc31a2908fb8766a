"""crawler.judge.site: what a blog repeats on its pages is the site's, never a post's title."""

from crawler.judge.site import SiteLearner, SiteParts


def learned(titles: list[tuple[str, bool]], names: tuple[str, ...] = ()) -> SiteParts:
    learner = SiteLearner()
    for name in names:
        learner.note_name(name)
    for title, post in titles:
        learner.note_page(title, [], post=post)
    return learner.parts


def test_a_tagline_after_the_site_name_goes_with_it():
    parts = learned([
        ("Home | Field Notes - Small web, big ideas", False),
        ("Tag: css | Field Notes - Small web, big ideas", False),
        ("Why I still write HTML by hand | Field Notes - Small web, big ideas", True),
        ("Measuring link rot | Field Notes - Small web, big ideas", True),
    ])
    assert parts.strip("A new post | Field Notes - Small web, big ideas") == "A new post"


def test_the_site_name_first_and_unspaced_separators():
    parts = learned([("老张的博客_首页", False), ("老张的博客_标签", False), ("老张的博客_内存泄漏排查", True)])
    assert parts.strip("老张的博客_一次线上事故") == "一次线上事故"
    parts = learned([("Site ｜ 首页", False)] * 2 + [("Site ｜ 随笔", True)] * 2)
    assert parts.strip("Site ｜ 关于缓存") == "关于缓存"


def test_names_from_the_feed_and_home_page_work_before_anything_repeats():
    parts = learned([], names=("Field Notes - Small web, big ideas",))
    assert parts.strip("Post | Field Notes - Small web, big ideas") == "Post"
    assert parts.strip("Field Notes :: Post") == "Post"
    assert parts.is_site("field notes")


def test_a_series_prefix_on_posts_alone_is_not_the_sites():
    parts = learned([("Weekly - 12", True), ("Weekly - 13", True), ("Weekly - 14", True), ("Archive - Blog", False)])
    assert parts.strip("Weekly - 15") == "Weekly - 15"


def test_a_title_that_is_only_the_site_name_is_kept_as_is():
    parts = learned([], names=("Notes",))
    assert parts.strip("Notes") == "Notes"
    assert parts.strip("Notes - Part 2 - Notes") == "Notes - Part 2"


def test_a_heading_on_most_posts_is_the_sites_and_a_listing_repeating_titles_is_not():
    learner = SiteLearner()
    for i in range(5):
        learner.note_page(f"Post {i}", ["My Blog", f"Post {i}"], post=True)
        learner.note_page("Archive", ["Post 1", "Post 2", "Post 3"], post=False)
    assert learner.parts.is_site("My Blog")
    assert not learner.parts.is_site("Post 1")


def test_the_sites_keywords_are_told_from_a_posts():
    learner = SiteLearner()
    learner.note_keywords("blog, python, notes")
    assert learner.parts.is_keywords("blog, python, notes")
    assert not learner.parts.is_keywords("asyncio, sockets")


def test_the_site_name_and_tagline_first():
    parts = learned([], names=("Field Notes", "Small web, big ideas"))
    assert parts.strip("Field Notes | Small web, big ideas | A post") == "A post"
