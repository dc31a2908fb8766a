"""The article's own tree: protected posts, link-only blocks, line-number gutters, bylines,
labelled dates and tags, and the post's own article beside other posts' cards."""

from pathlib import Path

from lxml import html
from parsel import Selector

from crawler.extract.post import _drop_byline, extract_post
from crawler.items import BlogPost
from crawler.judge.article import (
    article_body,
    article_document,
    drop_line_numbers,
    drop_post_furniture,
    keep_link_blocks,
    protected,
)
from crawler.judge.metadata import byline_author, candidates, classed_author, icon_labelled, labelled_tags, post_article
from crawler.judge.pages import visible_date

CORPUS = Path(__file__).parent / "corpus"
LONG = "<p>" + " ".join(["A sentence of the post that says something worth reading."] * 12) + "</p>"


def tree(body: str, head: str = "") -> html.HtmlElement:
    return html.document_fromstring(f"<html><head>{head}</head><body>{body}</body></html>")


def test_an_encrypted_post_is_protected_and_its_ciphertext_never_its_text():
    cipher = "a1b2c3d4" * 120
    page = (f'<html><head><title>Diary | Site</title></head><body><article><h1>Diary</h1>'
            f'<div id="hexo-blog-encrypt"><script id="hbeData" type="hbeData">{cipher}</script>'
            f'<input type="password" id="hbePass"><label>Hey, password is required here.</label></div>'
            f'</article></body></html>')
    post = extract_post("https://blog.test/2024/01/diary/", page)
    assert post is not None and post.protected.startswith("encrypted")
    assert post.title == "Diary" and post.text == "" and cipher not in (post.markdown or "")


def test_a_password_form_instead_of_the_post_is_protected():
    root = tree('<article><h1>Private</h1><form class="post-password-form"><p>This content is password '
                'protected. To view it please enter your password below:</p><input type="password"></form></article>')
    assert protected(root, article_body(root)).startswith("behind a password")
    root = tree(f"<article><h1>Open</h1>{LONG}</article>")
    assert protected(root, article_body(root)) is None
    # a login box in the sidebar protects nothing
    root = tree(f'<article>{LONG}</article><aside><input type="password"> enter your password</aside>')
    assert protected(root, article_body(root)) is None


def test_paragraphs_and_items_that_are_only_links_are_the_authors_text():
    root = tree(f'<article>{LONG}<ul><li><a href="https://a.test/">ripgrep</a></li>'
                '<li><a href="https://b.test/">fd</a></li></ul>'
                '<ul class="post-tags"><li><a href="/tags/cli/">cli</a></li></ul></article>')
    keep_link_blocks(article_body(root))
    items = root.xpath("//li")
    assert [li.xpath("count(.//a)") for li in items] == [0, 0, 1]  # the tag list keeps its link
    post = extract_post("https://blog.test/tools/", html.tostring(tree(
        f'<article><h1>Tools</h1>{LONG}<ul><li><a href="https://a.test/">ripgrep, a fast grep</a></li>'
        '<li><a href="https://b.test/">fd, a friendly find</a></li></ul></article>'), encoding="unicode"))
    assert "ripgrep, a fast grep" in post.text and "fd, a friendly find" in post.text


def test_code_keeps_its_lines_without_the_gutter():
    root = tree('<figure class="highlight"><table><tr><td class="gutter"><pre>1\n2</pre></td>'
                '<td class="code"><pre>x = 1\ny = 2</pre></td></tr></table></figure>'
                '<pre class="chroma"><code><span class="line"><span class="ln">1</span><span class="cl">z = 3</span></span></code></pre>')
    drop_line_numbers(root)
    code = root.xpath("string(//body)")
    assert "x = 1" in code and "z = 3" in code
    assert "1\n2" not in code and not root.xpath('//*[@class="ln"]')


def test_the_blocks_about_the_post_are_not_its_text():
    root = tree(f'<article><div class="post-meta">发表于 2024-01-02 · 本文字数: 120</div>'
                f'<p class="subtitle"><strong>2020-02-26</strong></p>{LONG}</article>')
    drop_post_furniture(root)
    text = root.xpath("string(//body)")
    assert "发表于" not in text and "2020-02-26" not in text and "worth reading" in text


def test_the_body_is_the_article_that_holds_the_text_not_a_prev_next_card():
    root = tree(f'<h1>Title</h1><div class="post-content">{LONG}</div>'
                '<article class="prev-next"><a href="/a/">Older post</a> <p>An older teaser.</p></article>')
    page = article_document(root, article_body(root))
    assert page is not None and "worth reading" in page.xpath("string(//body)")
    assert "Older post" not in page.xpath("string(//body)")


