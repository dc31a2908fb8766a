"""crawler.judge.titles: a page's title by agreement among its candidates."""

import pytest
from lxml import html as lxml_html

from crawler.judge.titles import choose_title, host_name, site_name_parts, split_parts, title_candidates

SEPARATORS = [" | ", " - ", " – ", " — ", " :: ", "_", "｜", " · ", " » "]


def page(title: str = "", *, head: str = "", body: str = "") -> str:
    return f"<html><head><title>{title}</title>{head}</head><body>{body}</body></html>"


def meta(prop: str, content: str) -> str:
    attr = "name" if prop.startswith("twitter:") else "property"
    return f'<meta {attr}="{prop}" content="{content}">'


def title_of(doc: str, site_parts: tuple[str, ...] = (), url: str | None = None) -> tuple[str, str] | None:
    """What a single page gets: the tags crawler.judge.metadata reads, then title_candidates."""
    root = lxml_html.fromstring(doc)
    found = []
    for prop in ("og:title", "twitter:title"):
        values = root.xpath(f'//meta[@property="{prop}" or @name="{prop}"]/@content')
        if values:
            found.append((values[0], prop))
    found += title_candidates(root)
    return choose_title(found, site_parts=[*site_parts, *site_name_parts(root, url)])


@pytest.mark.parametrize("sep", SEPARATORS)
def test_site_name_last_is_dropped(sep: str) -> None:
    doc = page(f"Notes on Rust lifetimes{sep}Jane's Blog")
    assert title_of(doc)[0] == "Notes on Rust lifetimes"


@pytest.mark.parametrize("sep", SEPARATORS)
def test_site_name_first_is_dropped_when_the_page_names_its_site(sep: str) -> None:
    doc = page(f"Jane's Blog{sep}Notes on Rust lifetimes", head=meta("og:site_name", "Jane's Blog"))
    assert title_of(doc) == ("Notes on Rust lifetimes", "<title>")


@pytest.mark.parametrize("sep", SEPARATORS)
def test_site_name_first_is_dropped_when_the_article_heading_agrees(sep: str) -> None:
    doc = page(f"Jane's Blog{sep}Notes on Rust lifetimes", body="<article><h1>Notes on Rust lifetimes</h1><p>Text.</p></article>")
    assert title_of(doc)[0] == "Notes on Rust lifetimes"


def test_site_name_and_tagline_are_both_dropped() -> None:
    doc = page("Notes on Rust lifetimes | Jane's Blog - Writing about systems", head=meta("og:site_name", "Jane's Blog"),
               body="<article><h1>Notes on Rust lifetimes</h1></article>")
    assert title_of(doc)[0] == "Notes on Rust lifetimes"


def test_the_host_names_the_site() -> None:
    doc = page("Janes Notes | Notes on Rust lifetimes")
    assert title_of(doc, url="https://www.janesnotes.co.uk/rust/")[0] == "Notes on Rust lifetimes"
    assert host_name("https://www.janesnotes.co.uk/x") == "janesnotes"
    assert host_name("https://blog.example.com/x") == "example"
    assert host_name("http://127.0.0.1:8000/") is None


HEADER_H1 = (
    '<header><h1><a href="/">Jane\'s Blog</a></h1><p>Writing about systems</p></header>'
    "<main><article><h1>Notes on Rust lifetimes</h1><p>Lifetimes are...</p></article></main>"
)


def test_a_header_h1_holding_the_site_name_is_not_the_title() -> None:
    doc = page("Jane's Blog | Notes on Rust lifetimes", body=HEADER_H1)
    assert title_of(doc)[0] == "Notes on Rust lifetimes"


def test_a_header_h1_holding_the_learned_site_name_is_never_chosen() -> None:
    # the page's only other candidate is the site's h1: the learned site name rules it out
    found = [("Jane's Blog", "<h1>"), ("Jane's Blog", "first <h1>"), ("Jane's Blog | Notes on Rust lifetimes", "<title>")]
    assert choose_title(found, site_parts=["Jane's Blog"]) == ("Notes on Rust lifetimes", "<title>")
    assert choose_title([("Jane's Blog", "<h1>")], site_parts=["jane’s  blog"]) is None


def test_og_title_and_title_agree_against_a_stray_heading() -> None:
    doc = page("Notes on Rust lifetimes - Jane's Blog",
               head=meta("og:title", "Notes on Rust lifetimes") + meta("twitter:title", "Notes on Rust lifetimes"),
               body="<div class=promo><h1>Subscribe to the newsletter</h1></div><p>Text.</p>")
    assert title_of(doc)[0] == "Notes on Rust lifetimes"


def test_agreement_wins_over_a_fixed_order() -> None:
    # og:title comes first, but the heading and the <title> agree on another title
    found = [("Jane's Blog", "og:title"), ("Notes on Rust lifetimes", "article <h1>"),
             ("Notes on Rust lifetimes | Jane's Blog", "<title>")]
    assert choose_title(found)[0] == "Notes on Rust lifetimes"


def test_folding_whitespace_case_and_typography_for_agreement() -> None:
    found = [("Don’t  Panic — A Guide", "article <h1>"), ("don't panic - a guide | Site", "<title>"), ("Other", "og:title")]
    assert choose_title(found) == ("Don’t  Panic — A Guide".replace("  ", " "), "article <h1>")


