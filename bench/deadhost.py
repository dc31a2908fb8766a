"""A blog whose image host is dead: ``python -m bench.deadhost [--posts 30] [--images 300]``, by hand.

The bench blog of ``bench.blogs`` is written with ``--images`` images spread over its posts, all
on a host that never resolves (``.invalid``, RFC 2606), as a blog whose image host is gone. It is
crawled twice into fresh archives, in the same run, with the crawl's default politeness (its
delays and retries: what a dead host makes each image wait out), ``--media off`` and then with
the default ``--media all``: the ratio of the two is the row of docs/benchmarks.md (target 1.2 at
most). Writes bench/deadhost.json.
"""

import argparse
import json
import tempfile
from pathlib import Path

from bench.blogs import write_site
from bench.common import BIN, ROOT, crawl_media_modes, last_run, measured, served_site

DEAD = "img.invalid"


def add_dead_images(site: Path, images: int) -> int:
    """``images`` images on the dead host, spread over the site's posts; the posts that show them."""
    pages = sorted(site.glob("posts/*/*/*/index.html"))
    for n, page in enumerate(pages):
        shown = range(n * images // len(pages), (n + 1) * images // len(pages))
        tags = "".join(f'<p><img src="http://{DEAD}/{j}.jpg" alt="Photo {j}"></p>' for j in shown)
        text = page.read_text(encoding="utf-8")
        page.write_text(text.replace('<div class="content">', f'<div class="content">{tags}', 1), encoding="utf-8")
    return len(pages)


def crawl(db: Path, url: str, media: str) -> dict:
    _, usage = measured([str(BIN / "blogarchive"), "crawl", url, "--db", str(db), "--media", media, "--quiet"], cwd=ROOT)
    run = last_run(db)
    return {"seconds": round(usage["seconds"], 1), "peak_rss_mb": round(usage["peak_rss_mb"]),
            "requests": run["requests"], "pages": run["pages"], "errors": run["errors"]}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.deadhost")
    parser.add_argument("--posts", type=int, default=30)
    parser.add_argument("--images", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with served_site(work) as (site, base):
            write_site(site, args.posts, base)
            result: dict = {"posts": add_dead_images(site, args.images), "images": args.images}
            result.update(crawl_media_modes(work, lambda db, mode: crawl(db, f"{base}/", mode), "dead image host, media"))
    result["ratio"] = round(result["all"]["seconds"] / result["off"]["seconds"], 2)
    (ROOT / "bench" / "deadhost.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("posts", "images", "ratio")}))


if __name__ == "__main__":
    main()