def test_bylines_and_author_classes():
    assert byline_author(tree('<p class="meta">By <a href="/about/">Jane Doe</a>, 3 May 2021</p>')) == "Jane Doe"
    assert byline_author(tree('<div class="info">作者：张三 | 发布于 2021-05-03</div>')) == "张三"
    # a licence, a body sentence, a footer's "Powered by" are no bylines
    assert byline_author(tree('<p>本博客采用 BY-NC-SA 许可协议。转载请注明出处！</p>')) is None
    assert byline_author(tree('<p>By kicking off some scans, we learn a lot.</p>')) is None
    assert byline_author(tree('<footer>Powered by Hexo</footer>')) is None
    # a byline after an HTML comment
    assert byline_author(tree('<p class="meta"><!-- meta -->By Jane Doe, 3 May 2021</p>')) == "Jane Doe"
    assert classed_author(tree('<div class="authorbox"><span class="authorbox__name">黑人de问号</span>'
                               '<div class="authorbox__description">雨下整夜…</div></div>')) == "黑人de问号"


def test_tags_after_a_label_and_keywords_that_are_not_the_sites():
    assert labelled_tags(tree('<p>Tags: <a href="/x">python</a>, <a href="/y">asyncio</a></p>')) == ["python", "asyncio"]
    assert labelled_tags(tree('<div>标签：<a href="/t/1">内存</a></div>')) == ["内存"]
    page = '<html><head><title>Post</title><meta name="keywords" content="redis, 缓存, Post"></head><body><h1>Post</h1></body></html>'
    found = candidates(Selector(text=page), "https://blog.test/p/1", {})
    assert [c.value for c in found if c.origin == "meta keywords"] == [["redis", "缓存"]]


def test_a_labelled_date_wins_over_a_date_the_post_talks_about():
    page = ('<article><h1>Python 3.13</h1><div class="post-info">发布于：2024-10-20</div>'
            '<p>2024 年 10 月 7 日，Python 3.13 发布了。</p></article>')
    assert visible_date(Selector(text=page)) == "2024-10-20"
    # an update is no publish date
    assert visible_date(Selector(text='<article><h1>X</h1><p class="meta">Updated 2024-02-01</p></article>')) is None
    # a listing's dated entries are no post's date
    listing = "<main><ul>" + "".join(f'<li><a href="/p/{i}">P{i}</a> <time>2024-01-0{i}</time></li>' for i in range(1, 5)) + "</ul></main>"
    assert visible_date(Selector(text=listing)) is None


def test_a_json_ld_author_with_several_names_is_one_author():
    page = ('<html><head><title>T</title><script type="application/ld+json">{"@type": "BlogPosting", "headline": "T",'
            ' "author": {"@type": "Person", "name": ["Ann", "Bob"]}}</script></head>'
            f'<body><article><h1>T</h1>{LONG}</article></body></html>')
    assert extract_post("https://blog.test/p/", page).author == "Ann, Bob"


def test_an_author_box_that_says_about_its_author():
    assert classed_author(tree('<div class="authorbox"><span class="authorbox__name">About Matt</span></div>')) == "Matt"


def test_an_icon_labels_the_author_and_the_tags_beside_or_inside_it():
    beside = tree('<article><header><nav><h2>Crate management</h2><i class="fa fa-calendar"></i> <time>26 Jan</time>'
                  '<br><i class="fa fa-tags"></i> programming, rust</nav></header>' + LONG + '</article>')
    assert icon_labelled(beside, post_article(beside)) == {"tags": ["programming", "rust"]}
    inside = tree('<div class="theme-container no-sidebar"><main><h1>周六</h1><div><i class="iconfont reco-account">'
                  '<span>一度</span></i> <i class="iconfont reco-tag tags"><span class="tag-item">随笔</span>'
                  '<span class="tag-item">生活</span></i></div>' + LONG + '</main></div>')
    assert icon_labelled(inside, post_article(inside)) == {"author": "一度", "tags": ["随笔", "生活"]}
    # a sidebar's tag cloud heading is no post's tags
    sidebar = tree('<main><h1>Post</h1>' + LONG + '</main><div class="sidebar"><h3><i class="fa fa-tags"></i> Tags</h3>'
                   '<a href="/tags/x/">x</a></div>')
    assert icon_labelled(sidebar, post_article(sidebar)) == {}


