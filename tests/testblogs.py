"""Six realistic test blogs, generated in memory, with their ground truth.

Each function below returns a :class:`Blog`: its routes (served by
:class:`blogsite.RouteServer` on 127.0.0.1) and what a crawler must find there.
Every absolute URL in a blog uses ``http://HOST/``; tests crawl ``blog.home`` with
``--map-host HOST=server.base``::

    blog = typecho_blog()
    with blog.serve() as server:
        run_cli(*crawl_args(blog.home, db, {blog.host: server.base}))
        assert not server.requested("/private/")

=================  ====================================================================
blog               what it exercises
=================  ====================================================================
typecho_blog       Typecho: /p/N without slash, 5 per page, /t/NAME tags, a teaser RSS
                   feed of the 10 newest only, dates only in <time> inside <article>
writing_site       WordPress-like essays: complete RSS with content:encoded, offsets
                   everywhere, categories (rel="category tag") beside tags, relative links
hexo_chinese       Hexo/NexT: raw UTF-8 CJK hrefs, lang="en-us" on Chinese text, only
                   "2024年7月30日" on pages, an Atom feed of the 5 newest of 9 posts
gbk_blog           an old PHP blog in GBK declared gb2312, a page whose HTTP header says
                   ISO-8859-1, a GBK RSS feed expat refuses, posts under /archives/
jekyll_blog        Minimal Mistakes: no feed at all, robots.txt -> sitemap index -> a
                   gzip sitemap, JSON-LD BlogPosting, /page2/ pagination
trap_blog          duplicate URL forms, 301 and meta-refresh aliases, robots.txt-disallowed
                   look-alike post, endless calendar, session ids, PDF, mailto/tel/js links
=================  ====================================================================

Ground truth of a post (``Blog.posts`` items) is a dict:

``path``                 canonical URL path, percent-decoded (``/2024/07/30/内存/``)
``url``                  canonical URL, path percent-encoded as UTF-8 (how archives store it)
``title`` ``author``     as the blog shows them
``published``            ``YYYY-MM-DDTHH:MM:SSZ`` (UTC) or None where the blog gives no time
``published_day``        UTC day of ``published``; when that is None, the day the page prints
``published_day_local``  the day in the blog's own zone (what the page prints)
``published_day_utc``    the UTC day; for a date without time, the UTC day of its midnight in
                         the blog's zone (``Blog.zone``): 2024-07-30 at +08:00 -> 2024-07-29
``updated``              UTC time the blog states as a distinct modification, else None
``tags`` ``categories``  lists, in page order (tags never include categories)
``lang``                 "en" or "zh", from the text (whatever <html lang> claims)
``phrase``               a sentence of the post body that the extracted text must contain
``comment_phrase``       a reader's comment under the post that the text must not contain

Everything is deterministic: randomness comes from ``random.Random(<fixed seed>)``
(the trap blog's session ids change on every request, from a seeded generator).
"""

from __future__ import annotations

import calendar
import html
import json
import random
import re
import struct
import threading
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, quote, unquote_to_bytes

from blogsite import (
    Page,
    RouteServer,
    file_page,
    gzip_page,
    html_page,
    redirect,
    text_page,
    xml_page,
)

MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]


@dataclass
class Blog:
    """A test blog and its ground truth."""

    name: str  # short id: "typecho", "essays", "hexo", "gbk", "jekyll", "trap"
    host: str  # public host; every absolute URL in the blog is http://HOST/...
    home: str  # URL the crawl starts from, http://HOST/
    routes: dict[str, Page | Callable]  # for RouteServer (keys: path, or path?query)
    posts: list[dict]  # ground truth, one dict per post, newest first (see module doc)
    non_posts: list[str]  # pages (decoded path, ?query kept) never to archive as posts
    never_fetched: list[str]  # path prefixes a polite crawler never requests (robots.txt)
    aliases: dict[str, str]  # alias target (path or path?query) -> canonical post path
    lang: str  # main language of the text, "en" or "zh"
    zone: str = "+00:00"  # the blog's own UTC offset, for dates printed without one
    feeds: list[str] = field(default_factory=list)  # feeds the blog declares (absolute URLs)
    sitemaps: list[str] = field(default_factory=list)  # sitemaps robots.txt declares
    # aliases that differ in more than path and query (scheme/host case, port, fragment)
    alias_urls: dict[str, str] = field(default_factory=dict)
    broken: list[str] = field(default_factory=list)  # linked paths that answer 404 on purpose
    forbidden_phrases: list[str] = field(default_factory=list)  # in no archived text, ever
    not_found: Page | None = None  # the blog's own 404 page, if it has one
    quirks: list[str] = field(default_factory=list)  # what is tricky, in words

    def url(self, target: str) -> str:
        """``http://HOST`` + target, path percent-encoded as UTF-8."""
        path, sep, query = target.partition("?")
        return f"http://{self.host}{quote(path, safe='/%')}{sep}{query}"

    def post(self, path: str) -> dict:
        """The truth of the post at ``path``."""
        return next(p for p in self.posts if p["path"] == path)

    def serve(self) -> RouteServer:
        """A RouteServer for this blog (use it in a ``with``)."""
        return RouteServer(self.routes, not_found=self.not_found)


# ============================================================================================
# Prose: hand-written openings per post, plus sentences dealt from per-language pools
# ============================================================================================

EN_TECH_POOL = [
    "Most of the time the fix was smaller than the investigation, which is how it usually goes.",
    "I keep a plain text file of commands that worked, and it has saved me more hours than any tool I have installed.",
    "The documentation was correct, but it answered a slightly different question from the one I had.",
    "Nothing here is new; it is just written down in the order I wish I had learned it.",
    "If you can reproduce a problem on demand, you are already most of the way to solving it.",
    "I try to change one thing at a time, even when I am sure I know what is wrong.",
    "A good default is worth more than a clever option nobody remembers to turn on.",
    "Measuring first felt slow at the time, but it kept me from optimizing the wrong thing twice.",
    "The boring solution has one big advantage: other people already know how it fails.",
    "Every shortcut I took here came back later as a bug report from my future self.",
    "It is worth reading the error message twice before searching for it.",
    "Small, reversible steps made it possible to try ideas without a long rollback plan.",
    "I wrote a tiny script to check the result, and it found two mistakes in my first attempt.",
    "Most of the complexity came from edge cases that only appeared with real data.",
    "The logs told the whole story once I stopped skimming them for the word error.",
    "Keeping the configuration in version control made the history of every decision easy to find.",
    "I would rather have a slow system I understand than a fast one I am afraid to touch.",
    "A colleague once told me that every cache is a bet on the future, and I think about that often.",
    "The second time I hit the same problem, I finally wrote a test for it.",
    "None of this needed a new framework, just a bit of patience and a terminal.",
    "Defaults change between versions, so I now pin the ones I depend on explicitly.",
    "I was surprised how much of the work was naming things clearly.",
    "The real bottleneck turned out to be a single query that ran once per request.",
    "Writing the steps down as I went made the final write-up almost free.",
    "There is a point where adding more monitoring stops helping and starts adding noise.",
    "Reading the source code for twenty minutes answered a question the forums could not.",
    "I like tools that do one job and print something useful when they fail.",
    "When in doubt, I check what the machine is actually doing rather than what I think it should do.",
    "The hardest part was deciding what not to automate.",
    "It took an afternoon to set up and has needed almost no attention since.",
    "An alert that fires every day is an alert that nobody reads.",
    "I now keep a short checklist next to the keyboard for the steps I used to forget.",
    "The old approach was not wrong, it simply stopped fitting once the data grew.",
    "A quick diagram on paper helped more than another hour of reading code.",
    "I expected the network to be the problem, and for once it really was.",
    "Timeouts are a design decision, not a number you pick at random and forget.",
    "Most outages I have seen started with a change that looked too small to review.",
    "Sometimes the best optimization is to stop doing the work at all.",
    "I ran the same benchmark five times before I trusted any of the numbers.",
    "Plain text formats have outlived every clever binary format I have used.",
    "The fix went out on a Friday afternoon, which I do not recommend.",
    "It helps to write the rollback command before running the change.",
    "Tests that run in seconds get run; tests that take ten minutes get skipped.",
    "I learned more from the one failed attempt than from the three that worked.",
    "Good error messages are a kindness to whoever is on call at three in the morning.",
    "Hardware is cheap until you have to carry it up four flights of stairs.",
    "The first version was ugly, but it answered the question, and that was enough.",
    "Documentation that lives next to the code is the only kind I have seen stay current.",
    "If a task needs a wiki page to explain it, it probably needs a script instead.",
    "Simple setups fail in simple ways, and that is most of their appeal.",
]

ESSAY_POOL = [
    "There is a particular kind of quiet that only arrives after you stop trying to find it.",
    "I have come to distrust any plan that cannot survive a rainy afternoon.",
    "Memory is less like a library and more like a garden that keeps rearranging its own paths.",
    "My grandmother used to say that the hands remember what the head forgets.",
    "Some days the best thing a sentence can do is get out of the way.",
    "We tend to measure time by what happened in it, and so the empty hours vanish from the record.",
    "Attention, it turns out, is not something you pay but something you practise.",
    "The city at dawn belongs to bakers, cleaners and people who could not sleep.",
    "I used to think that boredom was a problem to be solved rather than a room to be entered.",
    "Every habit I have kept began as something slightly embarrassing to admit.",
    "The page does not care how long you have been away; it simply waits.",
    "What we call slowness is often just the speed at which things actually happen.",
    "A good question can keep you company for years.",
    "I have never regretted a walk, though I have regretted many of the reasons I almost skipped one.",
    "Writing is mostly deciding what to leave out and then living with the decision.",
    "There is courage in finishing something small.",
    "Maps tell you where things are but not what they are like on a Tuesday in November.",
    "The older I get, the more I value people who say I do not know and mean it.",
    "Most of what I understand about patience I learned from waiting for bread to rise.",
    "A room holds the shape of the conversations that happened in it long after everyone leaves.",
    "I try to read the way a good listener listens, without rehearsing my reply.",
    "Strangers on trains tell each other things they would never say at a dinner party.",
    "The handwriting on an old envelope can carry a whole voice with it.",
    "Nothing makes a place feel like home faster than knowing where the light falls at four o'clock.",
    "Every draft is a conversation with the person you were when you started it.",
    "It is strange how a smell can open a door you thought had been bricked up.",
    "I no longer believe that productivity and attention are the same thing.",
    "Some books need to be read twice, once to find out what happens and once to find out why it mattered.",
    "The margins of a notebook are where the honest thoughts tend to gather.",
    "Leaving space in a day is not laziness; it is where the unexpected gets in.",
    "A landscape seen from a moving window becomes a kind of music.",
    "I keep learning the same lessons, but each time they arrive in a different coat.",
]

ZH_TECH_POOL = [
    "很多问题在复现出来的那一刻，其实就已经解决了一半。",
    "我习惯把踩过的坑记在一个纯文本文件里，时间久了反而成了最有用的文档。",
    "官方文档写得没错，只是它回答的问题和我真正想问的并不完全一样。",
    "排查的过程往往比最后的修改长得多，这几乎是常态。",
    "每次只改一个地方，哪怕自己很确定问题出在哪里。",
    "先测量再优化，这句话说了很多年，但真正做到并不容易。",
    "朴素的方案有一个很大的好处：别人已经知道它会怎么出问题。",
    "当时偷的懒，后来都以线上告警的形式还了回来。",
    "报错信息值得认真读两遍，再去搜索引擎里找答案。",
    "小步提交、随时可以回滚，让我敢于尝试一些不太确定的想法。",
    "大部分复杂度都来自真实数据里那些意想不到的边界情况。",
    "把配置放进版本库之后，每一次改动的来龙去脉都能查得到。",
    "我宁愿要一个慢一点但自己完全理解的系统，也不想要一个快却不敢碰的系统。",
    "同样的问题遇到第二次，我终于给它补上了测试。",
    "这件事并不需要引入新的框架，一点耐心加一个终端就够了。",
    "不同版本之间的默认值会变，所以我现在会把依赖的配置写死。",
    "真正的瓶颈是一条每次请求都会执行的查询语句。",
    "边做边记，最后写总结的时候几乎不费什么力气。",
    "监控加到一定程度之后，带来的噪音比信息还多。",
    "花二十分钟读源码，解决了论坛上讨论了好几页都没说清楚的问题。",
    "我喜欢那种只做一件事、出错时会打印有用信息的工具。",
    "拿不准的时候，就去看机器实际上在做什么，而不是我以为它在做什么。",
    "最难的部分是决定哪些事情不要自动化。",
    "每天都会响的告警，最后一定没人看。",
    "旧方案并没有错，只是数据量上来之后不再合适了。",
    "在纸上画一张草图，比再读一个小时代码更有帮助。",
    "超时时间是一个设计决策，而不是随手填的一个数字。",
    "有时候最好的优化就是干脆不做这件事。",
    "同一个基准测试我跑了五遍，才敢相信其中的数字。",
    "纯文本格式比我用过的任何二进制格式都活得更久。",
    "执行变更之前先把回滚命令写好，是个值得坚持的习惯。",
    "几秒钟能跑完的测试才会有人跑，十分钟的测试迟早会被跳过。",
    "失败的那一次尝试，教会我的东西比成功的三次还多。",
    "清晰的错误信息，是对半夜值班同事最大的善意。",
    "第一版写得很难看，但它回答了问题，这就够了。",
    "和代码放在一起的文档，是我见过唯一能保持更新的文档。",
]

ZH_LIFE_POOL = [
    "日子过得很快，一转眼又是一个月。",
    "晚上泡了一杯茶，坐在电脑前发了很久的呆。",
    "有些事情，当时觉得天大，过几年再看不过是一笑而已。",
    "楼下的小卖部换了老板，那只总趴在门口的黄猫也不见了。",
    "写博客这件事，坚持下来比想象中难得多。",
    "周末去了一趟书店，空着手进去，抱着一摞书出来。",
    "网速还是老样子，打开一个网页要等半天。",
    "朋友说我想得太多，也许他是对的。",
    "窗外下着小雨，适合什么都不做。",
    "这几天加班到很晚，回家路上只剩下路灯陪着。",
    "记下来，免得以后忘了。",
    "有时候觉得，能安安静静地过完一天，就是一种福气。",
    "翻出几年前的日记，字写得歪歪扭扭，却看得人心里发热。",
    "母亲打电话来，问我吃得好不好，我说一切都好。",
    "人到了一定年纪，才明白平淡的可贵。",
    "希望明年这个时候，回头看这篇文章，能觉得自己有一点点进步。",
    "单位的老电脑终于换了，开机不用再等五分钟。",
    "看完一本好书，总想找个人说说话。",
    "菜市场里的吆喝声，比任何闹钟都管用。",
    "很多道理都懂，可真到了自己身上，还是会犯同样的错。",
    "回来的火车上人挤人，我站了六个小时。",
    "夜里睡不着，索性爬起来把这段时间的想法写下来。",
    "旧友相见，话不必多，一杯酒就够了。",
    "就写到这里吧，明天还要早起。",
]

# First comments: one per post, never twice in a blog; the comment_phrase of the truth.
EN_TECH_COMMENTS = [
    "Great write-up, I bookmarked this for the next time our staging box misbehaves.",
    "We hit exactly this last winter and spent two days blaming the load balancer.",
    "Small nitpick: the second command needs sudo on Debian, at least on my machine.",
    "Thanks for sharing, my team lead will finally believe me now.",
    "Have you tried the same thing on ARM? I got very different numbers on a Pi.",
    "This is the clearest explanation I have read, and I have read a lot of them.",
    "I respectfully disagree about the defaults, they bit us in production twice.",
    "Printed this out and pinned it above my desk, no joke.",
    "Would love a follow-up post on how this held up after a year.",
    "My cat walked across the keyboard while I was reading this and still understood it better than I did.",
    "Came here from a search at two in the morning, you saved my night.",
    "The part about rollbacks should be mandatory reading for every new hire.",
    "Funny, I wrote almost the same script last month but in Perl.",
    "One thing to add: check the kernel version first, older ones behave differently.",
    "Your blog is one of the few I still read through RSS, keep it up.",
    "I shared this with our study group and it started a two hour debate.",
    "Any chance you could post the full config somewhere?",
    "This reminded me why I switched careers from accounting, thank you.",
    "We ended up doing the opposite and regretted it within a week.",
]
EN_ESSAY_COMMENTS = [
    "Beautifully written, even for someone who only understood half of it.",
    "The line about honest notebooks made me go and buy a new one this afternoon.",
    "I read this on the train home and missed my stop.",
    "My grandfather kept letters like that in a biscuit tin under the stairs.",
    "I am saving this one for the next grey Sunday.",
    "You put into words something I have felt on every long walk.",
    "Reading this felt like sitting in a warm kitchen with an old friend.",
    "I disagree a little: some rooms are heavy because of what never happened in them.",
    "Sent this to my sister, who still writes letters by hand.",
]
ZH_TECH_COMMENTS = [
    "写得很清楚，收藏了，下次遇到同样的问题直接照着做。",
    "我们线上也遇到过一模一样的情况，当时排查了整整两天。",
    "小问题：第二条命令在 CentOS 上好像要加 sudo。",
    "感谢分享，终于有理由说服组长了。",
    "博主有没有在 ARM 机器上试过？我在树莓派上得到的结果完全不一样。",
    "这是我看过讲得最明白的一篇，没有之一。",
    "默认配置那部分我不太同意，我们就是被默认值坑过两次。",
    "期待一下后续，用了一年之后效果怎么样。",
    "半夜搜到这里，救了我一命。",
    "回滚那一段应该让每个新人都读一读。",
]
ZH_LIFE_COMMENTS = [
    "沙发！博主的文章一直在追。",
    "路过，顺便踩一踩，博客的新皮肤不错。",
    "看完想起了我们老家，冬天也是这样冷。",
    "楼主说得太对了，平平淡淡才是真。",
    "请问博主用的是什么数据恢复软件？我的硬盘也出了问题。",
    "好久没更新了，还以为博主不写了呢。",
    "这本书我也看过，结尾那一段至今印象很深。",
    "祝博主新年快乐，万事如意！",
]
# Second comments: short, may repeat across posts.
EN_SHORT_COMMENTS = ["Thanks!", "Seconded.", "Same here, great post.", "Bookmarked.", "+1"]
ZH_SHORT_COMMENTS = ["谢谢分享！", "同问。", "已收藏。", "支持一下。", "顶！"]
EN_NAMES = [
    "Priya N.", "Tom Hargreaves", "Lena Fischer", "Marco Bellini", "Aisha Rahman", "Jon",
    "Kenji Watanabe", "Sofia Alvarez", "dave_ops", "Ruth Okoye", "Nils", "Grace Liu",
]
ZH_NAMES = ["路人甲", "小王", "阿杰", "码农老李", "Sunny", "青青", "匿名网友", "老周"]


# ============================================================================================
# Shared helpers
# ============================================================================================


def esc(text: str) -> str:
    """Text for an HTML text node (quotes left alone, so phrases stay greppable)."""
    return html.escape(text, quote=False)


def attr(text: str) -> str:
    """Text for an HTML attribute value."""
    return html.escape(text, quote=True)


def cdata(text: str) -> str:
    assert "]]>" not in text
    return f"<![CDATA[{text}]]>"


def moment(text: str) -> datetime:
    """``"2024-07-30 21:15 +08:00"`` -> an aware datetime in that offset."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M %z")


def iso(dt: datetime) -> str:
    """ISO 8601 with the offset: 2024-07-30T21:15:00+08:00 (Z never used)."""
    return dt.isoformat()


def iso_z(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc822(dt: datetime) -> str:
    """RFC 822 date in the datetime's own offset: Tue, 30 Jul 2024 21:15:00 +0800."""
    days = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
    off = dt.strftime("%z")
    return f"{days[dt.weekday()]}, {dt.day:02d} {MONTHS[dt.month - 1][:3]} {dt:%Y %H:%M:%S} {off}"


def us_date(dt: datetime) -> str:
    return f"{MONTHS[dt.month - 1]} {dt.day}, {dt.year}"


def uk_date(dt: datetime) -> str:
    return f"{dt.day} {MONTHS[dt.month - 1]} {dt.year}"


def zh_date(dt: datetime) -> str:
    return f"{dt.year}年{dt.month}月{dt.day}日"


def slugify(name: str) -> str:
    """Tag and category slugs: lower case, spaces and dots to hyphens."""
    return re.sub(r"[\s.]+", "-", name.strip().lower())


def enc(path: str) -> str:
    """A path percent-encoded as UTF-8, as engines write it in feeds and canonical links."""
    return quote(path, safe="/")


PHRASE_MARK = re.compile(r"\[\[(.+?)\]\]")


@dataclass
class Comment:
    id: int
    name: str
    text: str
    when: datetime


@dataclass
class Post:
    """A post as the generators see it (the truth dicts are derived from these)."""

    path: str  # decoded canonical path
    title: str
    author: str
    when: datetime  # aware, in the blog's zone
    tags: list[str]
    categories: list[str]
    paras: list[str]  # plain-text paragraphs: intro, detail, then two dealt from the pool
    phrase: str
    heading: str  # subheading before the pooled paragraphs
    code: str | None
    comments: list[Comment]
    updated: datetime | None = None
    time_known: bool = True  # False: the blog states the day only, nowhere the time
    slug: str = ""
    num: int = 0  # engine's numeric id (Typecho cid, WordPress post id, ...)

    @property
    def comment_phrase(self) -> str:
        return self.comments[0].text

    @property
    def intro(self) -> str:
        return self.paras[0]