def test_the_heading_keeps_the_punctuation_the_meta_tags_took_out() -> None:
    doc = page("Dilution dʌɪˈluːʃn | Enrique’s Musings", head=meta("og:title", "Dilution dʌɪˈluːʃn"),
               body="<article><h1>Dilution |dʌɪˈluːʃn|</h1><p>Text.</p></article>")
    assert title_of(doc) == ("Dilution |dʌɪˈluːʃn|", "article <h1>")


def test_a_heading_permalink_glyph_is_not_part_of_the_title() -> None:
    doc = page("Notes on lifetimes | Site", head=meta("og:title", "Notes on lifetimes"),
               body="<article><h1>Notes on lifetimes <a class=headerlink href=#x>¶</a></h1><p>Text.</p></article>")
    assert title_of(doc)[0] == "Notes on lifetimes"


def test_a_title_that_contains_a_dash_keeps_it() -> None:
    doc = page("Python - The Good Parts | Jane's Blog", head=meta("og:title", "Python - The Good Parts"),
               body="<article><h1>Python - The Good Parts</h1></article>")
    assert title_of(doc)[0] == "Python - The Good Parts"


def test_a_title_with_a_dash_and_no_site_name_stays_whole() -> None:
    doc = page("Python - The Good Parts", body="<article><h1>Python - The Good Parts</h1></article>")
    assert title_of(doc)[0] == "Python - The Good Parts"


def test_cjk_title_with_underscore() -> None:
    doc = page("静态博客的部署方法_小明的博客", body="<article><h1>静态博客的部署方法</h1><p>正文。</p></article>")
    assert title_of(doc)[0] == "静态博客的部署方法"


def test_cjk_title_with_fullwidth_bar_and_site_first() -> None:
    doc = page("小明的博客｜静态博客的部署方法", head=meta("og:site_name", "小明的博客"))
    assert title_of(doc)[0] == "静态博客的部署方法"


def test_split_parts_keeps_words_with_hyphens_and_inner_punctuation() -> None:
    assert [p for p, _ in split_parts("Self-hosting: a how-to | Site")] == ["Self-hosting: a how-to", "Site"]
    assert [p for p, _ in split_parts("部署_小明的博客")] == ["部署", "小明的博客"]


def test_title_candidates_reads_itemprop_headline_and_the_article_heading() -> None:
    doc = page("T | S", body='<header><h1>S</h1></header><article><h2 itemprop="headline">The headline</h2>'
                              "<h1>The article heading</h1></article>")
    found = dict((o, v) for v, o in title_candidates(lxml_html.fromstring(doc)))
    assert found["itemprop headline"] == "The headline"
    assert found["article <h1>"] == "The article heading"
    assert found["<title>"] == "T | S"


def test_title_candidates_falls_back_to_the_article_h2() -> None:
    doc = page("T", body="<article><h2>Second-level heading</h2><p>x</p></article>")
    found = dict((o, v) for v, o in title_candidates(lxml_html.fromstring(doc)))
    assert found["article <h2>"] == "Second-level heading"


def test_entities_escaped_twice_are_unescaped_and_nothing_is_none() -> None:
    assert choose_title([("Q&amp;A night", "og:title")]) == ("Q&A night", "og:title")
    assert choose_title([]) is None
    assert choose_title([("  ", "<h1>")]) is None


GIT = '"Git" The Basics: A Version Control Cheat Sheet'


def test_quotation_marks_a_theme_took_out_of_its_meta_tags_are_kept() -> None:
    # a template writing the title into attributes and JSON-LD strips the quotes that would end them
    bare = GIT.replace('"', "")
    ld = f'<script type="application/ld+json">{{"@type": "BlogPosting", "headline": "{bare}"}}</script>'
    doc = page(f"Lo-Fi Python | {GIT}", head=meta("og:title", bare) + meta("twitter:title", bare) + ld)
    assert title_of(doc, site_parts=("Lo-Fi Python",))[0] == GIT
    # never the quotation marks of another title, nor a spelling that differs in other characters
    for other in ('"Git" and more', '"Git": The Basics!'):
        found = [(other, "<title>"), ("Git The Basics", "og:title"), ("Git The Basics", "article <h1>")]
        assert choose_title(found)[0] == "Git The Basics"


def test_quotation_marks_a_heading_shows_with_q_are_kept() -> None:
    # <q> draws its quotation marks with CSS: the heading's text has none, the <title> has them
    doc = page(f"{GIT} - Lo-Fi Python", body="<article><h1><q>Git</q> The Basics: A Version Control Cheat Sheet</h1>"
                                           "<p>Text.</p></article>")
    assert title_of(doc, site_parts=("Lo-Fi Python",))[0] == GIT


def test_typographic_quotation_marks_are_kept_as_written() -> None:
    title = "«Dune» et ‘les autres’: une lecture"
    bare = "Dune et les autres: une lecture"
    found = [(title, "feed"), (bare, "og:title"), (bare, "JSON-LD headline"), (bare, "twitter:title")]
    assert choose_title(found) == (title, "feed")