def test_nested_categories_and_feed_terms_filed_by_their_page():
    page = ('<html><head><title>T</title></head><body><article><h1>T</h1>' + LONG +
            '<a class="article-category-link" href="/categories/Jenkins/">Jenkins</a>'
            '<a class="article-category-link" href="/categories/Jenkins/Tox-Core/">Tox Core</a></article></body></html>')
    entry = {"tags": ["release"], "categories": ["Jenkins", "Tox Core"]}
    found = {c.origin + " " + c.field: c.value for c in candidates(Selector(text=page), "https://blog.test/p/1", entry)}
    assert found["category links categories"] == ["Jenkins", "Tox Core"]
    assert found["feed tags"] == ["release"]
    assert "tag links tags" not in found


def test_code_lines_with_anchors_to_themselves_stay_in_the_text():
    # pymdownx.highlight's anchor_linenums: each line starts with an empty link to itself, which
    # made trafilatura weigh a short block as links and drop it
    def line(n: int, code: str) -> str:
        return (f'<span id="__span-1-{n}"><a id="__codelineno-1-{n}" name="__codelineno-1-{n}" '
                f'href="#__codelineno-1-{n}"></a>{code}\n</span>')
    block = ('<div class="language-python highlight"><pre><span></span><code>'
             + line(1, '<span class="k">def</span><span class="w"> </span><span class="nf">node</span>(state):')
             + line(2, '    <span class="k">return</span> {"my_var": state}') + '</code></pre></div>')
    page = tree(f'<article><h1>State</h1>{LONG}<p>Like this:</p>{block}<p>And that is it.</p>{LONG}</article>')
    post = extract_post("https://blog.test/state/", html.tostring(page, encoding="unicode"))
    assert "def node(state):" in post.text and 'return {"my_var": state}' in post.text


def test_the_tags_in_a_nav_inside_the_posts_article_are_its_tags():
    page = (f'<nav class="site-menu"><a href="/tags/#tag:menu">Menu tag</a></nav>'
            f'<article><nav class="md-tags"><a href="/tags/#tag:appsec" class="md-tag">AppSec</a>'
            f'<a href="/tags/#tag:cloud" class="md-tag">Cloud</a></nav><h1>Post</h1>{LONG}</article>')
    found = candidates(Selector(text=page), "https://blog.test/blog/post/", {})
    assert [c.value for c in found if c.origin == "tag links"] == [["AppSec", "Cloud"]]


def test_the_pages_only_time_dates_a_post_whose_theme_puts_it_in_a_sidebar():
    sidebar = ('<div class="md-sidebar md-sidebar--post"><nav class="md-nav"><ul class="md-post__meta">'
               '<li><div><time datetime="2023-02-21 00:00:00+00:00">February 21, 2023</time></div></li></ul></nav></div>')
    page = f'<html><body>{sidebar}<article><h1>Post</h1>{LONG}</article></body></html>'
    post = extract_post("https://blog.test/blog/a-slug/", page)
    chosen = [c for c in post.provenance if c["field"] == "published" and c["chosen"]]
    assert post.published == "2023-02-21T00:00:00Z" and chosen[0]["origin"] == "the page's only <time datetime>"
    # two dates, or an update's: nothing to tell which is the post's
    two = sidebar.replace("</ul>", '<li><time datetime="2024-05-01">May 1, 2024</time></li></ul>')
    assert not [c for c in extract_post("https://blog.test/blog/a-slug/", page.replace(sidebar, two)).provenance
                if c["origin"] == "the page's only <time datetime>"]
    updated = sidebar.replace("<time ", '<time class="updated" ')
    assert not [c for c in extract_post("https://blog.test/blog/a-slug/", page.replace(sidebar, updated)).provenance
                if c["origin"] == "the page's only <time datetime>"]


def test_a_highlighters_classes_inside_code_are_neither_furniture_nor_meta():
    # hljs marks a #include line "meta": drop_post_furniture took it for the post's metadata, and
    # trafilatura takes any "meta" class for a page's furniture
    code = ('<figure class="highlight c"><table><tr><td class="gutter"><pre><span class="line">1</span><br>'
            '<span class="line">2</span></pre></td><td class="code"><pre><span class="line"><span class="meta">#'
            '<span class="keyword">include</span> <span class="string">&lt;stdio.h&gt;</span></span></span><br>'
            '<span class="line"><span class="type">int</span> x = 1;</span></pre></td></tr></table></figure>')
    post = extract_post("https://blog.test/c/", html.tostring(tree(
        f'<article><h1>C</h1>{LONG}<p>The program:</p>{code}<p>That is all.</p>{LONG}</article>'), encoding="unicode"))
    assert "#include <stdio.h>" in post.text and "int x = 1;" in post.text
    root = tree(f'<article>{code}</article>')
    drop_line_numbers(root)
    drop_post_furniture(root)
    assert root.xpath("string(//pre)").startswith("#include <stdio.h>")