class Dealer:
    """Deals sentences from a pool shuffled once per blog: no sentence twice in one blog."""

    def __init__(self, pool: list[str], seed: str, joiner: str = " "):
        self.rng = random.Random(seed)
        self.pool = list(pool)
        self.rng.shuffle(self.pool)
        self.joiner = joiner

    def take(self, n: int) -> list[str]:
        if len(self.pool) < n:
            raise ValueError("sentence pool exhausted: write more sentences")
        taken, self.pool = self.pool[:n], self.pool[n:]
        return taken

    def paragraphs(self, count: int = 2, per: int = 2) -> list[str]:
        return [self.joiner.join(self.take(per)) for _ in range(count)]


def make_posts(
    specs: list[dict],
    *,
    seed: str,
    pool: list[str],
    comments: list[str],
    shorts: list[str],
    names: list[str],
    headings: list[str],
    joiner: str = " ",
    first_comment_id: int = 10,
) -> list[Post]:
    """Posts from specs (dicts: path, title, author, when, tags, categories, intro with
    ``[[the phrase]]`` marked, detail, and optionally code, updated, slug, num), oldest first
    in, newest first out."""
    prose = Dealer(pool, seed + "-prose", joiner)
    firsts = Dealer(comments, seed + "-comments")
    rng = random.Random(seed + "-misc")
    posts, cid = [], first_comment_id
    for spec in specs:
        match = PHRASE_MARK.search(spec["intro"])
        assert match, spec["title"]
        when = moment(spec["when"])
        thread = [Comment(cid, rng.choice(names), firsts.take(1)[0], when + timedelta(days=1, hours=3))]
        cid += rng.randint(1, 4)
        if rng.random() < 0.6:
            thread.append(Comment(cid, rng.choice(names), rng.choice(shorts), when + timedelta(days=2, hours=7)))
            cid += rng.randint(1, 4)
        posts.append(
            Post(
                path=spec["path"],
                title=spec["title"],
                author=spec["author"],
                when=when,
                tags=list(spec["tags"]),
                categories=list(spec.get("categories", [])),
                paras=[PHRASE_MARK.sub(r"\1", spec["intro"]), spec["detail"], *prose.paragraphs()],
                phrase=match.group(1),
                heading=rng.choice(headings),
                code=spec.get("code"),
                comments=thread,
                updated=moment(spec["updated"]) if spec.get("updated") else None,
                time_known=spec.get("time_known", True),
                slug=spec.get("slug", ""),
                num=spec.get("num", 0),
            )
        )
    return sorted(posts, key=lambda p: p.when, reverse=True)


def truth(post: Post, host: str, lang: str) -> dict:
    """The ground-truth dict of a post (see the module docstring)."""
    local_day = post.when.date().isoformat()
    if post.time_known:
        published = iso_z(post.when)
        utc_day = published[:10]
    else:
        published = None
        midnight = post.when.replace(hour=0, minute=0, second=0)
        utc_day = midnight.astimezone(UTC).date().isoformat()
    return {
        "path": post.path,
        "url": f"http://{host}{enc(post.path)}",
        "title": post.title,
        "author": post.author,
        "published": published,
        "published_day": utc_day if published else local_day,
        "published_day_local": local_day,
        "published_day_utc": utc_day,
        "updated": iso_z(post.updated) if post.updated else None,
        "tags": list(post.tags),
        "categories": list(post.categories),
        "lang": lang,
        "phrase": post.phrase,
        "comment_phrase": post.comment_phrase,
    }


def body_html(post: Post, heading_tag: str = "h2", code_class: str = "") -> str:
    """The post body: intro, detail, optional code block, a subheading, two more paragraphs."""
    intro, detail, *rest = post.paras
    parts = [f"<p>{esc(intro)}</p>", f"<p>{esc(detail)}</p>"]
    if post.code:
        cls = f' class="{code_class}"' if code_class else ""
        parts.append(f"<pre><code{cls}>{esc(post.code)}</code></pre>")
    parts.append(f"<{heading_tag}>{esc(post.heading)}</{heading_tag}>")
    parts += [f"<p>{esc(p)}</p>" for p in rest]
    return "\n".join(parts)


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def excerpt(text: str, words: int) -> str:
    """The first ``words`` words (or, for CJK text, characters) of text, plus "..."."""
    if " " in text:
        return " ".join(text.split()[:words]) + " ..."
    return text[:words] + "..."


def chunks(items: list, size: int) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def group_by(posts: Iterable[Post], key: Callable[[Post], Iterable[str]]) -> dict[str, list[Post]]:
    """Posts grouped by every value ``key`` gives, groups in first-seen order."""
    groups: dict[str, list[Post]] = {}
    for post in posts:
        for value in key(post):
            groups.setdefault(value, []).append(post)
    return groups


def png_image(width: int = 2, height: int = 2) -> bytes:
    """A real (tiny, grey) PNG file."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def pdf_file(text: str) -> bytes:
    """A small but valid one-page PDF showing ``text``."""
    stream = f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>"),
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


CURRENT = ' class="current"'
CSS = text_page("body{font-family:sans-serif;max-width:60rem;margin:auto}\n", "text/css")


# ============================================================================================
# a. Typecho: English tech blog
# ============================================================================================

TYPECHO_POSTS: list[dict[str, Any]] = [
    {"num": 370, "when": "2023-09-14 20:10 +02:00", "title": "Reading strace Output Without Losing Your Mind",
     "tags": ["Linux", "Debugging"], "categories": ["Tutorials"],
     "intro": "The first time I ran strace on a misbehaving daemon, the terminal filled with thousands of lines in a few seconds and I closed it in a panic. [[Since then I have learned to read strace output the way you read a bank statement, looking only for the lines that surprise you.]] Most system calls are boring, and that is exactly what makes the interesting ones stand out.",
     "detail": "The trick that changed everything for me was filtering. Running strace with -e trace=file shows only the calls that touch paths, and -f follows child processes, which matters for anything that forks. Adding -tt prints timestamps with microseconds, so a long gap between two lines points straight at the call that blocked.",
     "code": "strace -f -tt -e trace=file,network -p 4242 2>&1 | less"},
    {"num": 371, "when": "2023-10-29 09:45 +01:00", "title": "The Case for Boring Cron Jobs",
     "tags": ["Linux", "Automation"], "categories": ["Ops"],
     "intro": "Every few months someone suggests replacing our cron jobs with a workflow engine, a message queue and a dashboard. [[A cron job that runs a shell script at four in the morning is not glamorous, but I can explain it to a new colleague in one minute.]] That explanation matters more to me than any feature list.",
     "detail": "The jobs that caused trouble were never the simple ones. They were the jobs that ran for longer than their interval and overlapped with themselves, or the ones that failed silently because nobody read the mail cron sent. Wrapping every job in flock and sending failures to the same alert channel as everything else fixed both problems.",
     "code": "*/15 * * * * flock -n /run/lock/sync.lock /usr/local/bin/sync-exports.sh"},
    {"num": 372, "when": "2023-12-03 18:30 +01:00", "title": "Profiling Python with py-spy in Production",
     "tags": ["Python", "Performance"], "categories": ["Tutorials"],
     "intro": "Our API had a slow endpoint that was only slow in production, never on a laptop. [[py-spy let me look inside the running process without restarting it, which was the only way I was ever going to catch the problem in the act.]] It attaches to a live interpreter, samples the stack a hundred times a second and never touches the code.",
     "detail": "The flame graph made the culprit obvious within a minute: a JSON serializer was being called on a large object twice per request, once for logging and once for the response. Removing the logging call cut the median latency by a third. I still run py-spy top on that service whenever a graph looks odd.",
     "code": "py-spy record --pid 31337 --duration 60 --output profile.svg"},
    {"num": 373, "when": "2024-01-21 11:05 +01:00", "title": "What I Learned Moving a Side Project to SQLite",
     "tags": ["SQLite", "Python", "Databases"], "categories": ["Notes"],
     "intro": "My little bookmarking app ran on PostgreSQL for four years, on a server that cost more than the domain and the coffee combined. [[Moving it to a single SQLite file took one weekend and removed an entire server from my life.]] The app has a handful of users and writes a few rows a minute, which is nothing for SQLite.",
     "detail": "Two settings did most of the work. Write-ahead logging lets readers continue while a write is in progress, and a busy timeout of a few seconds makes the rare lock contention invisible to users. Backups are now a single command that copies a consistent snapshot, and I test restoring it every month.",
     "code": "PRAGMA journal_mode = WAL;\nPRAGMA busy_timeout = 5000;"},
    {"num": 374, "when": "2024-02-18 22:50 +01:00", "title": "Understanding TCP Keepalive on Linux",
     "tags": ["Networking", "Linux"], "categories": ["Tutorials"],
     "intro": "A database connection that sits idle behind a firewall for an hour will often be dropped without either end noticing. [[TCP keepalive exists precisely for this, but the Linux defaults wait two hours before sending the first probe, which is far too long for most networks.]] By then the firewall has forgotten the connection and the next query simply hangs.",
     "detail": "There are three knobs: how long to wait before the first probe, the interval between probes, and how many unanswered probes mean the peer is gone. They can be set system-wide with sysctl or per socket with setsockopt, and the per-socket route is better because it only affects the services that need it.",
     "code": "sysctl net.ipv4.tcp_keepalive_time=300 net.ipv4.tcp_keepalive_intvl=30 net.ipv4.tcp_keepalive_probes=5"},
    {"num": 375, "when": "2024-03-31 10:15 +02:00", "title": "A Home Lab on One Old ThinkPad",
     "tags": ["Home Lab", "Linux"], "categories": ["Notes"],
     "intro": "When my company replaced its laptops, I took home a ThinkPad with a cracked palm rest and a perfectly good processor. [[That laptop now runs my entire home lab, from the DNS resolver to the photo backup, and it draws less power than the router.]] The built-in battery even works as a small uninterruptible power supply.",
     "detail": "Everything runs in a handful of containers managed by a single compose file. The lid stays closed, the screen is off, and logind is told to ignore the lid switch so that closing it does not suspend the machine. Remote access goes through WireGuard, and nothing is exposed to the internet directly."},
    {"num": 376, "when": "2024-04-14 16:40 +02:00", "title": "Writing Shell Scripts That Fail Loudly",
     "tags": ["Shell", "Debugging", "Bash"], "categories": ["Tutorials"],
     "intro": "The most dangerous shell script is the one that keeps going after a command fails. [[Every script I write now starts with set -euo pipefail, and that single line has prevented more damage than any code review.]] It turns silent failures into loud ones, which is what you want at three in the morning.",
     "detail": "It is not magic, though. A command inside an if condition is allowed to fail, and so is anything followed by a double pipe and true, so it is still possible to hide errors on purpose. I also add a trap on ERR that prints the line number, because knowing where a script died saves a lot of guesswork.",
     "code": "#!/usr/bin/env bash\nset -euo pipefail\ntrap 'echo \"failed at line $LINENO\" >&2' ERR"},
    {"num": 377, "when": "2024-05-05 08:20 +02:00", "title": "Log Rotation Is Not Optional",
     "tags": ["Linux", "Logging"], "categories": ["Ops"],
     "intro": "A full disk took down our staging server on a Sunday, and the cause was a single log file that had grown to forty gigabytes. [[Log rotation is one of those chores that nobody thinks about until the disk is full and the pager is ringing.]] The application had been writing debug output for months and nobody had noticed.",
     "detail": "Logrotate has handled this for decades, but the details matter. Using copytruncate avoids having to signal the application, at the cost of possibly losing a few lines during the copy. Compressing rotated files and keeping a fixed number of them puts a hard ceiling on the space the logs can ever use.",
     "code": "/var/log/myapp/*.log {\n    daily\n    rotate 14\n    compress\n    copytruncate\n}"},
    {"num": 378, "when": "2024-05-26 23:55 +02:00", "title": "Why My Docker Builds Got Ten Times Faster",
     "tags": ["Docker", "Performance", "CI"], "categories": ["Notes"],
     "intro": "Our CI pipeline spent eleven minutes building an image whose application code changed in one file. [[Reordering four lines in the Dockerfile brought the build down to just over a minute, because the dependency layer could finally be cached.]] The trick is embarrassingly simple once you see it.",
     "detail": "Docker caches each layer until one of its inputs changes, and copying the whole source tree before installing dependencies meant every code change invalidated the expensive install step. Copying only the lock file first, installing, and then copying the rest of the code keeps that layer stable between commits.",
     "code": "COPY requirements.lock .\nRUN pip install -r requirements.lock\nCOPY . ."},
    {"num": 379, "when": "2024-06-16 01:30 +02:00", "title": "Rate Limiting with a Token Bucket in Python",
     "tags": ["Python", "Networking"], "categories": ["Tutorials"],
     "intro": "A partner API allowed ten requests per second and banned clients that went over, so our importer needed to be polite. [[A token bucket is the simplest rate limiter that still allows short bursts, and it fits in about twenty lines of Python.]] Tokens are added at a fixed rate, and each request spends one.",
     "detail": "The only subtle part is refilling lazily: instead of a background thread adding tokens, each call works out how many tokens accumulated since the last one, based on the monotonic clock. That keeps the limiter free of threads and timers, and it behaves correctly even after the process has been idle for hours.",
     "code": "def take(self):\n    now = time.monotonic()\n    self.tokens = min(self.capacity, self.tokens + (now - self.last) * self.rate)\n    self.last = now"},
    {"num": 380, "when": "2024-07-07 14:00 +02:00", "title": "Backups You Have Actually Restored",
     "tags": ["Home Lab", "Automation", "Backups"], "categories": ["Ops"],
     "intro": "For two years I had nightly backups of my home server and felt very responsible about it. [[Then a disk died, and I discovered that my backups had been missing the database directory the whole time, because of one wrong exclude pattern.]] A backup that has never been restored is only a hopeful copy.",
     "detail": "Now a monthly job restores the latest backup into a scratch directory, starts the services against it and runs a handful of checks. It takes twenty minutes of machine time and none of mine. The first run of that job failed, which proved the point better than anything I could have written."},
    {"num": 381, "when": "2024-08-04 19:25 +02:00", "title": "Notes on Reading Other People's Code",
     "tags": ["Debugging", "Career"], "categories": ["Notes"],
     "intro": "Joining a team means inheriting a codebase that many people shaped over many years, and reading it is a skill of its own. [[I start with the tests rather than the code, because tests show what the authors thought was important enough to protect.]] After that I follow a single request from the entry point to the database and back.",
     "detail": "Taking notes while reading helps more than I expected. A plain file with questions, guesses and the answers I found later becomes a map of the system, and it is often worth sharing with the next person who joins. Most of all, I try to assume that odd code had a reason, until the history proves otherwise."},
]


def typecho_blog() -> Blog:
    """Typecho 1.2 default theme, English: "Lowlevel Notes" by Owen Mercer (Berlin, CET/CEST).

    * posts ``/p/370`` .. ``/p/381``: no trailing slash (``/p/370/`` is a 404), no og:type,
      no JSON-LD, no canonical; the date only as ``<time datetime="...+02:00">`` inside the
      ``<article>``; ``<title>TITLE - Lowlevel Notes</title>``, a plain ``<h1>``; no <html lang>.
    * ``/``, ``/page/2/``, ``/page/3/``: 5 posts each as ``<article class="post">`` with a
      <time> and a "Read More" link (so listings also hold dated articles).
    * ``/feed/``: RSS 2.0 of the 10 newest only (not 370, 371), teaser descriptions ending
      "...", RFC 822 pubDate in +0100/+0200, guid = the post URL; its <category> is the
      Typecho *category*, not the tags (the tags are only the page's rel="tag" links).
    * tags ``/t/NAME`` (no slash), categories ``/category/SLUG/``, months ``/2024/07/``,
      author ``/author/1/``, about ``/about.html``, login ``/admin/login.php``.
    * comment reply links ``/p/N?replyTo=ID#respond-post-N`` (rel="nofollow") serve the post
      again, without a canonical link: listed in ``aliases``.
    * <head> links to ``/action/xmlrpc`` (pingback), ``?rsd`` (RSD XML) and ``?wlw`` (manifest).
    """
    host, site, author = "typecho.test", "Lowlevel Notes", "Owen Mercer"
    base = f"http://{host}"
    specs = [dict(s, path=f"/p/{s['num']}", author=author) for s in TYPECHO_POSTS]
    posts = make_posts(
        specs, seed="typecho", pool=EN_TECH_POOL, comments=EN_TECH_COMMENTS,
        shorts=EN_SHORT_COMMENTS, names=EN_NAMES, first_comment_id=41,
        headings=["What I learned", "In practice", "Looking back", "What I would do differently"],
    )
    tags = group_by(sorted(posts, key=lambda p: p.when), lambda p: p.tags)
    cats = group_by(sorted(posts, key=lambda p: p.when), lambda p: p.categories)
    months = group_by(posts, lambda p: [f"{p.when:%Y/%m}"])

    def link(path: str) -> str:
        return base + path

    def sidebar() -> str:
        recent = "".join(f'<li><a href="{link(p.path)}">{esc(p.title)}</a></li>' for p in posts[:10])
        comments = "".join(
            f'<li><a href="{link(p.path)}#comment-{c.id}">{esc(c.name)}</a>: {esc(excerpt(c.text, 5))}</li>'
            for c, p in sorted(((c, p) for p in posts for c in p.comments), key=lambda cp: cp[0].when)[-5:][::-1]
        )
        categories = "".join(
            f'<li class="category-level-0 category-parent"><a href="{link("/category/" + slugify(c) + "/")}">{esc(c)}</a></li>'
            for c in cats
        )
        archives = "".join(
            f'<li><a href="{link("/" + m + "/")}">{MONTHS[int(m[5:]) - 1]} {m[:4]}</a></li>' for m in months
        )
        return f"""
    <div class="col-mb-12 col-offset-1 col-3 kit-hidden-tb" id="secondary" role="complementary">
        <section class="widget"><h3 class="widget-title">Recent Posts</h3><ul class="widget-list">{recent}</ul></section>
        <section class="widget"><h3 class="widget-title">Recent Comments</h3><ul class="widget-list">{comments}</ul></section>
        <section class="widget"><h3 class="widget-title">Categories</h3><ul class="widget-list">{categories}</ul></section>
        <section class="widget"><h3 class="widget-title">Archives</h3><ul class="widget-list">{archives}</ul></section>
        <section class="widget"><h3 class="widget-title">Other</h3><ul class="widget-list">
            <li><a href="{link('/admin/login.php')}">Log in</a></li>
            <li><a href="{link('/feed/')}">Posts RSS</a></li>
        </ul></section>
    </div>"""

    def layout(title: str, main: str, keywords: str = "", description: str = "") -> Page:
        text = f"""<!DOCTYPE HTML>
<html class="no-js">
<head>
    <meta charset="UTF-8">
    <meta http-equiv="X-UA-Compatible" content="IE=edge">
    <meta name="renderer" content="webkit">
    <meta name="viewport" content="width=device-width, initial-scale=1, maximum-scale=1">
    <title>{esc(title)}</title>
    <link rel="stylesheet" href="{link('/usr/themes/default/style.css')}">
    <meta name="description" content="{attr(description or 'Systems, scripts and the occasional war story.')}" />
    <meta name="keywords" content="{attr(keywords or 'linux,python,ops')}" />
    <meta name="generator" content="Typecho 1.2.1" />
    <meta name="template" content="default" />
    <link rel="pingback" href="{link('/action/xmlrpc')}" />
    <link rel="EditURI" type="application/rsd+xml" title="RSD" href="{link('/action/xmlrpc?rsd')}" />
    <link rel="wlwmanifest" type="application/wlwmanifest+xml" href="{link('/action/xmlrpc?wlw')}" />
    <link rel="alternate" type="application/rss+xml" title="{site}" href="{link('/feed/')}" />
</head>
<body>
<header id="header" class="clearfix">
    <div class="container">
        <div class="row">
            <div class="site-name col-mb-12 col-9">
                <a id="logo" href="{base}/">{site}</a>
                <p class="description">Systems, scripts and the occasional war story.</p>
            </div>
            <div class="site-search col-3 kit-hidden-tb">
                <form id="search" method="post" action="{base}/" role="search">
                    <input type="text" id="s" name="s" class="text" placeholder="Search" />
                    <button type="submit" class="submit">Search</button>
                </form>
            </div>
            <div class="col-mb-12">
                <nav id="nav-menu" class="clearfix" role="navigation">
                    <a href="{base}/">Home</a>
                    <a href="{link('/about.html')}" title="About">About</a>
                </nav>
            </div>
        </div>
    </div>
</header>
<div id="body">
    <div class="container">
        <div class="row">
{main}
{sidebar()}
        </div>
    </div>
</div>
<footer id="footer" role="contentinfo">
    &copy; 2024 <a href="{base}/">{site}</a>. Powered by <a href="https://typecho.org">Typecho</a>.
</footer>
</body>
</html>
"""
        return html_page(text)

    def meta_list(p: Post, with_comments: bool) -> str:
        cat = ", ".join(f'<a href="{link("/category/" + slugify(c) + "/")}">{esc(c)}</a>' for c in p.categories)
        count = (
            f'<li itemprop="interactionCount"><a href="{link(p.path)}#comments">{plural(len(p.comments), "Comment")}</a></li>'
            if with_comments else ""
        )
        return f"""<ul class="post-meta">
                <li>Author: <a href="{link('/author/1/')}" rel="author">{esc(p.author)}</a></li>
                <li>Published: <time datetime="{iso(p.when)}">{us_date(p.when)}</time></li>
                <li>Category: {cat}</li>
                {count}
            </ul>"""

    def summary(p: Post) -> str:
        return f"""        <article class="post">
            <h2 class="post-title"><a href="{link(p.path)}">{esc(p.title)}</a></h2>
            {meta_list(p, True)}
            <div class="post-content">
                <p>{esc(p.intro)}</p>
                <p class="more"><a href="{link(p.path)}" title="{attr(p.title)}">Read More</a></p>
            </div>
        </article>"""

    def listing(title: str, items: list[Post], heading: str = "", nav: str = "") -> Page:
        head = f'<h3 class="archive-title">{esc(heading)}</h3>' if heading else ""
        main = "\n".join(summary(p) for p in items)
        return layout(title, f'<div class="col-mb-12 col-8" id="main" role="main">\n{head}\n{main}\n{nav}\n</div>')

    def comments_html(p: Post) -> str:
        items = []
        for n, c in enumerate(p.comments):
            parity = "odd" if n % 2 == 0 else "even"
            items.append(f"""<li id="li-comment-{c.id}" class="comment-body comment-parent comment-{parity}">
    <div id="comment-{c.id}">
        <div class="comment-author">
            <img class="avatar" src="https://gravatar.loli.net/avatar/{c.id:032x}?s=32&amp;r=G&amp;d=" alt="{attr(c.name)}" width="32" height="32" />
            <cite class="fn">{esc(c.name)}</cite>
        </div>
        <div class="comment-meta">
            <a href="{link(p.path)}#comment-{c.id}"><time datetime="{iso(c.when)}">{us_date(c.when)} at {c.when:%H:%M}</time></a>
        </div>
        <div class="comment-content"><p>{esc(c.text)}</p></div>
        <div class="comment-reply">
            <a href="{link(p.path)}?replyTo={c.id}#respond-post-{p.num}" rel="nofollow" onclick="return TypechoComment.reply('comment-{c.id}', {c.id});">Reply</a>
        </div>
    </div>
</li>""")
        return f"""<div id="comments">
    <h3>{plural(len(p.comments), "Comment")}</h3>
    <ol class="comment-list">
{chr(10).join(items)}
    </ol>
    <div id="respond-post-{p.num}" class="respond">
        <h3 id="response">Add a new comment</h3>
        <form method="post" action="{link(p.path)}/comment" id="comment-form" role="form">
            <p><label for="author" class="required">Name</label><input type="text" name="author" id="author" class="text" value="" required /></p>
            <p><label for="mail" class="required">Email</label><input type="email" name="mail" id="mail" class="text" value="" required /></p>
            <p><label for="textarea" class="required">Content</label><textarea rows="8" cols="50" name="text" id="textarea" class="textarea" required></textarea></p>
            <p><button type="submit" class="submit">Submit comment</button></p>
        </form>
    </div>
</div>"""

    def post_page(p: Post) -> Page:
        i = posts.index(p)
        older = posts[i + 1] if i + 1 < len(posts) else None
        newer = posts[i - 1] if i > 0 else None
        prev_link = f'<a href="{link(older.path)}" title="{attr(older.title)}">{esc(older.title)}</a>' if older else "No previous post"
        next_link = f'<a href="{link(newer.path)}" title="{attr(newer.title)}">{esc(newer.title)}</a>' if newer else "No next post"
        tag_links = ", ".join(f'<a href="{link("/t/" + slugify(t))}" rel="tag">{esc(t)}</a>' for t in p.tags)
        main = f"""<div class="col-mb-12 col-8" id="main" role="main">
    <article class="post">
        <h1 class="post-title">{esc(p.title)}</h1>
        {meta_list(p, False)}
        <div class="post-content">
{body_html(p)}
        </div>
        <p class="tags">Tags: {tag_links}</p>
    </article>
{comments_html(p)}
    <ul class="post-near">
        <li>Previous: {prev_link}</li>
        <li>Next: {next_link}</li>
    </ul>
</div>"""
        return layout(f"{p.title} - {site}", main, ",".join(t.lower() for t in p.tags), excerpt(p.intro, 20))

    def xmlrpc(path: str, query: str) -> Page:
        if query == "rsd":
            return xml_page(f"""<?xml version="1.0" encoding="UTF-8"?>
<rsd version="1.0" xmlns="http://archipelago.phrasewise.com/rsd"><service><engineName>Typecho</engineName>
<engineLink>https://typecho.org/</engineLink><homePageLink>{base}/</homePageLink><apis>
<api name="WordPress" blogID="1" preferred="true" apiLink="{link('/action/xmlrpc')}" /></apis></service></rsd>
""", "application/rsd+xml; charset=UTF-8")
        if query == "wlw":
            return xml_page("""<?xml version="1.0" encoding="UTF-8"?>
<manifest xmlns="http://schemas.microsoft.com/wlw/manifest/weblog"><options><supportsKeywords>Yes</supportsKeywords></options></manifest>
""", "application/xml; charset=UTF-8")
        return text_page("XML-RPC server accepts POST requests only.")

    routes: dict = {"/usr/themes/default/style.css": CSS, "/action/xmlrpc": xmlrpc}
    pages = chunks(posts, 5)
    for n, items in enumerate(pages, 1):
        nums = "".join(
            f'<li{CURRENT if k == n else ""}><a href="{link("/" if k == 1 else f"/page/{k}/")}">{k}</a></li>'
            for k in range(1, len(pages) + 1)
        )
        prev_li = f'<li class="prev"><a href="{link("/" if n == 2 else f"/page/{n - 1}/")}">&laquo; Previous</a></li>' if n > 1 else ""
        next_li = f'<li class="next"><a href="{link(f"/page/{n + 1}/")}">Next &raquo;</a></li>' if n < len(pages) else ""
        nav = f'<ol class="page-navigator">{prev_li}{nums}{next_li}</ol>'
        title = site if n == 1 else f"Page {n} - {site}"
        routes["/" if n == 1 else f"/page/{n}/"] = listing(title, items, nav=nav)
    for p in posts:
        routes[p.path] = post_page(p)
    for tag, items in tags.items():
        routes[f"/t/{slugify(tag)}"] = listing(f"Posts tagged {tag} - {site}", items[::-1], f"Posts tagged {tag}")
    for cat, items in cats.items():
        routes[f"/category/{slugify(cat)}/"] = listing(f"{cat} - {site}", items[::-1], f"Posts in {cat}")
    for month, items in months.items():
        y, m = month.split("/")
        label = f"{MONTHS[int(m) - 1]} {y}"
        routes[f"/{month}/"] = listing(f"{label} - {site}", items, f"Posts from {label}")
    routes["/author/1/"] = listing(f"{author} - {site}", posts[:5], f"Posts by {author}")
    routes["/about.html"] = layout(f"About - {site}", f"""<div class="col-mb-12 col-8" id="main" role="main">
    <article class="post">
        <h1 class="post-title">About</h1>
        <div class="post-content">
            <p>I am {author}, a systems engineer in Berlin. I write here about Linux, Python and the small operational habits that keep services alive.</p>
            <p>This blog runs on Typecho on a small virtual server. Nothing here reflects the views of my employer.</p>
        </div>
    </article>
</div>""")
    routes["/admin/login.php"] = html_page(f"""<!DOCTYPE html>
<html><head><meta charset="UTF-8"><title>Log in - {site}</title><meta name="robots" content="noindex, nofollow"></head>
<body class="body-100"><div class="typecho-login-wrap"><div class="typecho-login">
<h1><a href="https://typecho.org" class="i-logo">Typecho</a></h1>
<form action="{link('/index.php/action/login')}" method="post" name="login" role="form">
<p><label for="name" class="sr-only">Username</label><input type="text" id="name" name="name" placeholder="Username" class="text-l w-100" autofocus /></p>
<p><label for="password" class="sr-only">Password</label><input type="password" id="password" name="password" class="text-l w-100" placeholder="Password" /></p>
<p class="submit"><button type="submit" class="btn btn-l w-100 primary">Log in</button></p>
</form>
<p class="more-link"><a href="{base}/">Back to {site}</a></p>
</div></div></body></html>
""")
    feed_items = "\n".join(
        f"""<item>
<title>{esc(p.title)}</title>
<link>{link(p.path)}</link>
<guid>{link(p.path)}</guid>
<pubDate>{rfc822(p.when)}</pubDate>
<dc:creator>{esc(p.author)}</dc:creator>
<description>{cdata(excerpt(p.intro, 30))}</description>
<slash:comments>{len(p.comments)}</slash:comments>
<comments>{link(p.path)}#comments</comments>
<wfw:commentRss>{link('/feed/' + p.path.lstrip('/'))}</wfw:commentRss>
{"".join(f"<category>{esc(c)}</category>" for c in p.categories)}
</item>"""
        for p in posts[:10]
    )
    routes["/feed/"] = xml_page(f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"
xmlns:content="http://purl.org/rss/1.0/modules/content/"
xmlns:dc="http://purl.org/dc/elements/1.1/"
xmlns:slash="http://purl.org/rss/1.0/modules/slash/"
xmlns:atom="http://www.w3.org/2005/Atom"
xmlns:wfw="http://wellformedweb.org/CommentAPI/">
<channel>
<title>{site}</title>
<link>{base}/</link>
<atom:link href="{link('/feed/')}" rel="self" type="application/rss+xml" />
<language>en</language>
<description>Systems, scripts and the occasional war story.</description>
<lastBuildDate>{rfc822(posts[0].when)}</lastBuildDate>
<pubDate>{rfc822(posts[0].when)}</pubDate>
{feed_items}
</channel>
</rss>
""", "application/rss+xml; charset=UTF-8")

    aliases = {f"{p.path}?replyTo={c.id}": p.path for p in posts for c in p.comments}
    return Blog(
        name="typecho",
        host=host,
        home=f"{base}/",
        routes=routes,
        posts=[truth(p, host, "en") for p in posts],
        non_posts=[
            "/", "/page/2/", "/page/3/", "/about.html", "/author/1/", "/admin/login.php",
            *[f"/t/{slugify(t)}" for t in tags],
            *[f"/category/{slugify(c)}/" for c in cats],
            *[f"/{m}/" for m in months],
        ],
        never_fetched=[],
        aliases=aliases,
        lang="en",
        zone="+02:00",
        feeds=[f"{base}/feed/"],
        quirks=[
            "post URLs /p/N have no trailing slash; /p/N/ is a 404",
            "the feed holds the 10 newest posts only: /p/370 and /p/371 are found via /page/3/",
            "post pages: no og:type, no JSON-LD, no canonical; <time datetime> inside <article>",
            "listing pages hold several dated <article class=post> elements",
            "feed <category> is the Typecho category, the tags are the page's rel=tag links",
            "feed descriptions are teasers ending in '...'; the full text is only on the page",
            "no <html lang>; the text is English",
            "comment reply links ?replyTo=ID (rel=nofollow) duplicate the post, no canonical",
            "robots.txt is a 404",
            "/p/379 is 2024-06-16 01:30 +02:00, i.e. 2024-06-15 in UTC",
        ],
    )


