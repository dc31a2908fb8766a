"""What a browser costs: ``python -m bench.rendering [--posts 40]``, by hand, never in tests.

The same posts served three ways: as a static blog (each post its own HTML page, a home page that
lists them), as a docsify blog (the docsify of tests/rendered/docsify, each post a Markdown file,
a sidebar) and as a single-page app (the client of tests/rendered/spa, each post a JSON file). Each
is crawled into a fresh archive with no option given (``--render auto``), measured as the other
benchmarks are (bench.common): wall seconds, seconds per post, peak RSS and PSS of the crawl's
process tree, Playwright's driver and the browser's processes included. ``--memory-mb`` crawls them
with that budget. Writes bench/rendering.json.
"""

import argparse
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.common import ROOT, crawl, served_site

RENDERED = ROOT / "tests" / "rendered"
HOST = "rendered.test"
WORDS = ("river tide marsh gauge heron reed gravel bank station window feeder winter spring rain wind "
         "boat plank copper survey transect count notebook morning evening weather flood meadow").split()


def posts(count: int) -> list[dict[str, Any]]:
    rng = random.Random(37)
    made = []
    for i in range(count):
        title = f"Notes {i}: the {rng.choice(WORDS)} and the {rng.choice(WORDS)}"
        paragraphs = [" ".join(rng.choice(WORDS) for _ in range(60)).capitalize() + "." for _ in range(5)]
        made.append({"slug": f"notes-{i}", "title": title, "published": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T10:00:00Z",
                     "author": "A. Writer", "paragraphs": paragraphs})
    return made


def write_static(site: Path, made: list[dict[str, Any]]) -> None:
    links = "".join(f'<li><a href="/posts/{p["slug"]}/">{p["title"]}</a></li>' for p in made)
    (site / "index.html").write_text(f"<html><head><title>Notes</title></head><body><h1>Notes</h1><ul>{links}</ul></body></html>")
    for p in made:
        (site / "posts" / p["slug"]).mkdir(parents=True)
        text = "".join(f"<p>{t}</p>" for t in p["paragraphs"])
        (site / "posts" / p["slug"] / "index.html").write_text(
            f'<html><head><title>{p["title"]}</title></head><body><article><h1>{p["title"]}</h1>'
            f'<p>By {p["author"]} on <time datetime="{p["published"]}">{p["published"][:10]}</time></p>{text}</article></body></html>')


def write_docsify(site: Path, made: list[dict[str, Any]]) -> None:
    shutil.copy(RENDERED / "docsify" / "index.html", site)
    shutil.copy(RENDERED / "docsify" / "docsify.min.js", site)
    (site / "posts").mkdir()
    (site / "posts" / "README.md").write_text("# Notes\n\nA notebook rendered by docsify.\n")
    (site / "posts" / "_sidebar.md").write_text("".join(f"- [{p['title']}]({p['slug']}.md)\n" for p in made))
    for p in made:
        body = "\n\n".join(p["paragraphs"])
        (site / "posts" / f"{p['slug']}.md").write_text(f"# {p['title']}\n\nPublished {p['published'][:10]}\n\n{body}\n")


def write_spa(site: Path, made: list[dict[str, Any]]) -> None:
    shell = (RENDERED / "spa" / "index.html").read_text()
    shutil.copy(RENDERED / "spa" / "app.js", site)
    (site / "index.html").write_text(shell)
    (site / "api" / "posts").mkdir(parents=True)
    (site / "api" / "posts.json").write_text(json.dumps({"name": "Notes", "posts": [
        {k: p[k] for k in ("slug", "title", "published")} for p in made]}))
    for p in made:
        (site / "posts" / p["slug"]).mkdir(parents=True)
        (site / "posts" / p["slug"] / "index.html").write_text(shell)
        (site / "api" / "posts" / f"{p['slug']}.json").write_text(json.dumps(p))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--posts", type=int, default=40)
    parser.add_argument("--memory-mb", type=int, help="the crawls' memory budget (default: the crawl's own)")
    parser.add_argument("--blogs", default="static,docsify,spa", help="which of the three (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "rendering.json")
    args = parser.parse_args()
    made = posts(args.posts)
    results = {}
    for name, write in (("static", write_static), ("docsify", write_docsify), ("spa", write_spa)):
        if name not in args.blogs.split(","):
            continue
        with tempfile.TemporaryDirectory() as tmp, served_site(Path(tmp)) as (site, base):
            write(site, made)
            db = Path(tmp) / "archive.db"
            budget = ["--memory-mb", str(args.memory_mb)] if args.memory_mb else []
            result = crawl(db, f"http://{HOST}/", "--map-host", f"{HOST}={base}", *budget)
            result["s_per_post"] = result["seconds"] / max(result["posts"], 1)
            results[name] = result
            print(f"[{name}] {result['posts']} posts in {result['seconds']:.1f} s ({result['s_per_post']:.2f} s a post), "
                  f"peak RSS {result['peak_rss_mb']:.0f} MB, PSS {result['peak_pss_mb']:.0f} MB, "
                  f"{result['processes']} processes", file=sys.stderr)
    args.out.write_text(json.dumps({"posts": args.posts, "memory_mb": args.memory_mb, "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