def test_a_short_footnote_with_its_backlink_stays_in_the_text():
    note = ('<section class="footnotes" role="doc-endnotes"><hr><ol><li id="fn1"><p>Update: I switched, see '
            '<a href="https://github.com/a/b">here</a><a href="#fnref1" class="footnote-back" role="doc-backlink">↩︎</a>'
            '</p></li></ol></section>')
    post = extract_post("https://blog.test/n/", html.tostring(tree(
        f'<main><h1>Notes</h1>{LONG}<p>A claim.<sup><a href="#fn1">1</a></sup></p>{note}</main>'), encoding="unicode"))
    assert "Update: I switched, see here" in post.text and "↩" not in post.text


def test_the_same_label_on_every_folded_block_is_not_a_heading():
    # Quarto's code-fold: <details><summary>Code</summary> before each chunk, which trafilatura made
    # headings, losing the post's own; a folded block's own label is the author's text
    section = ('<section><h2>Part {0}</h2>' + LONG + '<details><summary>Code</summary><div class="sourceCode">'
               '<pre><code>x{0} &lt;- {0}</code></pre></div></details></section>')
    page = (f'<main><h1>Post</h1>{"".join(section.format(i) for i in range(4))}'
            '<details><summary>The answer, folded</summary><p>It is forty-two, said the author.</p></details></main>')
    root = tree(page)
    document = article_document(root, article_body(root))
    assert [s.text for s in document.iter("summary")] == ["The answer, folded"]
    assert len(document.xpath("//h2")) == 4


def test_the_feeds_text_wins_only_when_a_reader_would_see_more_of_it():
    # a feed entry of the same post, its code's gutter of line numbers and its indentation included,
    # is not a longer text than the page's: the page's text stays, with its link-only paragraph
    code = "\n".join(f"        step_{i} = compute({i})" for i in range(60))
    gutter = "\n".join(str(i) for i in range(1, 61))
    table = (f'<figure class="highlight"><table><tr><td class="gutter"><pre>{gutter}</pre></td>'
             f'<td class="code"><pre>{code}</pre></td></tr></table></figure>')
    body = f'<p>The steps, in C sharp:</p><p><a href="https://blog.test/c-version/">The C version of this post</a></p>{table}'
    page = html.tostring(tree(f'<article><h1>Steps</h1>{LONG}{body}</article>'), encoding="unicode")
    indented = f"{LONG}{body}".replace("><", ">\n" + " " * 120 + "<")  # a feed's HTML as its generator wrote it
    post = extract_post("https://blog.test/steps/", page, feed_entry={"content": indented})
    assert [c["origin"] for c in post.provenance if c["field"] == "text" and c["chosen"]] == ["page"]
    assert "The C version of this post" in post.text
    # the whole post in the feed beside a page of its first lines: the feed's, cleaned as a page is
    teaser = html.tostring(tree('<article><h1>Steps</h1><p>The first lines only, then a link to read more.</p></article>'),
                           encoding="unicode")
    post = extract_post("https://blog.test/steps/", teaser, feed_entry={"content": f"{LONG}{body}"})
    assert [c["origin"] for c in post.provenance if c["field"] == "text" and c["chosen"]] == ["feed"]
    assert "step_59 = compute(59)" in post.text and "\n60\n" not in post.text and "The C version" in post.text


# ---------------------------------------------------------------- the guard: never worse than trafilatura alone

LINKS = [("https://docs.python.org/3/library/asyncio.html", "asyncio, the standard library's event loop"),
         ("https://trio.readthedocs.io/", "Trio, structured concurrency for Python"),
         ("https://anyio.readthedocs.io/", "AnyIO, one API over asyncio and Trio"),
         ("https://www.uvicorn.org/", "Uvicorn, an ASGI server"),
         ("https://www.starlette.io/", "Starlette, a small ASGI toolkit"),
         ("https://httpx.readthedocs.io/", "HTTPX, a client with async support"),
         ("https://aiosqlite.omnilib.dev/", "aiosqlite, SQLite from asyncio"),
         ("https://github.com/MagicStack/uvloop", "uvloop, a faster event loop")]
