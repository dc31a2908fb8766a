"""Ground truth of the real blogs in ../shared/fixtures/real-blogs, and how to compare with it."""

import csv
import json
import re
import unicodedata
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import unquote, urlsplit

import yaml
from dateutil import parser as dateutil_parser

REAL_BLOGS = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "real-blogs"
# Zone of source dates that name none: the fixtures' README says Hexo's are UTC+8.
NAIVE_ZONES = {
    "adu-hexo-zh": timezone(timedelta(hours=8)),
    # Jekyll reads a date string in the site's zone, +08:00 on every page of this blog...
    "bruce30262-jekyll-en": timezone(timedelta(hours=8)),
}
# ...but Ruby's YAML reads a full timestamp (with seconds) without a zone as UTC.
YAML_TIMESTAMPS_UTC = {"bruce30262-jekyll-en"}
DASHES = re.compile(r"\s*(-{2,3}|[‐‑‒–—―])\s*")
QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‹": "'", "›": "'",
                        "“": '"', "”": '"', "„": '"', "«": '"', "»": '"'})


def blog_names() -> list[str]:
    return sorted(p.parent.name for p in REAL_BLOGS.glob("*/blog.json"))


def blog_info(name: str) -> dict:
    return json.loads((REAL_BLOGS / name / "blog.json").read_text())


def truth_posts(name: str) -> dict[str, dict]:
    """Post pages by decoded path (``/2016/05/19/CI-CD/``), with title and date."""
    text = (REAL_BLOGS / name / "truth-map.tsv").read_text(encoding="utf-8")
    posts = {}
    for row in csv.DictReader(text.splitlines(), delimiter="\t"):
        if row["site_path"]:
            path = "/" + row["site_path"].removesuffix("index.html")
            posts[path] = row
    return posts


def url_path(url: str) -> str:
    return unquote(urlsplit(url).path)


def norm_title(title: str | None) -> str:
    title = unicodedata.normalize("NFKC", title or "").translate(QUOTES)
    return " ".join(DASHES.sub(" - ", title).split())


def truth_day(name: str, row: dict) -> str | None:
    """The day, in UTC, the author published a post, from its front matter."""
    dt = truth_published(name, row)
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%d") if dt else None


def truth_published(name: str, row: dict) -> datetime | None:
    """When the author published a post, from its front matter, in the zone the generator applied."""
    matter = front_matter(name, row["source_path"])
    value = matter.get("publishDate") or matter.get("date") or row["date"]
    if not value:
        return None
    naive_zone = NAIVE_ZONES.get(name, timezone.utc)
    if isinstance(value, datetime):
        dt = value
        if name in YAML_TIMESTAMPS_UTC:
            naive_zone = timezone.utc
    else:
        dt = dateutil_parser.parse(str(value))
    return dt if dt.tzinfo else dt.replace(tzinfo=naive_zone)


def archived_day(published: str | None) -> str | None:
    if not published:
        return None
    return datetime.fromisoformat(published.replace("Z", "+00:00")).strftime("%Y-%m-%d")


def front_matter(name: str, source_path: str) -> dict:
    """The YAML front matter of one of the authors' source files ({} if unreadable)."""
    text = (REAL_BLOGS / name / "source" / source_path).read_text(encoding="utf-8")
    if not text.startswith("---"):
        return {}
    try:
        data = yaml.safe_load(text.split("---", 2)[1].replace("\t", "  "))
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def unescape_yaml(title: str) -> str:
    """truth-map keeps YAML's backslash escapes of quoted titles."""
    return title.replace('\\"', '"').replace("\\'", "'")


def as_list(value: object) -> list[str]:
    if not value:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


# How many of a post's tags its pages show: Hugo's OpenGraph template writes six
# of them as article:tag and shows no other tag list.
TAGS_SHOWN = {"andyibanez-hugo-en": 6}


def truth_tags(name: str, row: dict) -> set[str]:
    """The front matter's tags, lower-cased."""
    return {t.lower() for t in as_list(front_matter(name, row["source_path"]).get("tags"))}


def truth_categories(name: str, row: dict) -> set[str]:
    return {c.lower() for c in as_list(front_matter(name, row["source_path"]).get("categories"))}