# ============================================================================================
# b. Writing site: essays, WordPress-like theme, complete RSS feed
# ============================================================================================

MIRIAM, JONAS = "Miriam Okafor", "Jonas Lindqvist"
ESSAYS: list[dict[str, Any]] = [
    {"num": 31, "slug": "on-walking-without-a-destination", "when": "2023-03-05 08:40 -08:00",
     "title": "On Walking Without a Destination", "author": MIRIAM,
     "categories": ["Essays"], "tags": ["walking", "attention"],
     "intro": "For most of my adult life, every walk I took had a purpose: the shop, the station, the dentist, a number of steps. [[The first time I left the house with no destination at all, I felt almost guilty, as if I were wasting something that belonged to someone else.]] That feeling lasted about three streets.",
     "detail": "Without a destination, the route becomes a series of small decisions made by the feet rather than the head. Left because the light is better, right because a dog looked friendly, straight on because there is a bakery. I came home two hours later with nothing to show for it and a mind that felt rinsed."},
    {"num": 38, "slug": "the-library-at-closing-time", "when": "2023-05-21 19:15 +01:00",
     "updated": "2023-06-02 09:30 +01:00",
     "title": "The Library at Closing Time", "author": MIRIAM,
     "categories": ["Essays"], "tags": ["libraries", "quiet"],
     "intro": "The public library near my flat closes at seven, and I have taken to arriving at half past six. [[In that last half hour the building changes character, as if it were exhaling after a long day of holding its breath.]] The students pack up, the radiators tick and a librarian starts turning off lamps one by one.",
     "detail": "I rarely borrow anything in that half hour. I read a chapter, look at the shelves, and watch the regulars perform their small rituals of leaving. There is a man who always returns his newspaper to the exact rack it came from, and a girl who says goodnight to the librarian by name."},
    {"num": 44, "slug": "letters-i-never-sent", "when": "2023-07-09 22:30 +05:30",
     "title": "Letters I Never Sent", "author": MIRIAM,
     "categories": ["Essays", "Memoir"], "tags": ["letters", "handwriting"],
     "intro": "In a shoebox at the back of my wardrobe there are twenty-three letters, addressed and stamped, that never reached a post box. [[Each of them was written to say something I could not say out loud, and each of them did its work without ever being read.]] Some are angry, most are grateful, one is simply about a cat.",
     "detail": "Writing by hand slows the thought down to the speed of the pen, and at that speed it is hard to lie. I found that the letters I never sent were more honest than the ones I did, because no one was going to answer them. Reading them now feels like meeting a younger, braver relative."},
    {"num": 52, "slug": "night-trains", "when": "2023-09-17 06:05 +02:00",
     "title": "Notes from Night Trains", "author": MIRIAM,
     "categories": ["Travel"], "tags": ["trains", "sleep"],
     "intro": "I took my first night train at nineteen, from a city I cannot now remember to one I have never forgotten. [[There is something about falling asleep in one country and waking up in another that makes the whole continent feel like a single long corridor.]] The couchette rattled, the blanket smelled of diesel, and I was perfectly happy.",
     "detail": "Night trains are slow on purpose, and that is their gift. The timetable gives you eight or ten hours with nothing to do but watch lights pass, talk to strangers and sleep badly. I have had more honest conversations in those narrow compartments than in years of office kitchens."},
    {"num": 57, "slug": "what-the-notebook-knows", "when": "2023-11-26 17:00 -05:00",
     "updated": "2024-02-01 10:00 -05:00",
     "title": "What the Notebook Knows", "author": MIRIAM,
     "categories": ["Craft"], "tags": ["notebooks", "habit", "memory"],
     "intro": "I have kept a paper notebook in my coat pocket for eleven years, and it has outlasted four phones. [[The notebook knows things about me that I have forgotten: the prices of things, the names of children I met once, the first line of a poem I never finished.]] It is less a diary than a pile of evidence.",
     "detail": "The rules are simple: one notebook at a time, pages numbered, nothing torn out. When a notebook is full I write its dates on the spine and put it on the shelf next to the others. Every January I read the oldest one again, and every January I am surprised by who wrote it."},
    {"num": 63, "slug": "a-year-of-reading-slowly", "when": "2024-01-14 23:50 -08:00",
     "title": "A Year of Reading Slowly", "author": MIRIAM,
     "categories": ["Reading"], "tags": ["books"],
     "intro": "Last year I set myself a reading goal for the first time: not a number of books, but a speed limit. [[I allowed myself one book at a time, no more than thirty pages a day, and no skipping the parts that bored me.]] I read fewer books than in any year since school, and I remember more of them.",
     "detail": "Slowness changed what I noticed. Minor characters became people, descriptions of weather became part of the plot, and I began to hear the rhythm of each author's sentences. By December I had read eleven books, and I could tell you something true about every one of them."},
    {"num": 70, "slug": "the-weight-of-small-rooms", "when": "2024-04-02 11:20 +09:00",
     "title": "The Weight of Small Rooms", "author": JONAS,
     "categories": ["Essays"], "tags": ["cities", "home"],
     "intro": "I have lived in small rooms for most of my life: a student dormitory in Uppsala, a shared flat in Berlin and now a single room in Tokyo. [[A small room has a weight that a large one lacks, because everything in it is within reach and nothing can be ignored for long.]] You learn quickly which objects deserve their place.",
     "detail": "In my Tokyo room the futon folds away every morning, and the floor becomes a desk, a dining table and a place to stretch. Owning fewer things made each one more visible, and I started to notice the small ceremonies of putting things away. Friends who visit always lower their voices, as if the room were listening."},
    {"num": 76, "slug": "learning-to-draft-badly", "when": "2024-06-23 09:00 +00:00",
     "title": "Learning to Draft Badly", "author": MIRIAM,
     "categories": ["Craft"], "tags": ["drafts", "writing"],
     "intro": "For years I could not finish anything, because every sentence had to be right before I allowed myself to write the next one. [[The cure, when it came, was a rule borrowed from a potter: make the first draft quickly and badly, and keep the clay wet.]] Perfection belongs to the last draft, not the first.",
     "detail": "Now my first drafts are full of brackets, placeholders and notes to myself such as better word here. They are embarrassing, and they are finished by lunchtime. The real work happens over the next days, when there is finally something on the page to argue with."},
]