LINK_LIST = "<ul>" + "".join(f'<li><a href="{u}">{t}</a></li>' for u, t in LINKS) + "</ul>"
MENU = ('<header class="site-header"><a href="/">Home</a> <a href="/archives/">Archives</a> '
        '<a href="/about/">About</a></header>')


def chosen_text(post) -> list[tuple[str, str]]:
    return [(p["origin"], p["value"]) for p in post.provenance if p["field"] == "text" and p["chosen"]]


def test_a_hidden_theme_notice_is_never_the_body_of_a_post_that_is_a_list_of_links():
    # a theme's notice that scripts show only when a module is missing (hidden until then), its text
    # in paragraphs and code, beside a post that is only links: the post is the links
    notice = ('<div class="tag-load-fail" style="display: none; color: #ccc;"><p>Missing module.<br>'
              '1. Make sure node is newer than 6.2<br>2. Run this in the blog root, not the theme root:</p>'
              '<pre>npm i hexo-generator-json-content --save</pre><p>3. Add this to _config.yml:</p>'
              '<pre>jsonContent:\n  meta: false\n  pages: false\n  posts:\n    title: true\n    date: true\n'
              '    path: true\n    text: false\n    tags: true</pre></div>')
    page = (f'<html><head><title>Async Python links | Notes</title></head><body>{MENU}'
            f'<div class="left-col"><nav class="tools">{notice}</nav></div>'
            f'<div class="mid-col"><div class="article-entry"><h1>Async Python links</h1>'
            f'<p>Reading list:</p>{LINK_LIST}</div></div></body></html>')
    root = tree(page.split("<body>")[1].split("</body>")[0])
    body = article_body(root)
    assert body is None or not body.xpath("ancestor-or-self::*[contains(@style, 'display: none')]")
    post = extract_post("https://blog.test/2019/async-links/", page)
    assert "Missing module" not in post.text and "jsonContent" not in post.text
    for _, text in LINKS:
        assert text in post.text


def test_a_post_that_is_a_list_of_links_keeps_every_link_text():
    # no element marks the body, and the post's text is almost all links: trafilatura alone keeps the
    # list, and so must the archive
    page = (f'<html><head><title>Weekly links 12 | Notes</title></head><body>{MENU}'
            f'<div class="container"><h1>Weekly links 12</h1><p>This week:</p>{LINK_LIST}</div>'
            f'<div class="widget-area"><p>Subscribe to the newsletter for more links every week.</p></div>'
            f'<footer class="site-footer"><p>© 2024 Notes. Built with a static site generator.</p></footer>'
            f'</body></html>')
    post = extract_post("https://blog.test/weekly-12/", page)
    assert post is not None
    for _, text in LINKS:
        assert text in post.text
    assert "newsletter" not in post.text


def test_a_page_whose_isolation_empties_the_body_keeps_what_trafilatura_keeps():
    # the theme wraps the post and its sidebar in one element whose class names the sidebar
    # ("content-sidebar-wrap"): taking out the site's furniture takes out the post with it
    paragraphs = "".join(
        f"<p>Paragraph {i} of the post explains how the write-ahead log lets readers and the writer "
        f"work at the same time, and why checkpoints matter for a database file {i} times its size.</p>"
        for i in range(1, 9))
    page = (f'<html><head><title>WAL mode | Notes</title></head><body>{MENU}'
            f'<div class="content-sidebar-wrap"><div class="content"><div class="entry">'
            f'<h1>WAL mode</h1>{paragraphs}</div></div>'
            f'<div class="sidebar"><p>Recent posts and other things.</p></div></div></body></html>')
    post = extract_post("https://blog.test/wal-mode/", page)
    assert post is not None
    assert "Paragraph 1 of the post" in post.text and "Paragraph 8 of the post" in post.text
    assert chosen_text(post)[0][0] == "trafilatura"
    assert "trafilatura on the whole page" in chosen_text(post)[0][1]


def test_html_comments_inside_a_paragraph_keep_the_text_after_them():
    # a renderer's empty comments between the words of a sentence (React writes "When <!-- -->President")
    para = ("<p>When <!-- -->President<!-- --> <!-- -->Lincoln’s<!-- --> advisers suggested a longer speech, "
            "he wrote a shorter one.</p>")
    post = extract_post("https://blog.test/speech/", f"<html><body><article><h1>Speech</h1>{para}{LONG}</article></body></html>")
    assert "When President Lincoln’s advisers suggested a longer speech" in post.text