def writing_site() -> Blog:
    """"Slow Margins", essays by Miriam Okafor (and one guest), in a WordPress-like theme.

    * posts ``/essays/<slug>.html`` with og:type=article, article:published_time (offsets from
      -08:00 to +09:00), article:section, article:tag, meta author, canonical; two essays
      carry article:modified_time and a visible "Updated" date.
    * ``/rss.xml``: RSS 2.0 with all 8 essays, RFC 822 pubDate in each essay's own offset,
      2-4 <category> each (categories first, then tags, as WordPress does), dc:creator,
      full text in content:encoded, guid ``tag:essays.test,...`` (not the URL).
    * categories (rel="category tag", ``/category/<slug>.html``) are distinct from tags
      (rel="tag", ``/tag/<slug>.html``); "Letters I Never Sent" has two categories.
    * links are relative (``../tag/walking.html``, ``essays/x.html``); the home page is both
      ``/`` and ``/index.html``; ``<title>`` uses ``&#8211;`` before the site name.
    * comments are WordPress threads: each comment is an ``<article class="comment-body">``
      with its own <time>; reply links ``?replytocom=ID#respond`` (in ``aliases``).
    * ``/about.html`` and ``/contact.html`` (og:type website), ``/archives.html``, author pages.
    """
    host, site = "essays.test", "Slow Margins"
    base = f"http://{host}"
    specs = [dict(s, path=f"/essays/{s['slug']}.html") for s in ESSAYS]
    posts = make_posts(
        specs, seed="essays", pool=ESSAY_POOL, comments=EN_ESSAY_COMMENTS,
        shorts=["Lovely.", "Thank you for this.", "This stayed with me all day."],
        names=EN_NAMES, first_comment_id=112, headings=["*"],
    )
    oldest_first = sorted(posts, key=lambda p: p.when)
    cats = group_by(oldest_first, lambda p: p.categories)
    tags = group_by(oldest_first, lambda p: p.tags)
    authors = group_by(oldest_first, lambda p: [p.author])

    def essay_body(p: Post) -> str:
        intro, detail, *rest = p.paras
        paras = [f"<p>{esc(intro)}</p>", f"<p>{esc(detail)}</p>", '<p class="section-break">* * *</p>']
        return "\n".join(paras + [f"<p>{esc(x)}</p>" for x in rest])

    def layout(title: str, main: str, up: str, head: str = "", og: str = "website", body_class: str = "home") -> Page:
        """``up`` is the relative prefix to the site root ("" at the root, "../" one folder down)."""
        text = f"""<!DOCTYPE html>
<html lang="en-GB">
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="alternate" type="application/rss+xml" title="{site} &raquo; Feed" href="{base}/rss.xml">
<meta property="og:locale" content="en_GB">
<meta property="og:site_name" content="{site}">
<meta property="og:type" content="{og}">
{head}
<link rel="stylesheet" href="{up}theme/style.css">
</head>
<body class="{body_class}">
<div id="page" class="site">
<a class="skip-link screen-reader-text" href="#content">Skip to content</a>
<header id="masthead" class="site-header">
  <p class="site-title"><a href="{up}index.html" rel="home">{site}</a></p>
  <p class="site-description">Essays on attention, reading and walking</p>
  <nav id="site-navigation" class="main-navigation">
    <ul id="primary-menu" class="menu">
      <li class="menu-item"><a href="{up}index.html">Essays</a></li>
      <li class="menu-item"><a href="{up}archives.html">Archive</a></li>
      <li class="menu-item"><a href="{up}about.html">About</a></li>
      <li class="menu-item"><a href="{up}contact.html">Contact</a></li>
    </ul>
  </nav>
</header>
<div id="content" class="site-content">
<main id="main" class="site-main">
{main}
</main>
</div>
<footer id="colophon" class="site-footer">
  <div class="site-info">&copy; 2023&ndash;2024 {site} &middot; <a href="{base}/rss.xml">Subscribe by RSS</a></div>
</footer>
</div>
</body>
</html>
"""
        return html_page(text)

    def posted_on(p: Post, up: str) -> str:
        times = f'<time class="entry-date published" datetime="{iso(p.when)}">{uk_date(p.when)}</time>'
        if p.updated:
            times += f' <span class="updated-on">(Updated <time class="updated" datetime="{iso(p.updated)}">{uk_date(p.updated)}</time>)</span>'
        else:
            times += f'<time class="updated" datetime="{iso(p.when)}" hidden>{uk_date(p.when)}</time>'
        return f'<span class="posted-on">Posted on <a href="{up}essays/{p.slug}.html" rel="bookmark">{times}</a></span>'

    def byline(p: Post, up: str) -> str:
        return (f'<span class="byline"> by <span class="author vcard"><a class="url fn n" '
                f'href="{up}author/{slugify(p.author)}.html">{esc(p.author)}</a></span></span>')

    def comments_html(p: Post) -> str:
        items = "\n".join(f"""  <li id="comment-{c.id}" class="comment {'even' if n % 2 == 0 else 'odd'} thread-{'even' if n % 2 == 0 else 'odd'} depth-1">
    <article id="div-comment-{c.id}" class="comment-body">
      <footer class="comment-meta">
        <div class="comment-author vcard"><b class="fn">{esc(c.name)}</b> <span class="says">says:</span></div>
        <div class="comment-metadata"><a href="{p.slug}.html#comment-{c.id}"><time datetime="{iso(c.when)}">{uk_date(c.when)} at {c.when:%H:%M}</time></a></div>
      </footer>
      <div class="comment-content"><p>{esc(c.text)}</p></div>
      <div class="reply"><a rel="nofollow" class="comment-reply-link" href="{p.slug}.html?replytocom={c.id}#respond" data-commentid="{c.id}" data-postid="{p.num}" aria-label="Reply to {attr(c.name)}">Reply</a></div>
    </article>
  </li>""" for n, c in enumerate(p.comments))
        word = "thought" if len(p.comments) == 1 else "thoughts"
        return f"""<div id="comments" class="comments-area">
<h2 class="comments-title">{len(p.comments)} {word} on &ldquo;{esc(p.title)}&rdquo;</h2>
<ol class="comment-list">
{items}
</ol>
<div id="respond" class="comment-respond">
  <h3 id="reply-title" class="comment-reply-title">Leave a Reply</h3>
  <form action="{base}/wp-comments-post.php" method="post" id="commentform" class="comment-form">
    <p class="comment-form-comment"><label for="comment">Comment</label><textarea id="comment" name="comment" cols="45" rows="8" required></textarea></p>
    <p class="comment-form-author"><label for="author">Name</label><input id="author" name="author" type="text" size="30" required></p>
    <p class="form-submit"><input name="submit" type="submit" id="submit" class="submit" value="Post Comment"><input type="hidden" name="comment_post_ID" value="{p.num}" id="comment_post_ID"></p>
  </form>
</div>
</div>"""

    def essay_page(p: Post) -> Page:
        i = posts.index(p)
        older = posts[i + 1] if i + 1 < len(posts) else None
        newer = posts[i - 1] if i > 0 else None
        nav = ""
        if older:
            nav += f'<div class="nav-previous"><a href="{older.slug}.html" rel="prev"><span class="meta-nav">Previous</span> {esc(older.title)}</a></div>'
        if newer:
            nav += f'<div class="nav-next"><a href="{newer.slug}.html" rel="next"><span class="meta-nav">Next</span> {esc(newer.title)}</a></div>'
        cat_links = ", ".join(f'<a href="../category/{slugify(c)}.html" rel="category tag">{esc(c)}</a>' for c in p.categories)
        tag_links = ", ".join(f'<a href="../tag/{slugify(t)}.html" rel="tag">{esc(t)}</a>' for t in p.tags)
        classes = " ".join([f"post-{p.num}", "post", "type-post", "status-publish", "format-standard", "hentry",
                            *[f"category-{slugify(c)}" for c in p.categories], *[f"tag-{slugify(t)}" for t in p.tags]])
        url = f"{base}{p.path}"
        head = "\n".join([
            f'<meta property="og:title" content="{attr(p.title)}">',
            f'<meta property="og:url" content="{url}">',
            f'<meta property="og:description" content="{attr(excerpt(p.intro, 25))}">',
            f'<meta property="article:published_time" content="{iso(p.when)}">',
            *([f'<meta property="article:modified_time" content="{iso(p.updated)}">'] if p.updated else []),
            f'<meta property="article:section" content="{attr(p.categories[0])}">',
            *[f'<meta property="article:tag" content="{attr(t)}">' for t in p.tags],
            f'<meta name="author" content="{attr(p.author)}">',
            f'<link rel="canonical" href="{url}">',
        ])
        main = f"""<article id="post-{p.num}" class="{classes}">
  <header class="entry-header">
    <h1 class="entry-title">{esc(p.title)}</h1>
    <div class="entry-meta">{posted_on(p, "../")}{byline(p, "../")}</div>
  </header>
  <div class="entry-content">
{essay_body(p)}
  </div>
  <footer class="entry-footer"><span class="cat-links">Posted in {cat_links}</span> <span class="tags-links">Tagged {tag_links}</span></footer>
</article>
<nav class="navigation post-navigation" aria-label="Posts"><h2 class="screen-reader-text">Post navigation</h2><div class="nav-links">{nav}</div></nav>
{comments_html(p)}"""
        return layout(f"{esc(p.title)} &#8211; {site}", main, "../", head, og="article",
                      body_class=f"post-template-default single single-post postid-{p.num}")

    def essay_list(items: list[Post], up: str, heading: str, description: str = "") -> str:
        lis = "\n".join(f"""<li class="essay-item">
  <h2 class="entry-title"><a href="{up}essays/{p.slug}.html">{esc(p.title)}</a></h2>
  <p class="essay-meta"><time datetime="{iso(p.when)}">{uk_date(p.when)}</time> &middot; {esc(p.author)} &middot; {esc(", ".join(p.categories))}</p>
  <p class="dek">{esc(p.paras[0].split(". ")[0])}.</p>
  <a class="more-link" href="{up}essays/{p.slug}.html">Continue reading<span class="screen-reader-text"> "{esc(p.title)}"</span></a>
</li>""" for p in items)
        desc = f'<div class="archive-description"><p>{esc(description)}</p></div>' if description else ""
        return f'<header class="page-header"><h1 class="page-title">{esc(heading)}</h1>{desc}</header>\n<ul class="essay-list">\n{lis}\n</ul>'

    def simple_page(title: str, body: str) -> Page:
        main = f"""<article class="page type-page status-publish hentry">
  <header class="entry-header"><h1 class="entry-title">{esc(title)}</h1></header>
  <div class="entry-content">
{body}
  </div>
</article>"""
        return layout(f"{esc(title)} &#8211; {site}", main, "", f'<link rel="canonical" href="{base}/{slugify(title)}.html">',
                      body_class="page-template-default page")

    routes: dict = {"/theme/style.css": CSS}
    home = layout(site, essay_list(posts, "", "Essays", "Essays on attention, reading and walking, published when they are ready."), "",
                  f'<link rel="canonical" href="{base}/">')
    routes["/"] = home
    routes["/index.html"] = home
    for p in posts:
        routes[p.path] = essay_page(p)
    for cat, items in cats.items():
        routes[f"/category/{slugify(cat)}.html"] = layout(
            f"{esc(cat)} &#8211; {site}", essay_list(items[::-1], "../", f"Category: {cat}"), "../", body_class="archive category")
    for tag, items in tags.items():
        routes[f"/tag/{slugify(tag)}.html"] = layout(
            f"{esc(tag)} &#8211; {site}", essay_list(items[::-1], "../", f"Tag: {tag}"), "../", body_class="archive tag")
    for name, items in authors.items():
        routes[f"/author/{slugify(name)}.html"] = layout(
            f"{esc(name)} &#8211; {site}", essay_list(items[::-1], "../", f"Author: {name}"), "../", body_class="archive author")
    years = group_by(posts, lambda p: [str(p.when.year)])
    archive = "\n".join(
        f'<h2>{y}</h2><ul>' + "".join(f'<li><a href="essays/{p.slug}.html">{esc(p.title)}</a> &mdash; {uk_date(p.when)}</li>' for p in items) + "</ul>"
        for y, items in years.items()
    )
    routes["/archives.html"] = layout(f"Archive &#8211; {site}", f'<header class="page-header"><h1 class="page-title">Archive</h1></header>\n{archive}', "",
                                      body_class="archive")
    routes["/about.html"] = simple_page("About", f"""<p>{site} is where {MIRIAM} publishes essays, roughly one every two months, when they are ready and not before.</p>
<p>{MIRIAM} grew up in Leeds, has lived in four countries and now writes from wherever the trains take her. Guest essays appear now and then.</p>
<p>There are no ads, no trackers and no newsletter pop-ups. If you like what you read, the <a href="rss.xml">RSS feed</a> is the best way to follow along.</p>""")
    routes["/contact.html"] = simple_page("Contact", f"""<p>Letters are welcome. I read everything, and answer when I can.</p>
<form class="contact-form" action="{base}/contact.php" method="post">
  <p><label for="c-name">Your name</label> <input id="c-name" name="name" type="text" required></p>
  <p><label for="c-email">Your email</label> <input id="c-email" name="email" type="email" required></p>
  <p><label for="c-msg">Message</label> <textarea id="c-msg" name="message" rows="8" required></textarea></p>
  <p><button type="submit">Send</button></p>
</form>
<p>Or write to <a href="mailto:letters@essays.test">letters@essays.test</a>.</p>""")
    routes["/robots.txt"] = text_page("User-agent: *\nDisallow: /wp-admin/\nAllow: /wp-admin/admin-ajax.php\n")

    def item(p: Post) -> str:
        content = "\n".join([f"<p>{esc(x)}</p>" for x in p.paras[:2]] + ["<p>* * *</p>"] + [f"<p>{esc(x)}</p>" for x in p.paras[2:]])
        categories = "".join(f"\n\t\t<category>{cdata(c)}</category>" for c in [*p.categories, *p.tags])
        return f"""	<item>
		<title>{esc(p.title)}</title>
		<link>{base}{p.path}</link>
		<comments>{base}{p.path}#comments</comments>
		<dc:creator>{cdata(p.author)}</dc:creator>
		<pubDate>{rfc822(p.when)}</pubDate>{categories}
		<guid isPermaLink="false">tag:{host},{p.when:%Y-%m-%d}:/essays/{p.slug}</guid>
		<description>{cdata(p.paras[0].split(". ")[0] + ". [&#8230;]")}</description>
		<content:encoded>{cdata(content)}</content:encoded>
		<slash:comments>{len(p.comments)}</slash:comments>
	</item>"""

    routes["/rss.xml"] = xml_page(f"""<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"
	xmlns:content="http://purl.org/rss/1.0/modules/content/"
	xmlns:wfw="http://wellformedweb.org/CommentAPI/"
	xmlns:dc="http://purl.org/dc/elements/1.1/"
	xmlns:atom="http://www.w3.org/2005/Atom"
	xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"
	xmlns:slash="http://purl.org/rss/1.0/modules/slash/">
<channel>
	<title>{site}</title>
	<atom:link href="{base}/rss.xml" rel="self" type="application/rss+xml" />
	<link>{base}/</link>
	<description>Essays on attention, reading and walking</description>
	<lastBuildDate>{rfc822(posts[0].when)}</lastBuildDate>
	<language>en-GB</language>
	<sy:updatePeriod>hourly</sy:updatePeriod>
	<sy:updateFrequency>1</sy:updateFrequency>
{chr(10).join(item(p) for p in posts)}
</channel>
</rss>
""", "application/rss+xml; charset=UTF-8")

    return Blog(
        name="essays",
        host=host,
        home=f"{base}/",
        routes=routes,
        posts=[truth(p, host, "en") for p in posts],
        non_posts=[
            "/", "/index.html", "/about.html", "/contact.html", "/archives.html",
            *[f"/category/{slugify(c)}.html" for c in cats],
            *[f"/tag/{slugify(t)}.html" for t in tags],
            *[f"/author/{slugify(a)}.html" for a in authors],
        ],
        never_fetched=[],
        aliases={f"{p.path}?replytocom={c.id}": p.path for p in posts for c in p.comments},
        lang="en",
        zone="+00:00",
        feeds=[f"{base}/rss.xml"],
        quirks=[
            "the feed lists every post with full content (content:encoded)",
            "each essay has its own UTC offset, from -08:00 to +09:00; 2024-01-14 23:50 -08:00 is 2024-01-15 in UTC",
            "feed <category> = categories then tags; the page separates rel='category tag' from rel='tag'",
            "feed guid is a tag: URI, not the post URL",
            "links are relative (../tag/x.html); the home page is also /index.html",
            "comments are <article class=comment-body> elements with their own <time>",
            "<title> has '&#8211; Slow Margins' after the post title",
        ],
    )


# ============================================================================================
# c. Hexo / NexT: Chinese notes, raw UTF-8 URLs, dates only as 2024年7月30日
# ============================================================================================

HEXO_POSTS: list[dict[str, Any]] = [
    # the four oldest: in no feed, reachable from listing pages only
    {"slug": "Go-调度器笔记", "when": "2024-05-06 21:40 +08:00", "title": "Go 调度器 GMP 模型笔记",
     "tags": ["Go", "并发"], "categories": ["笔记"], "time_known": False,
     "intro": "最近在看 Go 运行时的源码，顺手把调度器相关的内容整理成笔记。[[Go 的调度器用 G、M、P 三个角色来描述协程、线程和处理器，理解了这三者的关系，很多并发现象就说得通了。]]这篇只写我自己真正弄明白的部分。",
     "detail": "每个 P 都有一个本地运行队列，M 必须先拿到 P 才能执行 G。本地队列空了，就会去全局队列或者别的 P 那里偷任务，这就是所谓的工作窃取。系统调用阻塞时，M 会和 P 分离，P 可以交给其他 M 继续干活，所以阻塞调用不会拖住整个程序。",
     "code": "runtime.GOMAXPROCS(4) // 设置 P 的数量"},
    {"slug": "SQLite-全文检索", "when": "2024-06-11 20:05 +08:00", "title": "用 SQLite FTS5 做中文全文检索",
     "tags": ["SQLite", "数据库"], "categories": ["笔记"], "time_known": False,
     "intro": "给自己的读书笔记加搜索功能时，我不想为此专门部署一个搜索引擎。[[SQLite 自带的 FTS5 扩展配合 trigram 分词器，不需要任何中文分词库，就能对中文做子串搜索。]]对几万条记录来说，速度完全够用。",
     "detail": "trigram 分词器把文本切成连续的三个字符，所以查询词至少要有三个字符才能走索引。两个字的词可以退回到 LIKE 查询，数据量不大时同样很快。建好触发器之后，原表的增删改会自动同步到索引表。",
     "code": "CREATE VIRTUAL TABLE notes_fts USING fts5(title, body, tokenize='trigram');"},
    {"slug": "正则表达式回溯", "when": "2024-07-02 23:30 +08:00", "title": "一次正则表达式回溯引发的 CPU 飙升",
     "tags": ["正则表达式", "性能"], "categories": ["踩坑"], "time_known": False,
     "intro": "上周一个日志解析服务的 CPU 突然长时间跑满，重启之后没多久又满了。[[最后定位到一条看起来人畜无害的正则表达式，遇到一行特别长的异常日志时发生了灾难性回溯。]]这类问题平时完全看不出来，只有碰上特定输入才会爆发。",
     "detail": "问题出在嵌套的量词上，类似 (a+)+ 这样的写法在匹配失败时会尝试指数级的组合。改成不会产生歧义的写法，再给输入长度设一个上限，问题就消失了。现在我们在代码评审时会专门看一眼新增的正则。"},
    {"slug": "内存", "when": "2024-07-30 10:20 +08:00", "title": "Node.js 内存泄漏排查小记",
     "tags": ["Node.js", "内存"], "categories": ["踩坑"], "time_known": False,
     "intro": "这个月，一个 Node.js 服务每隔几天就会因为内存超限被容器平台重启。[[对比两份相隔一小时的堆快照之后，发现是一个用作缓存的 Map 只增不减，里面塞满了早已过期的会话对象。]]监控曲线像一把缓慢上升的锯子。",
     "detail": "定位的方法并不复杂：用 --inspect 启动进程，在 Chrome 开发者工具里抓两次堆快照，按对象数量的增长排序。修复就是给缓存加上容量上限和过期时间，改完之后内存曲线终于平了下来。",
     "code": "node --inspect=127.0.0.1:9229 server.js"},
    # the five newest: in the Atom feed, with their exact time
    {"slug": "Docker-镜像瘦身", "when": "2024-08-12 07:30 +08:00", "updated": "2024-08-20 10:00 +08:00",
     "title": "Docker 镜像瘦身的几个办法", "tags": ["Docker", "运维"], "categories": ["笔记"],
     "intro": "公司的镜像仓库快满了，一查发现不少镜像动辄一两个 GB。[[用多阶段构建把编译环境和运行环境分开之后，一个 Go 服务的镜像从九百多 MB 降到了二十 MB 出头。]]省下来的不只是磁盘，还有每次发布拉镜像的时间。",
     "detail": "除了多阶段构建，合并 RUN 指令、清理包管理器缓存、写好 .dockerignore 也都有效果。基础镜像的选择影响最大，能用 distroless 或者 alpine 的地方，就没必要背着一整个操作系统。",
     "code": "FROM golang:1.22 AS build\nRUN go build -o /app\nFROM gcr.io/distroless/static\nCOPY --from=build /app /app"},
    {"slug": "TCP-TIME_WAIT", "when": "2024-08-25 22:40 +08:00", "title": "聊聊 TCP 的 TIME_WAIT",
     "tags": ["网络", "TCP"], "categories": ["笔记"],
     "intro": "压测的时候，客户端机器上出现了几万个处于 TIME_WAIT 状态的连接，新连接开始报错。[[TIME_WAIT 并不是故障，而是主动关闭连接的一方必须经历的状态，它保证迟到的报文不会被下一个连接误收。]]真正的问题是我们每个请求都在新建连接。",
     "detail": "调内核参数只能缓解症状，根本的办法是复用连接。给 HTTP 客户端打开 keep-alive、设置合理的连接池大小之后，TIME_WAIT 的数量降到了几百个。tcp_tw_reuse 可以作为补充，但 tcp_tw_recycle 在新内核里已经被移除，也不应该再用。",
     "code": "ss -tan state time-wait | wc -l"},
    {"slug": "读书笔记-数据密集型应用系统设计", "when": "2024-09-09 00:20 +08:00",
     "title": "《数据密集型应用系统设计》读书笔记（一）", "tags": ["读书", "分布式"], "categories": ["读书笔记"],
     "intro": "这本书在书架上放了两年，终于趁着假期从头读了一遍。[[第一部分讲的可靠性、可扩展性和可维护性，看似是老生常谈，其实给后面所有的技术讨论定下了评判标准。]]这篇先记前三章。",
     "detail": "印象最深的是作者对“可扩展性”的拆解：不能笼统地说一个系统能不能扩展，而要先说清楚负载用什么参数描述，性能用什么指标衡量。书里用推特时间线的两种实现方案做例子，把读写放大的取舍讲得非常透彻。"},
    {"slug": "Git-工作流", "when": "2024-09-21 15:00 +08:00", "title": "我们团队的 Git 工作流",
     "tags": ["Git", "团队协作"], "categories": ["随笔"],
     "intro": "团队从五个人涨到十五个人之后，原来随意的分支管理开始频繁出事故。[[我们最后选择了主干开发加短命特性分支的方式，每个分支的生命周期不超过两天。]]规则简单到可以写在一张便签上。",
     "detail": "合并前必须通过自动化测试，并且至少有一个人评审。没做完的功能用特性开关藏起来，而不是留在长期分支上。半年下来，合并冲突少了很多，发布也从两周一次变成了每天都可以发。",
     "code": "git switch -c feat/login-rate-limit\ngit push -u origin HEAD"},
    {"slug": "国庆-折腾-NAS", "when": "2024-10-03 09:05 +08:00", "title": "国庆假期折腾 NAS 记",
     "tags": ["NAS", "家庭网络"], "categories": ["随笔"],
     "intro": "国庆假期哪儿也没去，在家把攒了很久的 NAS 计划落实了。[[最后用一台二手的小主机、两块硬盘和开源的系统搭起了家里的存储中心，总花费不到两千块。]]照片、文档和路由器的配置备份终于有了固定的家。",
     "detail": "两块盘做了镜像，重要的数据再每周加密同步一份到云端，这样单块硬盘坏掉或者家里出意外都不至于丢数据。远程访问走的是自建的 WireGuard，路由器上没有对外开放任何端口。"},
]


def hexo_slug(name: str) -> str:
    """Hexo's tag/category slug: "Node.js" -> "Node-js" (case and CJK kept)."""
    return re.sub(r"[\s.]+", "-", name)