def test_a_login_form_in_a_window_of_the_site_protects_nothing():
    # no element marks the post's body, and the site's login window has a password field: the
    # article trafilatura reads on the page is the post, not a password prompt
    login = ('<div class="modal-window window-auth"><form action="/login/" method="post">'
             '<label>Enter password</label><input type="password" name="password"></form></div>')
    story = "".join(f"<div class='txt'>Sentence {i} of the column, about a royal interview and what it "
                    f"left unsaid, told at some length for the readers of the site.</div>" for i in range(12))
    page = f"<html><body><div class='layout'><h1>Royal arrogance</h1>{story}</div>{login}</body></html>"
    post = extract_post("https://news.test/columnists/royal/", page)
    assert post is not None and not post.protected
    assert "Sentence 11 of the column" in post.text


def test_a_tables_header_row_classed_header_stays_in_the_text():
    # Pandoc writes every table's row of column names as <tr class="header">: the table's, not the site's
    rows = "".join(f"<tr><td>run {i}</td><td>{i}.5 s</td><td>{i * 3} MB</td></tr>" for i in range(1, 6))
    page = ("<html><head><title>Counting words | Notes</title></head><body><article><h1>Counting words</h1>"
            "<p>Each version of the program was timed on the same file, and its memory measured.</p>"
            f"<table><thead><tr class='header'><th>version</th><th>elapsed</th><th>resident</th></tr></thead>"
            f"<tbody>{rows}</tbody></table><p>The second version is the one to keep.</p></article></body></html>")
    post = extract_post("https://blog.test/wc/", page)
    assert post is not None
    for name in ("version", "elapsed", "resident"):
        assert name in post.text


def test_a_post_whose_marked_body_is_empty_on_the_page_stays_empty():
    # the author published a post with no text: the theme's article element is empty, and the
    # page around it is menus, a sidebar of counts and links; none of that is the post
    sidebar = "".join(f"<p>Recent post number {i} of the blog, with a teaser of its opening lines here.</p>"
                      for i in range(1, 15))
    page = (f"<html><head><title>An empty post | Notes</title></head><body>{MENU}"
            f"<div id='content'><h1>An empty post</h1><article class='post-content' id='article-container'></article>"
            f"</div><aside id='aside-content'><div class='card-widget'>{sidebar}</div></aside></body></html>")
    post = extract_post("https://blog.test/empty/", page)
    assert post is None or not (post.text or "").strip()


def test_a_first_line_made_only_of_the_posts_author_and_tags_is_its_byline_not_its_text():
    # a VuePress theme's title block, hidden until a script shows it, whose byline is icons in <i>
    # that no furniture class names: it was the text's first line (trafilatura drops it)
    page = CORPUS / "hawkew-vuepress-zh" / "site" / "frontend" / "electron" / "201203-electron-learning.html"
    post = extract_post("https://hawkew.github.io/frontend/electron/201203-electron-learning.html", page.read_text())
    assert post is not None and post.author == "一度" and post.tags == ["Electron"]
    assert post.text.startswith("# 初次运行"), post.text[:80]
    assert post.markdown.startswith("# Electron 学习 01： 运行第一个 electron 客户端\n\n### # 初次运行"), post.markdown[:120]


def test_a_first_line_is_a_byline_only_when_two_of_the_posts_own_names_and_no_other_words_make_it():
    def after(first: str, markdown_first: str = "") -> tuple[str, str]:
        post = BlogPost(url="https://blog.test/p/1", title="Notes", author="Jane Doe", tags=["Go", "机器学习"],
                        published="2024-05-01T10:00:00Z", text=f"{first}\nThe body.",
                        markdown=f"# Notes\n\n{markdown_first or first}\n\nThe body.")
        _drop_byline(post)
        return post.text, post.markdown

    for byline in ("Jane Doe · Go", "jane doe | 2024-05-01 | 机器学习, Go", "2024-05-01 17:14 Go 3"):
        assert after(byline, f"*{byline}*") == ("The body.", "# Notes\n\nThe body.")
    for text in ("Go", "Jane Doe", "Jane Doe writes about Go", "Google Go", "Go 语言与机器学习"):
        assert after(text) == (f"{text}\nThe body.", f"# Notes\n\n{text}\n\nThe body.")