def hexo_chinese() -> Blog:
    """"默之笔记" by 陈默, Hexo 7 + NexT 8 (Gemini), Chinese, blog zone +08:00.

    * ``<html lang="en-us">`` (and ``<article lang="en-us">``) on Chinese text.
    * posts ``/YYYY/MM/DD/<slug>/``; slugs mix CJK and ASCII (``/2024/07/30/内存/``,
      ``/2024/08/25/TCP-TIME_WAIT/``). Every href on the pages holds the *raw UTF-8* path;
      the canonical link, microdata and the feed hold it percent-encoded.
    * pages print the date only, ``发表于 2024年7月30日``: no datetime attribute, no
      article:published_time, no og: at all, no JSON-LD (microdata itemtype Article, no date).
    * ``/atom.xml`` (declared in <head>): the 5 newest of the 9 posts, full content,
      ``<published>``/``<updated>`` in +08:00 (one post has a later <updated>), categories
      then tags as <category term>, author only at feed level.
    * home: 5 excerpts with "阅读全文 »" links to ``<post>/#more``; ``/page/2/`` holds the 4
      older posts. The older posts are linked from listing pages only (``/page/2/``,
      ``/archives/``, ``/archives/2024/``, ``/archives/2024/MM/``, ``/tags/<t>/``,
      ``/categories/<c>/``), never from a post page or the feed.
    * tag links read ``# 内存`` (NexT prints a "#" before each tag).
    * ``/about/``, ``/tags/``, ``/categories/``; a styled 404 page.
    """
    host, site, author = "hexo.test", "默之笔记", "陈默"
    base = f"http://{host}"
    specs = [dict(s, path=f"/{moment(s['when']):%Y/%m/%d}/{s['slug']}/", author=author) for s in HEXO_POSTS]
    posts = make_posts(
        specs, seed="hexo", pool=ZH_TECH_POOL, comments=ZH_TECH_COMMENTS, shorts=ZH_SHORT_COMMENTS,
        names=ZH_NAMES, joiner="", first_comment_id=1, headings=["小结", "一些体会", "后记", "踩过的坑"],
    )
    in_feed = posts[:5]
    oldest_first = sorted(posts, key=lambda p: p.when)
    tags = group_by(oldest_first, lambda p: p.tags)
    cats = group_by(oldest_first, lambda p: p.categories)
    months = group_by(posts, lambda p: [f"{p.when:%Y/%m}"])

    def layout(title: str, main: str, head: str = "", page_class: str = "index posts-expand") -> str:
        nav = "".join(
            f'<li class="menu-item menu-item-{k}"><a href="{href}" rel="section"><i class="fa fa-{icon} fa-fw"></i>{label}</a></li>'
            for k, href, icon, label in [("home", "/", "home", "首页"), ("tags", "/tags/", "tags", "标签"),
                                         ("categories", "/categories/", "th", "分类"),
                                         ("archives", "/archives/", "archive", "归档"), ("about", "/about/", "user", "关于")]
        )
        config = json.dumps({"hostname": host, "root": "/", "images": "/images", "scheme": "Gemini",
                             "darkmode": False, "version": "8.19.2", "sidebar": {"position": "left", "display": "post"},
                             "copycode": {"enable": True}, "path": "/search.xml", "localsearch": {"enable": False}},
                            ensure_ascii=False)
        return f"""<!DOCTYPE html>
<html lang="en-us">
<head>
  <meta charset="UTF-8">
  <meta name="viewport" content="width=device-width">
  <meta name="theme-color" content="#222">
  <meta name="generator" content="Hexo 7.1.1">
  <link rel="apple-touch-icon" sizes="180x180" href="/images/apple-touch-icon-next.png">
  <link rel="icon" type="image/png" sizes="32x32" href="/images/favicon-32x32-next.png">
  <link rel="stylesheet" href="/css/main.css">
  <script class="next-config" data-name="main" type="application/json">{config}</script>
  <meta name="description" content="记录踩过的坑，也记录读过的书。">
  <meta name="author" content="{author}">
{head}
  <title>{title}</title>
  <link rel="alternate" href="/atom.xml" title="{site}" type="application/atom+xml">
</head>
<body itemscope itemtype="http://schema.org/WebPage" class="use-motion">
  <div class="headband"></div>
  <main class="main">
    <div class="column">
      <header class="header" itemscope itemtype="http://schema.org/WPHeader">
        <div class="site-brand-container">
          <div class="site-meta">
            <a href="/" class="brand" rel="start"><i class="logo-line"></i><p class="site-title">{site}</p><i class="logo-line"></i></a>
            <p class="site-subtitle" itemprop="description">记录踩过的坑</p>
          </div>
        </div>
        <nav class="site-nav"><ul class="main-menu menu">{nav}</ul></nav>
      </header>
      <aside class="sidebar">
        <div class="sidebar-inner sidebar-overview-active">
          <div class="site-overview">
            <div class="site-author animated" itemprop="author" itemscope itemtype="http://schema.org/Person">
              <img class="site-author-image" itemprop="image" alt="{author}" src="/images/avatar.png">
              <p class="site-author-name" itemprop="name">{author}</p>
              <div class="site-description" itemprop="description">后端工程师，偶尔写写字。</div>
            </div>
            <div class="site-state-wrap animated">
              <nav class="site-state">
                <div class="site-state-item site-state-posts"><a href="/archives/"><span class="site-state-item-count">{len(posts)}</span><span class="site-state-item-name">日志</span></a></div>
                <div class="site-state-item site-state-categories"><a href="/categories/"><span class="site-state-item-count">{len(cats)}</span><span class="site-state-item-name">分类</span></a></div>
                <div class="site-state-item site-state-tags"><a href="/tags/"><span class="site-state-item-count">{len(tags)}</span><span class="site-state-item-name">标签</span></a></div>
              </nav>
            </div>
            <div class="links-of-author animated"><span class="links-of-author-item"><a href="https://github.com/chenmo-dev" title="GitHub" rel="noopener me" target="_blank"><i class="fab fa-github fa-fw"></i>GitHub</a></span><span class="links-of-author-item"><a href="/atom.xml" title="RSS"><i class="fa fa-rss fa-fw"></i>RSS</a></span></div>
          </div>
        </div>
      </aside>
    </div>
    <div class="main-inner {page_class}">
{main}
    </div>
  </main>
  <footer class="footer">
    <div class="footer-inner">
      <div class="copyright">&copy; 2019 &ndash; <span itemprop="copyrightYear">2024</span><span class="with-love"><i class="fa fa-heart"></i></span><span class="author" itemprop="copyrightHolder">{author}</span></div>
      <div class="powered-by">由 <a href="https://hexo.io/" rel="noopener" target="_blank">Hexo</a> &amp; <a href="https://theme-next.js.org/" rel="noopener" target="_blank">NexT.Gemini</a> 强力驱动</div>
    </div>
  </footer>
  <script src="/js/next-boot.js"></script>
</body>
</html>
"""

    def post_meta(p: Post) -> str:
        cat = "".join(
            f'<span itemprop="about" itemscope itemtype="http://schema.org/Thing"><a href="/categories/{hexo_slug(c)}/" itemprop="url" rel="index"><span itemprop="name">{esc(c)}</span></a></span>'
            for c in p.categories
        )
        return f"""<div class="post-meta-container"><div class="post-meta">
          <span class="post-meta-item"><span class="post-meta-item-icon"><i class="far fa-calendar"></i></span><span class="post-meta-item-text">发表于</span> <span class="post-meta-date">{zh_date(p.when)}</span></span>
          <span class="post-meta-item"><span class="post-meta-item-icon"><i class="far fa-folder"></i></span><span class="post-meta-item-text">分类于</span> {cat}</span>
          <span class="post-meta-item" title="阅读次数"><span class="post-meta-item-text">阅读次数：</span><span class="busuanzi-value" id="busuanzi_value_page_pv"></span></span>
        </div></div>"""

    def article_open(p: Post) -> str:
        return f"""<article itemscope itemtype="http://schema.org/Article" class="post-content" lang="en-us">
      <link itemprop="mainEntityOfPage" href="{base}{enc(p.path)}">
      <span hidden itemprop="author" itemscope itemtype="http://schema.org/Person"><meta itemprop="name" content="{author}"></span>
      <span hidden itemprop="publisher" itemscope itemtype="http://schema.org/Organization"><meta itemprop="name" content="{site}"></span>"""

    def post_body(p: Post) -> str:
        intro, detail, *rest = p.paras
        code = f'<figure class="highlight plaintext"><table><tr><td class="code"><pre><span class="line">{esc(p.code)}</span></pre></td></tr></table></figure>' if p.code else ""
        return "\n".join([f"<p>{esc(intro)}</p>", '<a id="more"></a>', f"<p>{esc(detail)}</p>", code,
                          f'<h2 id="{attr(p.heading)}"><a href="#{attr(p.heading)}" class="headerlink" title="{attr(p.heading)}"></a>{esc(p.heading)}</h2>',
                          *[f"<p>{esc(x)}</p>" for x in rest]])

    def excerpt_block(p: Post) -> str:
        return f"""  <div class="post-block">
    {article_open(p)}
      <header class="post-header">
        <h2 class="post-title" itemprop="name headline"><a href="{p.path}" class="post-title-link" itemprop="url">{esc(p.title)}</a></h2>
        {post_meta(p)}
      </header>
      <div class="post-body" itemprop="articleBody">
        <p>{esc(p.intro)}</p>
        <div class="post-button"><a class="btn" href="{p.path}#more" rel="contents">阅读全文 &raquo;</a></div>
      </div>
      <footer class="post-footer"><div class="post-eof"></div></footer>
    </article>
  </div>"""

    def comments_html(p: Post) -> str:
        cards = "\n".join(f"""      <div class="wl-card-item" id="{c.id:024x}">
        <div class="wl-user"><img class="wl-user-avatar" src="https://seccdn.libravatar.org/avatar/{c.id:032x}" alt=""></div>
        <div class="wl-card">
          <div class="wl-head"><span class="wl-nick">{esc(c.name)}</span><span class="wl-time">{c.when:%Y-%m-%d}</span></div>
          <div class="wl-content"><p>{esc(c.text)}</p></div>
        </div>
      </div>""" for c in p.comments)
        return f"""  <div class="comments" id="waline">
    <div data-waline="">
      <div class="wl-meta-head"><div class="wl-count"><span>{len(p.comments)}</span> 评论</div></div>
      <div class="wl-cards">
{cards}
      </div>
      <div class="wl-power">Powered by <a href="https://waline.js.org" target="_blank" rel="noopener noreferrer">Waline</a></div>
    </div>
  </div>"""

    def post_page(p: Post) -> Page:
        tag_links = "".join(f'<a href="/tags/{hexo_slug(t)}/" rel="tag"># {esc(t)}</a>' for t in p.tags)
        url_raw = f"{base}{p.path}"
        main = f"""  <div class="post-block">
    {article_open(p)}
      <header class="post-header">
        <h1 class="post-title" itemprop="name headline">{esc(p.title)}</h1>
        {post_meta(p)}
      </header>
      <div class="post-body" itemprop="articleBody">
{post_body(p)}
      </div>
      <footer class="post-footer">
        <div class="post-copyright">
          <ul>
            <li class="post-copyright-author"><strong>本文作者： </strong>{author}</li>
            <li class="post-copyright-link"><strong>本文链接：</strong><a href="{url_raw}" title="{attr(p.title)}">{url_raw}</a></li>
            <li class="post-copyright-license"><strong>版权声明： </strong>本博客所有文章除特别声明外，均采用 <a href="https://creativecommons.org/licenses/by-nc-sa/4.0/deed.zh-hans" rel="noopener" target="_blank"><i class="fab fa-fw fa-creative-commons"></i>BY-NC-SA</a> 许可协议。转载请注明出处！</li>
          </ul>
        </div>
        <div class="post-tags">{tag_links}</div>
      </footer>
    </article>
  </div>
{comments_html(p)}"""
        head = f'  <link rel="canonical" href="{base}{enc(p.path)}">'
        return html_page(layout(f"{esc(p.title)} | {site}", main, head, "post posts-expand"))

    def collapse(heading: str, items: list[Post]) -> str:
        """NexT's archive/tag/category list: year headers, then "MM-DD title" lines."""
        out = [f'  <div class="post-block"><div class="posts-collapse"><div class="collection-title"><h1 class="collection-header">{esc(heading)}</h1></div>']
        for year, group in group_by(items, lambda p: [str(p.when.year)]).items():
            out.append(f'    <div class="collection-year"><span class="collection-header"><a href="/archives/{year}/">{year}</a></span></div>')
            out += [f"""    <article itemscope itemtype="http://schema.org/Article">
      <header class="post-header">
        <div class="post-meta-container"><span class="post-meta-date">{p.when:%m-%d}</span></div>
        <div class="post-title"><a class="post-title-link" href="{p.path}" itemprop="url"><span itemprop="name">{esc(p.title)}</span></a></div>
      </header>
    </article>""" for p in group]
        out.append("  </div></div>")
        return "\n".join(out)

    routes: dict = {
        "/css/main.css": CSS,
        "/js/next-boot.js": text_page("/* NexT boot */\n", "application/javascript"),
        "/images/avatar.png": file_page(png_image(), "image/png"),
        "/images/apple-touch-icon-next.png": file_page(png_image(6, 6), "image/png"),
        "/images/favicon-32x32-next.png": file_page(png_image(4, 4), "image/png"),
    }
    pages = chunks(posts, 5)
    for n, items in enumerate(pages, 1):
        nums = "".join(
            f'<span class="page-number current">{k}</span>' if k == n
            else f'<a class="page-number" href="{"/" if k == 1 else f"/page/{k}/"}">{k}</a>'
            for k in range(1, len(pages) + 1)
        )
        prev_a = f'<a class="extend prev" rel="prev" title="上一页" aria-label="上一页" href="{"/" if n == 2 else f"/page/{n - 1}/"}"><i class="fa fa-angle-left"></i></a>' if n > 1 else ""
        next_a = f'<a class="extend next" rel="next" title="下一页" aria-label="下一页" href="/page/{n + 1}/"><i class="fa fa-angle-right"></i></a>' if n < len(pages) else ""
        main = "\n".join(excerpt_block(p) for p in items) + f'\n  <nav class="pagination">{prev_a}{nums}{next_a}</nav>'
        routes["/" if n == 1 else f"/page/{n}/"] = html_page(layout(site, main))
    for p in posts:
        routes[p.path] = post_page(p)
    month_list = "".join(  # Hexo's list_archives helper
        f'<li class="archive-list-item"><a class="archive-list-link" href="/archives/{m}/">{m[:4]} 年 {int(m[5:])} 月</a>'
        f'<span class="archive-list-count">{len(ps)}</span></li>' for m, ps in months.items())
    routes["/archives/"] = html_page(layout(
        f"归档 | {site}",
        f'  <ul class="archive-list">{month_list}</ul>\n' + collapse(f"嗯..! 目前共计 {len(posts)} 篇日志。 继续努力。", posts),
        page_class="archive"))
    routes["/archives/2024/"] = html_page(layout(f"归档: 2024 | {site}", collapse("2024", posts), page_class="archive"))
    for month, items in months.items():
        routes[f"/archives/{month}/"] = html_page(layout(f"归档: {month} | {site}", collapse(month, items), page_class="archive"))
    for tag, items in tags.items():
        routes[f"/tags/{hexo_slug(tag)}/"] = html_page(layout(f"标签: {esc(tag)} | {site}", collapse(f"{tag} 标签", items[::-1]), page_class="tag"))
    for cat, items in cats.items():
        routes[f"/categories/{hexo_slug(cat)}/"] = html_page(layout(f"分类: {esc(cat)} | {site}", collapse(f"{cat} 分类", items[::-1]), page_class="category"))
    tag_cloud = " ".join(f'<a href="/tags/{hexo_slug(t)}/" style="font-size: {12 + 2 * len(ps)}px;">{esc(t)}</a>' for t, ps in tags.items())
    routes["/tags/"] = html_page(layout(f"标签 | {site}", f'  <div class="post-block"><div class="tag-cloud"><div class="tag-cloud-title">目前共计 {len(tags)} 个标签</div><div class="tag-cloud-tags">{tag_cloud}</div></div></div>', page_class="page"))
    cat_list = "".join(f'<li class="category-list-item"><a class="category-list-link" href="/categories/{hexo_slug(c)}/">{esc(c)}</a><span class="category-list-count">{len(ps)}</span></li>' for c, ps in cats.items())
    routes["/categories/"] = html_page(layout(f"分类 | {site}", f'  <div class="post-block"><div class="category-all-page"><div class="category-all-title">目前共计 {len(cats)} 个分类</div><ul class="category-list">{cat_list}</ul></div></div>', page_class="page"))
    routes["/about/"] = html_page(layout(f"关于 | {site}", f"""  <div class="post-block">
    <article class="post-content">
      <header class="post-header"><h1 class="post-title">关于</h1></header>
      <div class="post-body"><p>你好，我是{author}，一名后端工程师，主要写 Go 和 Node.js。</p><p>这里记录工作中踩过的坑和读过的书，文章均为原创，转载请注明出处。</p></div>
    </article>
  </div>""", page_class="page posts-expand"))

    def entry(p: Post) -> str:
        url = f"{base}{enc(p.path)}"
        cats_xml = "".join(f'\n    <category term="{attr(c)}" scheme="{base}/categories/{enc(hexo_slug(c))}/"/>' for c in p.categories)
        tags_xml = "".join(f'\n    <category term="{attr(t)}" scheme="{base}/tags/{enc(hexo_slug(t))}/"/>' for t in p.tags)
        return f"""  <entry>
    <title>{esc(p.title)}</title>
    <link href="{url}"/>
    <id>{url}</id>
    <published>{iso(p.when)}</published>
    <updated>{iso(p.updated or p.when)}</updated>
    <content type="html">{cdata(post_body(p))}</content>
    <summary type="html">{esc(f"<p>{p.intro}</p>")}</summary>{cats_xml}{tags_xml}
  </entry>"""

    routes["/atom.xml"] = xml_page(f"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>{site}</title>
  <subtitle>记录踩过的坑</subtitle>
  <link href="{base}/atom.xml" rel="self"/>
  <link href="{base}/"/>
  <updated>{iso(in_feed[0].when)}</updated>
  <id>{base}/</id>
  <author>
    <name>{author}</name>
  </author>
  <generator uri="https://hexo.io/">Hexo</generator>
{chr(10).join(entry(p) for p in in_feed)}
</feed>
""", "application/xml; charset=utf-8")
    not_found = html_page(layout(f"404 | {site}", '  <div class="post-block"><h1>404</h1><p>页面走丢了。<a href="/">返回首页</a></p></div>', page_class="page"), status=404)
    return Blog(
        name="hexo",
        host=host,
        home=f"{base}/",
        routes=routes,
        posts=[truth(p, host, "zh") for p in posts],
        non_posts=[
            "/", "/page/2/", "/archives/", "/archives/2024/", "/tags/", "/categories/", "/about/",
            *[f"/archives/{m}/" for m in months],
            *[f"/tags/{hexo_slug(t)}/" for t in tags],
            *[f"/categories/{hexo_slug(c)}/" for c in cats],
        ],
        never_fetched=[],
        aliases={},
        lang="zh",
        zone="+08:00",
        feeds=[f"{base}/atom.xml"],
        not_found=not_found,
        quirks=[
            '<html lang="en-us"> on Chinese text',
            "hrefs hold raw UTF-8 CJK paths; canonical, microdata and feed hold them percent-encoded",
            "no machine-readable date on any page: only 2024年7月30日 after 发表于",
            ("the Atom feed lists only the 5 newest of 9 posts (dates +08:00); the 4 older ones have "
            "published None: published_day_local is the printed day, published_day_utc its midnight "
            "+08:00 in UTC (one day earlier)"),
            "2024/08/12 07:30 +08:00 and 2024/09/09 00:20 +08:00 fall on the previous UTC day",
            "the Docker post's Atom <updated> is a week after its <published>",
            "the older posts are linked only from listing pages, never from posts or the feed",
            "tag links read '# TAG'; feed <category> holds categories then tags",
            "'阅读全文 »' links point at POST/#more",
        ],
    )


# ============================================================================================
# d. GBK: an old Chinese PHP blog (2009), GBK bytes declared gb2312
# ============================================================================================

GBK_POSTS: list[dict[str, Any]] = [
    {"num": 12, "when": "2009-03-08 21:40 +08:00", "title": "博客搬家后的第一篇",
     "tags": ["博客", "随笔"], "categories": ["心情日记"],
     "intro": "折腾了整整一个周末，博客总算从原来的免费空间搬到了自己租的虚拟主机上。[[旧文章一篇篇导出来再导进去，分类和评论都丢了不少，只能以后慢慢补了。]]域名也换了，老朋友们记得改一下收藏夹。",
     "detail": "新空间的速度比原来快了很多，后台也终于可以自己改模板了。我把页面的颜色改成了以前一直想要的淡绿色，看着舒服多了。"},
    {"num": 15, "when": "2009-04-19 10:05 +08:00", "title": "与老友李堃的一次长谈",
     "tags": ["朋友", "生活"], "categories": ["心情日记"],
     "intro": "上周六，多年未见的老同学李堃出差路过，我们在学校后门的小馆子里坐了一下午。[[堃说他这几年换了三份工作，最后才明白自己想要的不是更高的工资，而是能按时回家吃晚饭。]]听他这么说，我半天没接上话。",
     "detail": "我们聊起大学时一起通宵上网、一起挂科补考的日子，笑得服务员都过来看。分别的时候，他说下次换我去他那里，我说一定。"},
    {"num": 21, "when": "2009-06-02 23:10 +08:00", "title": "记一次硬盘数据恢复",
     "tags": ["硬盘", "数据恢复"], "categories": ["电脑技术"],
     "intro": "前天晚上电脑突然蓝屏，重启之后 D 盘提示需要格式化，里面有我五年来的照片。[[我没有急着格式化，而是先用另一台电脑把整块硬盘做了一个镜像，之后所有的恢复操作都在镜像上进行。]]这是以前在论坛上看来的经验，这次真的派上了用场。",
     "detail": "用了两个数据恢复软件，第一个只找回了一半文件，第二个扫描了整整六个小时，几乎全部找了回来。教训只有一句：重要的东西一定要有备份，而且要放在不同的地方。"},
    {"num": 34, "when": "2009-11-22 16:30 +08:00", "title": "家乡的冬天",
     "tags": ["家乡", "冬天"], "categories": ["心情日记"],
     "intro": "今天北京下了今年的第一场雪，走在路上忽然很想家。[[家乡的冬天没有暖气，一家人围着火盆烤红薯，是我记忆里最暖和的画面。]]那时候觉得冬天漫长又无聊，现在却格外想念。",
     "detail": "父亲总是最早起床把火生好，母亲在灶台边忙着煮粥。院子里的水缸结了厚厚一层冰，我们几个小孩拿棍子去敲，谁敲开了谁就是英雄。"},
    {"num": 35, "when": "2010-01-03 07:20 +08:00", "title": "学习 Python 的一点体会",
     "tags": ["Python", "编程"], "categories": ["电脑技术"],
     "intro": "元旦假期在家没出门，把一直想学的 Python 入门书看完了一半。[[最让我意外的是 Python 用缩进来表示代码块，一开始很不习惯，写了几天之后反而觉得代码清爽了许多。]]以前用 C 写的小工具，用 Python 重写只要三分之一的行数。",
     "detail": "我先试着写了一个批量重命名照片的小脚本，按拍摄日期给文件改名，二十多行就搞定了。接下来打算用它写一个自动备份博客数据库的脚本，省得每次都手动导出。",
     "code": "for name in os.listdir('.'):\n    print name"},
    {"num": 41, "when": "2010-03-14 20:00 +08:00", "title": "读《围城》随笔",
     "tags": ["读书", "钱钟书"], "categories": ["读书笔记"],
     "intro": "这个月重读了钱钟书的《围城》，上一次读还是高中的时候。[[高中时只觉得方鸿渐可笑，这次读却处处看到自己的影子，笑着笑着就笑不出来了。]]好书大概就是这样，每个年纪读出来的东西都不一样。",
     "detail": "书里的比喻实在精妙，随便翻开一页都能找到让人拍案的句子。城外的人想冲进去，城里的人想逃出来，这句话被人引用得太多，真正读完全书再回头看，才觉出其中的苦涩。"},
]
GBK_CATEGORIES = {"心情日记": 1, "电脑技术": 2, "读书笔记": 3}


def gbk_query(value: str) -> str:
    """A query value percent-encoded in GBK, as old Chinese PHP sites write them."""
    return quote(value.encode("gbk"), safe="")


def gbk_blog() -> Blog:
    """"王镕的小站", a hand-written PHP blog from 2009, every byte in GBK.

    * every HTML page is GBK with ``<meta http-equiv="Content-Type" content="text/html;
      charset=gb2312">`` but holds characters GB2312 lacks (镕 in the site name on every
      page, 堃 in a title, 喆 in a commenter's name): decoding as strict gb2312 fails.
    * HTTP headers: listings say ``charset=gb2312``, posts send ``text/html`` with no charset,
      about/guestbook say ``charset=GBK``; ``/archives/21.html`` says ``charset=ISO-8859-1``
      (wrong) while its meta says gbk. (By the HTML spec the header wins, which gives
      mojibake; the truth is the Chinese text.)
    * posts ``/archives/N.html`` (N = 12, 15, 21, 34, 35, 41): "archives" in the path, yet posts.
      No <article>, no og:, no JSON-LD; the date is printed ``2009-06-02 23:10`` (+08:00).
    * ``/``, ``/?page=2``, ``/?page=3`` (2 posts each), ``/?cat=N``, ``/?m=YYYYMM``,
      ``/tag.php?tag=<GBK percent-encoded>`` (also accepts UTF-8 percent-encoding).
    * ``/rss.php``: RSS 2.0 of all 6 posts in GBK with ``<?xml version="1.0"
      encoding="gbk"?>`` served as bare ``text/xml``: expat (ElementTree) refuses it with
      "multi-byte encodings are not supported"; feedparser transcodes it itself and parses all
      6 entries, flagged bozo (CharacterEncodingOverride: text/xml without charset means
      us-ascii). Full HTML in <description>, RFC 822 +0800 pubDate, <author>王镕</author>,
      no <category>: the tags are only on the pages.
    """
    host, site, author = "gbk.test", "王镕的小站", "王镕"
    base = f"http://{host}"
    specs = [dict(s, path=f"/archives/{s['num']}.html", author=author) for s in GBK_POSTS]
    posts = make_posts(
        specs, seed="gbk", pool=ZH_LIFE_POOL, comments=ZH_LIFE_COMMENTS, shorts=ZH_SHORT_COMMENTS,
        names=[*ZH_NAMES, "张喆"], joiner="", first_comment_id=101, headings=["后记", "又及", "写在最后"],
    )
    oldest_first = sorted(posts, key=lambda p: p.when)
    tags = group_by(oldest_first, lambda p: p.tags)
    months = group_by(posts, lambda p: [f"{p.when:%Y%m}"])
    listing_type = "text/html; charset=gb2312"

    def tag_href(tag: str) -> str:
        return f"/tag.php?tag={gbk_query(tag)}"

    def layout(title: str, content: str, keywords: str = "", meta_charset: str = "gb2312") -> str:
        recent = "".join(f'<li><a href="/archives/{p.num}.html" title="{attr(p.title)}">{esc(p.title)}</a></li>' for p in posts)
        archive = "".join(f'<li><a href="/?m={m}">{m[:4]}年{m[4:]}月</a> ({len(ps)})</li>' for m, ps in months.items())
        tag_cloud = " ".join(f'<a href="{tag_href(t)}">{esc(t)}</a>' for t in tags)
        count = sum(len(p.comments) for p in posts)
        return f"""<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
<meta http-equiv="Content-Type" content="text/html; charset={meta_charset}" />
<title>{title}</title>
<meta name="keywords" content="{attr(keywords or '王镕,博客,生活,电脑技术')}" />
<meta name="description" content="{site} - 记录生活的点点滴滴" />
<link rel="alternate" type="application/rss+xml" title="{site}" href="{base}/rss.php" />
<link href="/skin/green/style.css" rel="stylesheet" type="text/css" />
<script type="text/javascript" src="/js/common.js"></script>
</head>
<body>
<div id="wrap">
  <div id="header">
    <h1><a href="{base}/">{site}</a></h1>
    <p class="slogan">记录生活的点点滴滴</p>
  </div>
  <div id="menu">
    <a href="/">首页</a> | {" | ".join(f'<a href="/?cat={n}">{c}</a>' for c, n in GBK_CATEGORIES.items())} | <a href="/guestbook.php">留言本</a> | <a href="/about.php">关于我</a> | <a href="/rss.php">RSS订阅</a>
  </div>
  <div id="main">
    <div id="content">
{content}
    </div>
    <div id="sidebar">
      <h3>最新日志</h3><ul>{recent}</ul>
      <h3>日志归档</h3><ul>{archive}</ul>
      <h3>标签</h3><p class="tags">{tag_cloud}</p>
      <h3>友情链接</h3><ul><li><a href="http://laozhou.example.com/" target="_blank">老周的博客</a></li><li><a href="http://www.example.org/" target="_blank">一个朋友</a></li></ul>
      <h3>统计</h3><p>日志：{len(posts)} 篇<br />评论：{count} 条</p>
    </div>
    <div class="clear"></div>
  </div>
  <div id="footer">Copyright &copy; 2008-2010 <a href="{base}/">{site}</a> All Rights Reserved. Powered by 自写程序 v1.2 | <a href="/admin/">管理登录</a> | <a href="http://www.miibeian.gov.cn/" target="_blank">京ICP备09012345号</a></div>
</div>
</body>
</html>
"""

    def info(p: Post) -> str:
        cat = p.categories[0]
        return (f'作者：<a href="/about.php">{author}</a> | 发表于：{p.when:%Y-%m-%d %H:%M} | 分类：'
                f'<a href="/?cat={GBK_CATEGORIES[cat]}">{cat}</a> | 浏览({900 + 37 * p.num})')

    def listing(title: str, items: list[Post], pager: str = "", heading: str = "") -> Page:
        entries = "\n".join(f"""      <div class="post">
        <h2 class="post-title"><a href="/archives/{p.num}.html" target="_blank">{esc(p.title)}</a></h2>
        <div class="post-info">{info(p)}</div>
        <div class="post-content"><p>{esc(p.intro)}</p></div>
        <div class="post-more"><a href="/archives/{p.num}.html">阅读全文...</a> | <a href="/archives/{p.num}.html#comments">评论({len(p.comments)})</a></div>
      </div>""" for p in items)
        head = f'      <div class="location">{esc(heading)}</div>\n' if heading else ""
        return html_page(layout(title, head + entries + pager), "gbk", content_type=listing_type)

    def post_page(p: Post) -> Page:
        i = posts.index(p)
        older = posts[i + 1] if i + 1 < len(posts) else None
        newer = posts[i - 1] if i > 0 else None
        nav = ("上一篇：" + (f'<a href="/archives/{older.num}.html">{esc(older.title)}</a>' if older else "没有了")
               + "<br />下一篇：" + (f'<a href="/archives/{newer.num}.html">{esc(newer.title)}</a>' if newer else "没有了"))
        intro, detail, *rest = p.paras
        code = f"<pre>{esc(p.code)}</pre>" if p.code else ""
        body = "".join([f"<p>{esc(intro)}</p>", f"<p>{esc(detail)}</p>", code,
                        f"<p><strong>{esc(p.heading)}</strong></p>", *[f"<p>{esc(x)}</p>" for x in rest]])
        comments = "\n".join(
            f'          <dt><a name="c{c.id}"></a><span class="c-author">{esc(c.name)}</span> 于 {c.when:%Y-%m-%d %H:%M} 说：</dt>\n'
            f'          <dd>{esc(c.text)}</dd>' for c in p.comments)
        tag_links = " ".join(f'<a href="{tag_href(t)}" rel="tag">{esc(t)}</a>' for t in p.tags)
        content = f"""      <div class="post" id="post-{p.num}">
        <h2 class="post-title">{esc(p.title)}</h2>
        <div class="post-info">{info(p)} | <a href="#comments">评论({len(p.comments)})</a></div>
        <div class="post-content">{body}</div>
        <div class="post-tags">Tags: {tag_links}</div>
        <div class="post-nav">{nav}</div>
      </div>
      <div id="comments">
        <h3>网友评论({len(p.comments)})</h3>
        <dl class="comment-list">
{comments}
        </dl>
        <div id="comment-form">
          <h3>发表评论</h3>
          <form action="/comment.php?act=add&amp;id={p.num}" method="post">
            <p>昵称：<input type="text" name="author" size="20" /> 主页：<input type="text" name="url" size="30" /></p>
            <p><textarea name="content" cols="60" rows="6"></textarea></p>
            <p>验证码：<input type="text" name="code" size="4" /> <img src="/code.php" alt="验证码" /> <input type="submit" value="提交评论" /></p>
          </form>
        </div>
      </div>"""
        wrong = p.num == 21
        text = layout(f"{esc(p.title)} - {site}", content, ",".join(p.tags), "gbk" if wrong else "gb2312")
        return html_page(text, "gbk", content_type="text/html; charset=ISO-8859-1" if wrong else "text/html")

    def pager(n: int, total: int) -> str:
        nums = " ".join(f"<b>{k}</b>" if k == n else f'<a href="{"/" if k == 1 else f"/?page={k}"}">{k}</a>' for k in range(1, total + 1))
        prev_a = f'<a href="{"/" if n == 2 else f"/?page={n - 1}"}">上一页</a> ' if n > 1 else ""
        next_a = f' <a href="/?page={n + 1}">下一页</a>' if n < total else ""
        return f'\n      <div class="pager">共 {total} 页 {prev_a}{nums}{next_a}</div>'

    routes: dict = {
        "/skin/green/style.css": CSS,
        "/js/common.js": text_page("function $(id){return document.getElementById(id);}\n", "application/x-javascript"),
        "/code.php": file_page(png_image(40, 16), "image/png"),  # the comment form's captcha
    }
    pages = chunks(posts, 2)
    for n, items in enumerate(pages, 1):
        title = site if n == 1 else f"{site} - 第{n}页"
        routes["/" if n == 1 else f"/?page={n}"] = listing(title, items, pager(n, len(pages)))
    for p in posts:
        routes[p.path] = post_page(p)
    for cat, num in GBK_CATEGORIES.items():
        items = [p for p in posts if cat in p.categories]
        routes[f"/?cat={num}"] = listing(f"{cat} - {site}", items, heading=f"当前位置：首页 &gt; {cat}")
    for month, items in months.items():
        routes[f"/?m={month}"] = listing(f"{month[:4]}年{month[4:]}月 - {site}", items, heading=f"日志归档：{month[:4]}年{month[4:]}月")

    def tag_route(path: str, query: str) -> Page | None:
        raw = parse_qs(query, encoding="latin-1").get("tag", [""])[0].encode("latin-1")
        raw = unquote_to_bytes(raw)  # parse_qs already unquoted once; %XX left if double-encoded
        for codec in ("utf-8", "gbk"):
            try:
                name = raw.decode(codec)
            except UnicodeDecodeError:
                continue
            if name in tags:
                return listing(f"Tag: {name} - {site}", tags[name][::-1], heading=f"标签：{name}")
        return None

    routes["/tag.php"] = tag_route
    routes["/about.php"] = html_page(layout(f"关于我 - {site}", f"""      <div class="post">
        <h2 class="post-title">关于我</h2>
        <div class="post-content"><p>{author}，八零后，在北京做软件开发。喜欢读书、爬山，偶尔写点东西。</p><p>这个博客是自己用 PHP 写的，界面简陋，见笑了。有事可以去<a href="/guestbook.php">留言本</a>给我留言。</p></div>
      </div>"""), "gbk", content_type="text/html; charset=GBK")
    routes["/guestbook.php"] = html_page(layout(f"留言本 - {site}", """      <div class="post">
        <h2 class="post-title">留言本</h2>
        <dl class="comment-list"><dt>老周 于 2009-05-01 12:00 说：</dt><dd>来看看你，博客越来越像样了。</dd></dl>
        <form action="/guestbook.php?act=add" method="post"><p><textarea name="content" cols="60" rows="6"></textarea></p><p><input type="submit" value="留言" /></p></form>
      </div>"""), "gbk", content_type="text/html; charset=GBK")
    routes["/robots.txt"] = text_page("User-agent: *\nDisallow: /admin/\nDisallow: /comment.php\n")
    routes["/admin/"] = html_page(f"""<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312" /><title>后台登录 - {site}</title></head>
<body><form action="/admin/login.php" method="post">用户名：<input name="user" /> 密码：<input type="password" name="pass" /> <input type="submit" value="登录" /></form></body></html>
""", "gbk", content_type=listing_type)

    def item(p: Post) -> str:
        body = "".join(f"<p>{esc(x)}</p>" for x in p.paras)
        return f"""<item>
<title>{esc(p.title)}</title>
<link>{base}{p.path}</link>
<author>{author}</author>
<pubDate>{rfc822(p.when)}</pubDate>
<guid>{base}{p.path}</guid>
<description>{cdata(body)}</description>
</item>"""

    routes["/rss.php"] = xml_page(f"""<?xml version="1.0" encoding="gbk"?>
<rss version="2.0">
<channel>
<title>{site}</title>
<link>{base}/</link>
<description>记录生活的点点滴滴</description>
<language>zh-cn</language>
<generator>自写程序 v1.2</generator>
<lastBuildDate>{rfc822(posts[0].when)}</lastBuildDate>
{chr(10).join(item(p) for p in posts)}
</channel>
</rss>
""", "text/xml", encoding="gbk")
    return Blog(
        name="gbk",
        host=host,
        home=f"{base}/",
        routes=routes,
        posts=[truth(p, host, "zh") for p in posts],
        non_posts=[
            "/", "/?page=2", "/?page=3", "/about.php", "/guestbook.php",
            *[f"/?cat={n}" for n in GBK_CATEGORIES.values()],
            *[f"/?m={m}" for m in months],
            *[tag_href(t) for t in tags],
        ],
        never_fetched=["/admin/"],
        aliases={},
        lang="zh",
        zone="+08:00",
        feeds=[f"{base}/rss.php"],
        quirks=[
            "GBK bytes declared gb2312 (meta and some headers): 镕 堃 喆 are not in GB2312",
            "every footer links /admin/, which robots.txt disallows",
            "/archives/21.html: HTTP header charset=ISO-8859-1, meta charset=gbk",
            "post pages send Content-Type text/html without a charset",
            "posts live under /archives/ (a listing word elsewhere)",
            "listing pages are query strings on /: ?page=N, ?cat=N, ?m=YYYYMM",
            "tag URLs carry GBK percent-encoding: /tag.php?tag=%C9%FA%BB%EE",
            "the RSS feed is GBK with encoding=\"gbk\", served as bare text/xml: expat refuses it",
            "no <article>, no og:, no JSON-LD, no <time>: dates printed as 2009-06-02 23:10 (+08:00)",
            "2010-01-03 07:20 +08:00 is 2010-01-02 in UTC",
            "the feed has no <category>; tags are only on the page (Tags: links)",
        ],
    )


# ============================================================================================
# e. Jekyll / Minimal Mistakes: no feed, sitemaps only
# ============================================================================================

JEKYLL_POSTS: list[dict[str, Any]] = [
    {"slug": "raspberry-pi-temperature-logger", "when": "2023-11-19 10:30 -05:00",
     "title": "Logging Temperatures with a Raspberry Pi", "tags": ["raspberry-pi", "sensors"], "categories": ["projects"],
     "intro": "Our flat has one room that is always too cold, and I wanted numbers rather than arguments. [[A Raspberry Pi Zero, a DS18B20 sensor and a four-line cron job have been logging the temperature every minute for six months now.]] The whole kit cost less than a takeaway dinner.",
     "detail": "The sensor speaks the one-wire protocol, which the kernel exposes as a file under /sys/bus/w1/devices, so reading it is just reading a file. Each reading goes into a CSV file with a timestamp, and once a day a small script pushes the file to my home server, where it ends up on a graph.",
     "code": "cat /sys/bus/w1/devices/28-*/w1_slave"},
    {"slug": "mqtt-retained-messages", "when": "2024-01-07 21:15 -05:00",
     "title": "MQTT Retained Messages, Explained", "tags": ["home-automation", "mqtt"], "categories": ["notes"],
     "intro": "When my dashboard restarted, every tile showed unknown until each sensor happened to report again, sometimes an hour later. [[Retained messages fix exactly this: the broker keeps the last message on a topic and hands it to every new subscriber immediately.]] One flag on the publishing side made the dashboard useful again after every restart.",
     "detail": "Retained messages are not a history. The broker keeps only the newest one per topic, and publishing an empty retained message deletes it, which is worth knowing when a device is removed for good. I also learned to keep commands unretained, otherwise a light turns itself on every time a client reconnects.",
     "code": "mosquitto_pub -t home/kitchen/temp -m 21.5 -r"},
    {"slug": "a-week-with-nixos", "when": "2024-02-11 14:00 -05:00",
     "title": "A Week with NixOS on My Laptop", "tags": ["linux", "nixos"], "categories": ["notes"],
     "intro": "I installed NixOS on my old laptop as an experiment, expecting to go back to my usual distribution by the weekend. [[After a week, the idea that my whole system is described in one file I can read, diff and roll back had won me over.]] The learning curve is steep, but it is honest about its steepness.",
     "detail": "The best moment was breaking the graphics driver configuration and simply picking the previous generation from the boot menu. The worst was packaging a small Python tool that expected to write into its own install directory. The language takes time, but the documentation and the community wiki filled most gaps."},
    {"slug": "debouncing-buttons-in-software", "when": "2024-03-24 09:00 -04:00",
     "title": "Debouncing Buttons in Software", "tags": ["electronics", "micropython"], "categories": ["projects"],
     "intro": "A cheap push button does not close a circuit once; it bounces between open and closed for a few milliseconds. [[My first doorbell project counted every press as three to seven presses, which made the chime sound like a nervous woodpecker.]] Debouncing is the fix, and it is easy to do in software.",
     "detail": "The simplest approach ignores any change that comes within twenty milliseconds of the previous one. A slightly better one samples the pin on a timer and only accepts a new state after it has been stable for several samples in a row. On MicroPython both approaches fit in a few lines, and interrupts only need to set a flag.",
     "code": "if time.ticks_diff(now, last_press) > 20:\n    pressed = True"},
    {"slug": "grafana-dashboards-that-age-well", "when": "2024-05-12 19:45 -04:00",
     "title": "Grafana Dashboards That Age Well", "tags": ["grafana", "monitoring"], "categories": ["notes"],
     "intro": "I have built a lot of Grafana dashboards, and most of them were useless six months later. [[A dashboard ages well when every panel answers a question someone actually asks, and badly when it shows everything just because it can.]] The ones I still open daily have fewer than eight panels.",
     "detail": "Each panel on those dashboards has a title written as a question, such as is the freezer colder than minus eighteen, and a threshold line that makes the answer visible at a glance. Variables for the room or the device keep one dashboard useful instead of copying it ten times, and the JSON lives in git."},
    {"slug": "zigbee-network-dropouts", "when": "2024-06-30 08:10 -04:00",
     "title": "Why My Zigbee Network Kept Dropping Devices", "tags": ["home-automation", "zigbee"], "categories": ["projects"],
     "intro": "For weeks, two of my Zigbee sensors vanished from the network every few days and came back after a battery pull. [[The culprit was my Wi-Fi access point, which shared a crowded slice of the 2.4 GHz band with the Zigbee channel I had picked.]] Zigbee channels overlap Wi-Fi channels, and some combinations are much worse than others.",
     "detail": "Moving Zigbee to channel 25, away from Wi-Fi channel 6, ended the dropouts immediately. Adding two mains-powered plugs as routers helped the sensors at the far end of the flat too, because battery devices never route traffic themselves. A USB extension cable for the coordinator, away from the computer's own noise, was the last piece."},
    {"slug": "e-ink-status-display", "when": "2024-08-18 16:20 -04:00",
     "title": "Building a Tiny E-Ink Status Display", "tags": ["electronics", "raspberry-pi"], "categories": ["projects"],
     "intro": "I wanted a display by the front door showing the weather, the next bus and whether the washing machine had finished. [[An e-ink panel turned out to be perfect, because it only draws power while changing the picture and stays readable in direct sunlight.]] It updates every five minutes and the battery lasts about two months.",
     "detail": "The panel is driven by a small board that wakes up, fetches one prepared image from my home server and goes back to deep sleep. Rendering happens on the server with a Python script and a bitmap font, which keeps the firmware almost trivial. Partial refresh avoids the full black flash for small changes."},
]


def jekyll_blog() -> Blog:
    """"Signal Path" by Sam Okonkwo, Jekyll with the Minimal Mistakes theme (Toronto, EST/EDT).

    * NO feed: no <link rel="alternate"> anywhere; /feed.xml, /atom.xml, /rss.xml, /feed,
      /index.xml ... all 404 (with the theme's 404 page).
    * ``/robots.txt`` names ``Sitemap: http://jekyll.test/sitemap_index.xml``, a sitemap index
      listing ``/sitemap-posts.xml.gz`` (a gzip file, served as application/x-gzip, no
      Content-Encoding) and ``/sitemap-pages.xml``. ``/sitemap.xml`` is a 404.
    * posts ``/<slug>/``: og:type=article, article:published_time, canonical, a JSON-LD
      BlogPosting (headline, datePublished with offset, author, keywords = the tags) beside the
      theme's site-wide JSON-LD Person; the categories are also rel="tag" links (the theme
      does that), under "Categories:", the tags under "Tags:".
    * each post page also holds other <article>s: a "You may also enjoy" block of two other
      posts with their excerpts and <time>s, and Staticman comments as <article class=comment>.
    * home ``/`` and ``/page2/``, ``/page3/`` (3 posts per page); ``/tags/`` and
      ``/categories/`` (one page each, anchors ``#mqtt``), ``/year-archive/``; ``/about/``
      (og:type website).
    """
    host, site, author = "jekyll.test", "Signal Path", "Sam Okonkwo"
    base = f"http://{host}"
    specs = [dict(s, path=f"/{s['slug']}/", author=author) for s in JEKYLL_POSTS]
    posts = make_posts(
        specs, seed="jekyll", pool=EN_TECH_POOL, comments=EN_TECH_COMMENTS, shorts=EN_SHORT_COMMENTS,
        names=EN_NAMES, first_comment_id=1, headings=["How it works", "Lessons learned", "What's next", "Parts and tools"],
    )
    oldest_first = sorted(posts, key=lambda p: p.when)
    tags = group_by(oldest_first, lambda p: p.tags)
    cats = group_by(oldest_first, lambda p: p.categories)
    person = json.dumps({"@context": "https://schema.org", "@type": "Person", "name": author,
                         "url": f"{base}/", "sameAs": ["https://github.com/samokonkwo"]})

    def read_time(p: Post) -> int:
        return max(1, sum(len(x.split()) for x in p.paras) // 200 + 1)

    def layout(title: str, main: str, head: str, layout_class: str) -> Page:
        text = f"""<!doctype html>
<html lang="en" class="no-js">
  <head>
    <meta charset="utf-8">
<!-- begin _includes/seo.html --><title>{title}</title>
{head}
<script type="application/ld+json">{person}</script>
<!-- end _includes/seo.html -->
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="/assets/css/main.css">
  </head>
  <body class="layout--{layout_class}">
    <nav class="skip-links"><ul><li><a href="#site-nav" class="screen-reader-shortcut">Skip to primary navigation</a></li><li><a href="#main" class="screen-reader-shortcut">Skip to content</a></li><li><a href="#footer" class="screen-reader-shortcut">Skip to footer</a></li></ul></nav>
    <div class="masthead"><div class="masthead__inner-wrap"><div class="masthead__menu">
      <nav id="site-nav" class="greedy-nav">
        <a class="site-title" href="/">{site}</a>
        <ul class="visible-links">
          <li class="masthead__menu-item"><a href="/year-archive/">Posts</a></li>
          <li class="masthead__menu-item"><a href="/tags/">Tags</a></li>
          <li class="masthead__menu-item"><a href="/categories/">Categories</a></li>
          <li class="masthead__menu-item"><a href="/about/">About</a></li>
        </ul>
        <button class="greedy-nav__toggle hidden" type="button"><span class="visually-hidden">Toggle menu</span><div class="navicon"></div></button>
      </nav>
    </div></div></div>
    <div class="initial-content">
{main}
    </div>
    <div id="footer" class="page__footer"><footer>
      <div class="page__footer-follow"><ul class="social-icons"><li><strong>Follow:</strong></li><li><a href="https://github.com/samokonkwo" rel="nofollow noopener noreferrer"><i class="fab fa-fw fa-github" aria-hidden="true"></i> GitHub</a></li></ul></div>
      <div class="page__footer-copyright">&copy; 2024 {site}. Powered by <a href="https://jekyllrb.com" rel="nofollow">Jekyll</a> &amp; <a href="https://mademistakes.com/work/minimal-mistakes-jekyll-theme/" rel="nofollow">Minimal Mistakes</a>.</div>
    </footer></div>
    <script src="/assets/js/main.min.js"></script>
  </body>
</html>
"""
        return html_page(text)

    def sidebar() -> str:
        return f"""  <div class="sidebar sticky">
  <div itemscope itemtype="https://schema.org/Person" class="h-card">
    <div class="author__avatar"><a href="{base}/"><img src="/assets/images/bio-photo.png" alt="{author}" itemprop="image" class="u-photo"></a></div>
    <div class="author__content">
      <h3 class="author__name p-name" itemprop="name"><a class="u-url" rel="me" href="{base}/" itemprop="url">{author}</a></h3>
      <div class="author__bio p-note" itemprop="description"><p>Tinkerer, sensor hoarder, occasional solderer.</p></div>
    </div>
    <div class="author__urls-wrapper">
      <button class="btn btn--inverse">Follow</button>
      <ul class="author__urls social-icons">
        <li itemprop="homeLocation" itemscope itemtype="https://schema.org/Place"><i class="fas fa-fw fa-map-marker-alt" aria-hidden="true"></i> <span itemprop="name" class="p-locality">Toronto, Canada</span></li>
        <li><a href="mailto:sam@jekyll.test" rel="nofollow noopener noreferrer me"><i class="fas fa-fw fa-envelope-square" aria-hidden="true"></i><span class="label">Email</span></a></li>
        <li><a href="https://github.com/samokonkwo" rel="nofollow noopener noreferrer me" itemprop="sameAs"><i class="fab fa-fw fa-github" aria-hidden="true"></i><span class="label">GitHub</span></a></li>
      </ul>
    </div>
  </div>
  </div>"""

    def date_meta(p: Post) -> str:
        return (f'<p class="page__meta"><span class="page__meta-date"><i class="far fa-calendar-alt" aria-hidden="true"></i> '
                f'<time datetime="{iso(p.when)}">{us_date(p.when)}</time></span><span class="page__meta-sep"></span>'
                f'<span class="page__meta-readtime"><i class="far fa-clock" aria-hidden="true"></i> {read_time(p)} minute read</span></p>')

    def archive_item(p: Post, tag: str = "h2") -> str:
        return f"""<div class="list__item">
  <article class="archive__item" itemscope itemtype="https://schema.org/CreativeWork">
    <{tag} class="archive__item-title no_toc" itemprop="headline"><a href="{p.path}" rel="permalink">{esc(p.title)}</a></{tag}>
    {date_meta(p)}
    <p class="archive__item-excerpt" itemprop="description">{esc(p.intro.split(". ")[0])}.</p>
  </article>
</div>"""

    def taxonomy(label: str, icon: str, names: list[str], folder: str) -> str:
        links = '<span class="sep">, </span>'.join(
            f'<a href="/{folder}/#{slugify(n)}" class="page__taxonomy-item p-category" rel="tag">{esc(n)}</a>' for n in names)
        return (f'<p class="page__taxonomy"><strong><i class="fas fa-fw fa-{icon}" aria-hidden="true"></i> {label}: </strong>'
                f'<span itemprop="keywords">{links}</span></p>')

    def comments_html(p: Post) -> str:
        items = "\n".join(f"""<article id="comment{n}" class="js-comment comment" itemprop="comment" itemscope itemtype="https://schema.org/Comment">
  <div class="comment__avatar-wrapper"><img class="comment__avatar" src="https://www.gravatar.com/avatar/{c.id:032x}?d=mm&amp;s=80" alt="{attr(c.name)}"></div>
  <div class="comment__content-wrapper">
    <h3 class="comment__author" itemprop="author" itemscope itemtype="https://schema.org/Person"><span itemprop="name">{esc(c.name)}</span></h3>
    <p class="comment__date"><a href="#comment{n}" itemprop="url"><time datetime="{iso(c.when)}" itemprop="datePublished">{us_date(c.when)} at {c.when:%I:%M %p}</time></a></p>
    <div itemprop="text"><p>{esc(c.text)}</p></div>
  </div>
</article>""" for n, c in enumerate(p.comments, 1))
        return f"""<div class="page__comments">
  <h4 class="page__comments-title">Comments</h4>
  <section id="static-comments">
{items}
    <h4 class="page__comments-title">Leave a comment</h4>
    <form id="new_comment" class="page__comments-form js-form form" method="post" action="https://staticman.jekyll.test/v3/entry/github/samokonkwo/blog/main/comments">
      <div class="form-group"><label for="comment-form-message">Comment <small class="required">*</small></label><textarea type="text" rows="3" id="comment-form-message" name="fields[message]" tabindex="1"></textarea></div>
      <div class="form-group"><label for="comment-form-name">Name <small class="required">*</small></label><input type="text" id="comment-form-name" name="fields[name]" tabindex="2" /></div>
      <input type="hidden" name="options[slug]" value="{p.slug}">
      <div class="form-group"><button type="submit" id="comment-form-submit" tabindex="5" class="btn btn--primary btn--large">Submit comment</button></div>
    </form>
  </section>
</div>"""

    def post_page(p: Post) -> Page:
        i = posts.index(p)
        older = posts[i + 1] if i + 1 < len(posts) else None
        newer = posts[i - 1] if i > 0 else None
        url = f"{base}{p.path}"
        related = [q for q in posts if q is not p][:2]
        description = p.intro.split(". ")[0] + "."
        ld = json.dumps({
            "@context": "https://schema.org", "@type": "BlogPosting", "headline": p.title,
            "datePublished": iso(p.when), "dateModified": iso(p.when),
            "author": {"@type": "Person", "name": p.author, "url": f"{base}/"},
            "keywords": ", ".join(p.tags), "description": description, "url": url,
            "mainEntityOfPage": {"@type": "WebPage", "@id": url},
        })
        head = f"""<meta name="description" content="{attr(description)}">
<meta name="author" content="{author}">
<meta property="article:author" content="{author}">
<meta property="og:type" content="article">
<meta property="og:locale" content="en_US">
<meta property="og:site_name" content="{site}">
<meta property="og:title" content="{attr(p.title)}">
<meta property="og:url" content="{url}">
<meta property="og:description" content="{attr(description)}">
<meta property="article:published_time" content="{iso(p.when)}">
<link rel="canonical" href="{url}">
<script type="application/ld+json">{ld}</script>"""
        pager = (f'<a href="{older.path}" class="pagination--pager" title="{attr(older.title)}">Previous</a>' if older
                 else '<a href="#" class="pagination--pager disabled">Previous</a>')
        pager += (f'<a href="{newer.path}" class="pagination--pager" title="{attr(newer.title)}">Next</a>' if newer
                  else '<a href="#" class="pagination--pager disabled">Next</a>')
        share = quote(url, safe="")
        main = f"""<div id="main" role="main">
{sidebar()}
  <article class="page h-entry" itemscope itemtype="https://schema.org/CreativeWork">
    <meta itemprop="headline" content="{attr(p.title)}">
    <meta itemprop="description" content="{attr(description)}">
    <meta itemprop="datePublished" content="{iso(p.when)}">
    <div class="page__inner-wrap">
      <header>
        <h1 id="page-title" class="page__title p-name" itemprop="headline"><a href="{url}" class="u-url" itemprop="url">{esc(p.title)}</a></h1>
        {date_meta(p)}
      </header>
      <section class="page__content e-content" itemprop="text">
{body_html(p, "h2", "language-plaintext highlighter-rouge")}
      </section>
      <footer class="page__meta">
        {taxonomy("Tags", "tags", p.tags, "tags")}
        {taxonomy("Categories", "folder-open", p.categories, "categories")}
        <p class="page__date"><strong><i class="fas fa-fw fa-calendar-alt" aria-hidden="true"></i> Updated:</strong> <time class="dt-published" datetime="{iso(p.when)}">{us_date(p.when)}</time></p>
      </footer>
      <section class="page__share">
        <h4 class="page__share-title">Share on</h4>
        <a href="https://twitter.com/intent/tweet?text={quote(p.title)}%20{share}" class="btn btn--twitter" title="Share on Twitter"><span> Twitter</span></a>
        <a href="https://www.facebook.com/sharer/sharer.php?u={share}" class="btn btn--facebook" title="Share on Facebook"><span> Facebook</span></a>
      </section>
      <nav class="pagination">{pager}</nav>
    </div>
{comments_html(p)}
  </article>
  <div class="page__related">
    <h2 class="page__related-title">You may also enjoy</h2>
    <div class="grid__wrapper">
{chr(10).join(archive_item(q, "h2") for q in related)}
    </div>
  </div>
</div>"""
        return layout(f"{esc(p.title)} - {site}", main, head, "single")

    def listing_page(title: str, heading: str, body: str, url: str, layout_class: str = "archive") -> Page:
        head = f"""<meta name="description" content="Notes from a small flat full of sensors.">
<meta property="og:type" content="website">
<meta property="og:locale" content="en_US">
<meta property="og:site_name" content="{site}">
<meta property="og:title" content="{attr(title)}">
<meta property="og:url" content="{url}">
<link rel="canonical" href="{url}">"""
        main = f"""<div id="main" role="main">
{sidebar()}
  <div class="archive">
    <h1 class="page__title">{esc(heading)}</h1>
{body}
  </div>
</div>"""
        return layout(title, main, head, layout_class)

    routes: dict = {
        "/assets/css/main.css": CSS,
        "/assets/js/main.min.js": text_page("/* minimal mistakes */\n", "application/javascript"),
        "/assets/images/bio-photo.png": file_page(png_image(4, 4), "image/png"),
    }
    def page_url(k: int) -> str:
        return "/" if k == 1 else f"/page{k}/"

    pages = chunks(posts, 3)
    for n, items in enumerate(pages, 1):
        lis = [f'<li><a href="{page_url(n - 1)}">Previous</a></li>' if n > 1
               else '<li><a href="#" class="disabled"><span aria-hidden="true">Previous</span></a></li>']
        lis += [f'<li><a href="#" class="disabled current">{k}</a></li>' if k == n else f'<li><a href="{page_url(k)}">{k}</a></li>'
                for k in range(1, len(pages) + 1)]
        lis.append(f'<li><a href="{page_url(n + 1)}">Next</a></li>' if n < len(pages)
                   else '<li><a href="#" class="disabled"><span aria-hidden="true">Next</span></a></li>')
        body = ('<h3 class="archive__subtitle">Recent posts</h3>\n<div class="entries-list">\n'
                + "\n".join(archive_item(p) for p in items)
                + f'\n</div>\n<nav class="pagination"><ul>{"".join(lis)}</ul></nav>')
        title = site if n == 1 else f"{site} - Page {n}"
        routes[page_url(n)] = listing_page(title, site if n == 1 else f"Page {n} of {len(pages)}", body, f"{base}{page_url(n)}", "home")
    for p in posts:
        routes[p.path] = post_page(p)

    def grouped(groups: dict[str, list[Post]]) -> str:
        index = "".join(f'<li><a href="#{slugify(k)}"><strong>{esc(k)}</strong> <span class="taxonomy__count">{len(v)}</span></a></li>' for k, v in groups.items())
        sections = "\n".join(
            f'<section id="{slugify(k)}" class="taxonomy__section"><h2 class="archive__subtitle">{esc(k)}</h2><div class="entries-list">'
            + "".join(archive_item(p, "h3") for p in v[::-1]) + '</div><a href="#page-title" class="back-to-top">Back to top &uarr;</a></section>'
            for k, v in groups.items())
        return f'<ul class="taxonomy__index">{index}</ul>\n{sections}'

    routes["/tags/"] = listing_page(f"Posts by Tag - {site}", "Posts by Tag", grouped(tags), f"{base}/tags/")
    routes["/categories/"] = listing_page(f"Posts by Category - {site}", "Posts by Category", grouped(cats), f"{base}/categories/")
    years = group_by(posts, lambda p: [str(p.when.year)])
    routes["/year-archive/"] = listing_page(f"Posts by Year - {site}", "Posts by Year", "\n".join(
        f'<section id="{y}" class="taxonomy__section"><h2 class="archive__subtitle">{y}</h2><div class="entries-list">'
        + "".join(archive_item(p, "h3") for p in v) + "</div></section>" for y, v in years.items()), f"{base}/year-archive/")
    routes["/about/"] = listing_page(f"About - {site}", "About", f"""<div class="page__content">
<p>I am {author}, an electrical engineer who got distracted by software. This blog collects small home projects: sensors, dashboards and the occasional soldering accident.</p>
<p>Everything here runs in a one-bedroom flat in Toronto, on hardware that mostly came from drawers of old parts.</p>
</div>""", f"{base}/about/", "single")
    routes["/robots.txt"] = text_page(f"User-agent: *\nAllow: /\n\nSitemap: {base}/sitemap_index.xml\n")
    last = iso(posts[0].when)
    routes["/sitemap_index.xml"] = xml_page(f"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap>
    <loc>{base}/sitemap-posts.xml.gz</loc>
    <lastmod>{last}</lastmod>
  </sitemap>
  <sitemap>
    <loc>{base}/sitemap-pages.xml</loc>
    <lastmod>{last}</lastmod>
  </sitemap>
</sitemapindex>
""")
    urls = "\n".join(f"  <url>\n    <loc>{base}{p.path}</loc>\n    <lastmod>{iso(p.when)}</lastmod>\n  </url>" for p in posts)
    routes["/sitemap-posts.xml.gz"] = gzip_page(f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
{urls}
</urlset>
""")
    page_urls = "\n".join(f"  <url>\n    <loc>{base}{path}</loc>\n  </url>" for path in ["/", "/about/", "/tags/", "/categories/", "/year-archive/"])
    routes["/sitemap-pages.xml"] = xml_page(f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
{page_urls}
</urlset>
""")
    not_found = listing_page(f"Page Not Found - {site}", "Page Not Found",
                             "<p>Sorry, but the page you were trying to view does not exist.</p>", f"{base}/404.html", "single")
    not_found.status = 404
    return Blog(
        name="jekyll",
        host=host,
        home=f"{base}/",
        routes=routes,
        posts=[truth(p, host, "en") for p in posts],
        non_posts=["/", "/page2/", "/page3/", "/tags/", "/categories/", "/year-archive/", "/about/"],
        never_fetched=[],
        aliases={},
        lang="en",
        zone="-05:00",
        feeds=[],
        sitemaps=[f"{base}/sitemap_index.xml"],
        not_found=not_found,
        quirks=[
            "no feed at all: every feed URL is a 404 (an HTML 404 page)",
            "posts are discoverable from robots.txt -> sitemap index -> gzip sitemap, and from /page2/, /page3/",
            "/sitemap-posts.xml.gz is gzip bytes served as application/x-gzip without Content-Encoding",
            "JSON-LD BlogPosting beside a site-wide JSON-LD Person on every page (about included)",
            "categories are rel=tag links too; JSON-LD keywords and 'Tags:' are the tags",
            "post pages contain other <article>s (related posts, comments) with their own <time>",
            "offsets -05:00/-04:00; 2024-01-07 21:15 -05:00 is 2024-01-08 in UTC",
        ],
    )


# ============================================================================================
# f. Trap blog: every way a crawler can go wrong
# ============================================================================================

TRAP_POSTS: list[dict[str, Any]] = [
    {"slug": "small-web", "when": "2019-01-20 12:30 +00:00", "title": "In Praise of the Small Web",
     "tags": ["small-web", "community"],
     "intro": "This post first appeared on my old blog, which lived on a free hosting service that has since shut down. [[The small web is made of personal sites that load fast, track nobody and change only when their authors have something to say.]] I still believe that, years later.",
     "detail": "Finding these sites is the hard part, because search engines rarely rank them. Webrings, blogrolls and plain old links from one person to another still work better than any algorithm I have tried. Every time I add a link to my own blogroll, I feel like I am leaving a door open."},
    {"slug": "link-rot", "when": "2024-02-02 18:00 +00:00", "title": "Measuring Link Rot on My Own Blog",
     "tags": ["archiving", "links"],
     "intro": "Out of curiosity, I checked every outgoing link on this blog, and the result was sobering. [[Of the links I published five years ago, roughly a third no longer lead where they used to, and some now lead somewhere much worse.]] Link rot is not a theory; it is a measurable decay.",
     "detail": "The checker was a short script that followed each link, recorded the final status and compared the page title with the one I had saved. Redirects to a home page counted as broken, because the content I linked to was gone. I now save a copy of anything I link to, and link to the archive when the original disappears.",
     "code": "curl -s -o /dev/null -w '%{http_code} %{url_effective}' -L \"$url\""},
    {"slug": "static-search", "when": "2024-04-09 21:10 +10:00", "title": "Search for a Static Site in Forty Lines",
     "tags": ["search", "javascript"],
     "intro": "A static site has no server to run a query against, so search usually gets dropped first. [[This blog now has a search box powered by a small JSON index generated at build time and about forty lines of JavaScript in the browser.]] It is not Google, but it finds the post I half remember.",
     "detail": "The index holds the title, the date, the tags and the first two hundred words of each post, which keeps it under a hundred kilobytes. The script lowercases the query, splits it into words and ranks posts by how many words match the title and how many match the text. Results appear as you type.",
     "code": "const hits = index.filter(p => words.every(w => p.text.includes(w)));"},
    {"slug": "crawler-etiquette", "when": "2024-05-01 09:00 +00:00", "title": "Crawler Etiquette for Hobbyists",
     "tags": ["crawling", "robots"],
     "intro": "Writing a crawler is a rite of passage, and so is getting banned by the first site you point it at. [[A polite crawler reads robots.txt, sends a User-Agent with a way to contact you, and waits between requests even when the server could take more.]] None of this is hard, but all of it is easy to forget.",
     "detail": "Crawlers also need to know when to stop. Calendars that link to the next month forever, session ids in every link and endless filter combinations can trap a naive crawler for days. A page limit per site, a normalized form of every URL and a refusal to follow links with session parameters keep the crawl finite."},
    {"slug": "feeds-are-not-dead", "when": "2024-06-12 16:30 +00:00", "title": "Feeds Are Not Dead",
     "tags": ["rss", "reading"],
     "intro": "Every year someone declares RSS dead, and every year my feed reader fills up with new posts anyway. [[Feeds are the quietest technology on the web: they let you follow people without an account, an algorithm or an advertisement in between.]] My reader holds two hundred feeds and never tells me what to think.",
     "detail": "Most blogs still publish a feed, even when the theme hides the link. Looking for a link element with rel alternate in the page head usually finds it, and common paths such as feed, rss.xml and atom.xml cover most of the rest. I wish more sites listed the full text instead of a teaser."},
]
# Links that reach a post through another URL form, placed in post bodies.
TRAP_SEE_ALSO = {
    "crawler-etiquette": 'Related: <a href="/post/link-rot">Measuring Link Rot</a>, <a href="/post/link-rot/index.html">the link rot numbers</a> and <a href="/post/small-web/">In Praise of the Small Web</a>.',
    "feeds-are-not-dead": 'Earlier: <a href="/2019/01/old-slug.html">my first post on the small web</a>, <a href="/post/link-rot/#comments">the link rot discussion</a> and <a href="/go/static-search/">how search works here</a>.',
}
SECRET_PHRASE = "If you are reading this sentence in an archive, the crawler ignored robots.txt."
MONTH_PARAM = re.compile(r"(-?\d+)-(\d{2})")


def month_shift(year: int, month: int, by: int) -> tuple[int, int]:
    """(year, month) moved by ``by`` months, for any integer year (no datetime bounds)."""
    y, m = divmod(year * 12 + month - 1 + by, 12)
    return y, m + 1


def month_text(year: int, month: int) -> str:
    return f"{year:04d}-{month:02d}"


def trap_blog() -> Blog:
    """"Small Web Field Notes" by Robin Vale: a Hugo-like English blog full of traps.

    * 5 posts ``/post/<slug>/`` with og:type=article, article:published_time, canonical.
    * one post, many URLs: ``/post/link-rot/`` is linked as ``/post/link-rot`` (301 to the
      slash form, relative Location), ``/post/link-rot/index.html`` (200, canonical),
      ``/post/link-rot/?utm_source=twitter&utm_medium=social`` (200), ``/post/link-rot/#comments``
      and ``HTTP://TRAP.TEST:80/post/link-rot/``; the feed links every post with
      ``?utm_source=rss&utm_medium=feed`` (its guid is the canonical URL).
    * ``/2019/01/old-slug.html`` answers 301 to ``http://trap.test/post/small-web/``;
      ``/go/static-search/`` is a Hugo alias page (meta refresh) to ``/post/static-search/``.
    * robots.txt disallows ``/private/``; ``/private/secret-post/`` looks exactly like a post
      (og:type=article, a date, comments) and the home page links to it. Its text holds
      ``SECRET_PHRASE`` (in ``forbidden_phrases``).
    * a calendar widget on every page links ``/calendar/?month=YYYY-MM``; each calendar page
      links the previous and next month, for any year (0000-12, 10000-01, -001-05 ...).
    * every page links ``/archive/?sid=<16 hex>`` etc. with new session ids on every request.
    * a PDF ``/files/paper.pdf`` (application/pdf), an image ``/images/diagram.png``, mailto:,
      tel: and javascript: links, a dead link ``/post/deleted-post/`` (404), an off-site link.
    * every HTML page is rendered on request (the session ids change), through callables.
    """
    host, site, author = "trap.test", "Small Web Field Notes", "Robin Vale"
    base = f"http://{host}"
    specs = [dict(s, path=f"/post/{s['slug']}/", author=author) for s in TRAP_POSTS]
    posts = make_posts(
        specs, seed="trap", pool=EN_TECH_POOL, comments=EN_TECH_COMMENTS, shorts=EN_SHORT_COMMENTS,
        names=EN_NAMES, first_comment_id=500, headings=["Notes", "Why it matters", "Further thoughts"],
    )
    secret = Post(
        path="/private/secret-post/", title="Draft: Notes I Am Not Ready to Publish", author=author,
        when=moment("2024-06-20 08:00 +00:00"), tags=["drafts"], categories=[],
        paras=["This draft is not meant to be read yet, and it sits in a folder that robots.txt closes to crawlers. "
               + SECRET_PHRASE + " Everything below is a list of half-formed ideas.",
               ("Ideas: a webring for people who write about archiving; a tool that checks my outgoing links every week; "
               "a page that lists every site I have linked to and whether it is still alive."),
               "None of this is ready, and some of it never will be.", "Please come back later."],
        phrase=SECRET_PHRASE, heading="Ideas", code=None,
        comments=[Comment(999, "Robin Vale", "Note to self: finish this before the summer.", moment("2024-06-21 08:00 +00:00"))],
    )
    by_month = group_by(posts, lambda p: [f"{p.when:%Y-%m}"])
    by_year = group_by(posts, lambda p: [str(p.when.year)])
    tags = group_by(sorted(posts, key=lambda p: p.when), lambda p: p.tags)
    latest = f"{posts[0].when:%Y-%m}"
    sid_rng, sid_lock = random.Random("trap-sid"), threading.Lock()

    def sid() -> str:
        with sid_lock:
            return f"{sid_rng.getrandbits(64):016x}"

    def calendar_widget(year: int, month: int) -> str:
        py, pm = month_shift(year, month, -1)
        ny, nm = month_shift(year, month, 1)
        caption = (f'<a href="/calendar/?month={month_text(py, pm)}" rel="prev" title="Previous month">&laquo; {MONTHS[pm - 1][:3]}</a> '
                   f'{MONTHS[month - 1]} {year} '
                   f'<a href="/calendar/?month={month_text(ny, nm)}" rel="next" title="Next month">{MONTHS[nm - 1][:3]} &raquo;</a>')
        rows = ""
        if 1 <= year <= 9999:
            days = {p.when.day: p for p in by_month.get(month_text(year, month), [])}
            for week in calendar.monthcalendar(year, month):
                cells = "".join(
                    "<td></td>" if d == 0 else
                    f'<td class="has-post"><a href="{days[d].path}" title="{attr(days[d].title)}">{d}</a></td>' if d in days else
                    f"<td>{d}</td>" for d in week)
                rows += f"<tr>{cells}</tr>"
        head = "".join(f"<th>{d}</th>" for d in ("Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"))
        return (f'<div class="widget widget-calendar"><table class="calendar"><caption>{caption}</caption>'
                f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>")

    def layout(title: str, main: str, head: str = "", month: str = latest) -> Page:
        match = MONTH_PARAM.fullmatch(month)
        assert match, month
        year, mon = (int(x) for x in match.groups())
        archives = "".join(f'<li><a href="/archive/{y}/?sid={sid()}">{y}</a></li>' for y in by_year)
        text = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
{head}
<link rel="alternate" type="application/rss+xml" title="{site}" href="/index.xml">
<link rel="stylesheet" href="/css/site.css">
</head>
<body>
<header class="site-header">
  <a class="brand" href="/">{site}</a>
  <nav class="menu">
    <a href="/about/">About</a>
    <a href="/archive/?sid={sid()}">Archive</a>
    <a href="/tags/?sid={sid()}">Tags</a>
    <a href="javascript:void(0)" onclick="toggleTheme()">Dark mode</a>
  </nav>
</header>
<div class="wrap">
<main id="content">
{main}
</main>
<aside class="sidebar">
  {calendar_widget(year, mon)}
  <div class="widget widget-popular"><h3>Popular</h3><ul>
    <li><a href="/post/link-rot/?utm_source=twitter&amp;utm_medium=social">Measuring Link Rot on My Own Blog</a></li>
    <li><a href="HTTP://TRAP.TEST:80/post/link-rot/">Link rot, by the numbers</a></li>
    <li><a href="/go/static-search/">Search for a static site</a></li>
    <li><a href="/2019/01/old-slug.html">In Praise of the Small Web (2019)</a></li>
  </ul></div>
  <div class="widget widget-archive"><h3>Archives</h3><ul>{archives}</ul></div>
</aside>
</div>
<footer class="site-footer">
  <p>Write to <a href="mailto:robin@trap.test">robin@trap.test</a> or call <a href="tel:+15555550123">+1 555 555 0123</a>.
  <a href="/index.xml">RSS</a> &middot; <a href="/files/paper.pdf">My paper on link rot (PDF)</a> &middot; <a href="javascript:window.print()">Print this page</a></p>
</footer>
<script src="/js/theme.js"></script>
</body>
</html>
"""
        return html_page(text)

    def post_head(p: Post) -> str:
        return "\n".join([
            f'<meta name="author" content="{attr(p.author)}">',
            f'<meta name="description" content="{attr(p.intro.split(". ")[0])}.">',
            '<meta property="og:type" content="article">',
            f'<meta property="og:title" content="{attr(p.title)}">',
            f'<meta property="og:url" content="{base}{p.path}">',
            f'<meta property="og:site_name" content="{site}">',
            f'<meta property="article:published_time" content="{iso_z(p.when) if p.when.utcoffset() == timedelta(0) else iso(p.when)}">',
            *[f'<meta property="article:tag" content="{attr(t)}">' for t in p.tags],
            f'<link rel="canonical" href="{base}{p.path}">',
        ])

    def post_main(p: Post) -> str:
        see_also = TRAP_SEE_ALSO.get(p.path.split("/")[2], "")
        body = body_html(p, "h2") + (f'\n<p class="see-also">{see_also}</p>' if see_also else "")
        tag_links = " ".join(f'<a rel="tag" href="/tags/{t}/">{esc(t)}</a>' for t in p.tags)
        comments = "\n".join(f"""  <div class="comment" id="c{c.id}">
    <p class="comment-author"><strong>{esc(c.name)}</strong> wrote on <time datetime="{iso(c.when)}">{us_date(c.when)}</time>:</p>
    <blockquote><p>{esc(c.text)}</p></blockquote>
  </div>""" for c in p.comments)
        return f"""<article class="post h-entry">
  <header>
    <h1 class="p-name">{esc(p.title)}</h1>
    <p class="meta">By <a class="p-author h-card" href="/about/">{esc(p.author)}</a> on <time class="dt-published" datetime="{iso(p.when)}">{us_date(p.when)}</time></p>
  </header>
  <div class="e-content">
{body}
  </div>
  <p class="tags">Tagged: {tag_links}</p>
</article>
<section id="comments" class="comments">
  <h2>{plural(len(p.comments), "Comment")}</h2>
{comments}
  <p><a href="mailto:robin@trap.test?subject=Re:%20{quote(p.title)}">Reply by email</a></p>
</section>"""

    def post_route(p: Post) -> Callable:
        return lambda path, query: layout(f"{esc(p.title)} &middot; {site}", post_main(p), post_head(p), f"{p.when:%Y-%m}")

    def post_list(items: list[Post]) -> str:
        return "<ul class=\"post-list\">\n" + "\n".join(
            f'<li><a href="{p.path}">{esc(p.title)}</a> <span class="date">{us_date(p.when)}</span></li>' for p in items) + "\n</ul>"

    def home() -> Page:
        summaries = "\n".join(f"""<article class="summary">
  <h2><a href="{p.path}">{esc(p.title)}</a></h2>
  <p class="date">{us_date(p.when)}</p>
  <p>{esc(p.intro.split(". ")[0])}. <a href="{p.path}">Read on &rarr;</a></p>
</article>""" for p in posts)
        main = f"""<h1 class="visually-hidden">{site}</h1>
{summaries}
<section class="notes">
  <p>Sneak peek: <a href="/private/secret-post/">a draft I am working on</a>.</p>
  <figure><a href="/images/diagram.png"><img src="/images/diagram.png" alt="Link rot over five years"></a><figcaption>Links that still work, by year of publication.</figcaption></figure>
  <p>Gone but not forgotten: <a href="/post/deleted-post/">a post I took down</a>. My friend keeps <a href="http://elsewhere.test/blogroll/">a wonderful blogroll</a>.</p>
</section>"""
        head = f'<meta property="og:type" content="website">\n<link rel="canonical" href="{base}/">'
        return layout(site, main, head)

    def calendar_page(path: str, query: str) -> Page | None:
        values = parse_qs(query).get("month")
        match = MONTH_PARAM.fullmatch(values[0]) if values else None
        if values and not match:
            return None
        year, mon = (int(x) for x in match.groups()) if match else (int(latest[:4]), int(latest[5:]))
        if not 1 <= mon <= 12:
            return None
        items = by_month.get(month_text(year, mon), [])
        listing = post_list(items) if items else "<p>Nothing was published this month.</p>"
        main = f'<h1>Archive for {MONTHS[mon - 1]} {year}</h1>\n{listing}'
        return layout(f"{MONTHS[mon - 1]} {year} &middot; {site}", main, '<meta name="robots" content="noindex">', month_text(year, mon))

    def simple(title: str, main: str) -> Callable:
        return lambda path, query: layout(f"{title} &middot; {site}", main, '<meta property="og:type" content="website">')

    routes: dict = {
        "/": lambda path, query: home(),
        "/robots.txt": text_page("# Small Web Field Notes\nUser-agent: *\nDisallow: /private/\n\nUser-agent: GPTBot\nDisallow: /\n"),
        "/css/site.css": CSS,
        "/js/theme.js": text_page("function toggleTheme(){document.body.classList.toggle('dark')}\n", "application/javascript"),
        "/files/paper.pdf": file_page(pdf_file("Link rot on a personal blog, 2019-2024"), "application/pdf"),
        "/images/diagram.png": file_page(png_image(8, 6), "image/png"),
        "/calendar/": calendar_page,
        "/2019/01/old-slug.html": redirect(f"{base}/post/small-web/", 301),
        "/go/static-search/": html_page(f"""<!DOCTYPE html><html lang="en-us"><head><title>{base}/post/static-search/</title><link rel="canonical" href="{base}/post/static-search/"><meta name="robots" content="noindex"><meta charset="utf-8"><meta http-equiv="refresh" content="0; url={base}/post/static-search/"></head></html>
"""),
        "/about/": simple("About", f"""<h1>About</h1>
<p>I am {author}. I write about the small web, archiving and the tools that keep personal sites alive.</p>
<p>You can reach me by <a href="mailto:robin@trap.test">email</a>. I read everything.</p>"""),
        "/archive/": simple("Archive", "<h1>Archive</h1>\n" + post_list(posts)),
        "/tags/": simple("Tags", "<h1>Tags</h1>\n<ul>" + "".join(f'<li><a href="/tags/{t}/">{t}</a> ({len(v)})</li>' for t, v in tags.items()) + "</ul>"),
        secret.path: post_route(secret),
    }
    for y, items in by_year.items():
        routes[f"/archive/{y}/"] = simple(f"Archive {y}", f"<h1>Posts from {y}</h1>\n" + post_list(items))
    for t, items in tags.items():
        routes[f"/tags/{t}/"] = simple(f"Tagged {t}", f"<h1>Tagged {t}</h1>\n" + post_list(items[::-1]))
    for p in posts:
        routes[p.path] = post_route(p)
        routes[p.path + "index.html"] = post_route(p)
        routes[p.path.rstrip("/")] = redirect(p.path, 301)

    def feed_item(p: Post) -> str:
        content = body_html(p)
        return f"""    <item>
      <title>{esc(p.title)}</title>
      <link>{base}{p.path}?utm_source=rss&amp;utm_medium=feed</link>
      <pubDate>{rfc822(p.when)}</pubDate>
      <guid>{base}{p.path}</guid>
      <description>{esc(content)}</description>
    </item>"""

    routes["/index.xml"] = xml_page(f"""<?xml version="1.0" encoding="utf-8" standalone="yes"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
  <channel>
    <title>{site}</title>
    <link>{base}/</link>
    <description>Recent content on {site}</description>
    <generator>Hugo</generator>
    <language>en-us</language>
    <lastBuildDate>{rfc822(posts[0].when)}</lastBuildDate>
    <atom:link href="{base}/index.xml" rel="self" type="application/rss+xml" />
{chr(10).join(feed_item(p) for p in posts)}
  </channel>
</rss>
""", "application/rss+xml")
    link_rot = "/post/link-rot/"
    aliases = {
        "/post/link-rot": link_rot,
        "/post/link-rot/index.html": link_rot,
        "/post/link-rot/?utm_source=twitter&utm_medium=social": link_rot,
        "/2019/01/old-slug.html": "/post/small-web/",
        "/go/static-search/": "/post/static-search/",
        **{f"{p.path}?utm_source=rss&utm_medium=feed": p.path for p in posts},
    }
    return Blog(
        name="trap",
        host=host,
        home=f"{base}/",
        routes=routes,
        posts=[truth(p, host, "en") for p in posts],
        non_posts=[
            "/", "/about/", "/archive/", "/tags/", "/calendar/",
            *[f"/archive/{y}/" for y in by_year], *[f"/tags/{t}/" for t in tags],
        ],
        never_fetched=["/private/"],
        aliases=aliases,
        lang="en",
        zone="+00:00",
        feeds=[f"{base}/index.xml"],
        alias_urls={
            "HTTP://TRAP.TEST:80/post/link-rot/": link_rot,
            f"{base}/post/link-rot/#comments": link_rot,
        },
        broken=["/post/deleted-post/"],
        forbidden_phrases=[SECRET_PHRASE],
        quirks=[
            "one post under six URL forms (no slash 301, index.html, utm, #fragment, HTTP://TRAP.TEST:80)",
            "feed links carry ?utm_source=rss&utm_medium=feed; guid is the canonical URL",
            "/2019/01/old-slug.html is a 301 to /post/small-web/ (published 2019)",
            "/go/static-search/ is a meta-refresh alias page",
            "/private/secret-post/ is disallowed by robots.txt yet linked from the home page",
            "/calendar/?month=YYYY-MM pages link prev/next months forever (any /calendar/ URL is a non-post)",
            "?sid=<16 hex> links change on every request: the URL space is infinite",
            "PDF, PNG, mailto:, tel:, javascript: links; a 404 link; an off-site link to elsewhere.test",
            "static-search is dated +10:00 (2024-04-09 21:10 = 11:10Z)",
        ],
    )


def all_blogs() -> list[Blog]:
    """Every test blog, freshly built."""
    return [typecho_blog(), writing_site(), hexo_chinese(), gbk_blog(), jekyll_blog(), trap_blog()]
