"""What post images cost: ``python -m bench.media [--posts 1000]``, by hand, never in tests.

The bench blog of ``bench.blogs`` is written with images added to every post:
a photo (JPEG, 800x600, noise over a gradient, quality 80) and a diagram (PNG,
flat shapes) of its own, the same header image on every page (the theme's,
never fetched), and every tenth post a third image shared with the others.
It is crawled twice into fresh archives, ``--media off`` and ``--media all``:
the archive's growth per 1,000 posts with media, and the crawl's slow-down.
Writes bench/media.json.
"""

import argparse
import io
import json
import random
import tempfile
from pathlib import Path

from PIL import Image, ImageDraw

from bench.blogs import write_site
from bench.common import ROOT, crawl, crawl_media_modes, served_site

SHARED = "/media/shared.png"


def photo(seed: int) -> bytes:
    rng = random.Random(seed)
    base = Image.linear_gradient("L").resize((800, 600)).convert("RGB")
    tint = Image.new("RGB", (800, 600), (rng.randrange(256), rng.randrange(256), rng.randrange(256)))
    noise = Image.effect_noise((800, 600), 24 + rng.randrange(24)).convert("RGB")
    out = io.BytesIO()
    Image.blend(Image.blend(base, tint, 0.5), noise, 0.3).save(out, format="JPEG", quality=80)
    return out.getvalue()


def diagram(seed: int) -> bytes:
    rng = random.Random(seed)
    picture = Image.new("RGB", (640, 360), "white")
    draw = ImageDraw.Draw(picture)
    for _ in range(8):
        x, y = rng.randrange(560), rng.randrange(300)
        draw.rectangle((x, y, x + 80, y + 50), outline="black", fill=(rng.randrange(256), 200, 220), width=2)
    out = io.BytesIO()
    picture.save(out, format="PNG", optimize=True)
    return out.getvalue()


def add_images(site: Path) -> dict[str, int]:
    """Images in every post page of the site; the bytes of each kind written."""
    (site / "media").mkdir()
    sizes = {"photo": 0, "diagram": 0, "shared": 0, "theme": 0}
    for name, body in (("shared", diagram(0)), ("theme", diagram(1))):
        (site / "media" / f"{name}.png").write_bytes(body)
        sizes[name] = len(body)
    for n, page in enumerate(sorted(site.glob("posts/*/*/*/index.html")), 1):
        (site / "media" / f"{n}.jpg").write_bytes(jpeg := photo(n))
        (site / "media" / f"{n}.png").write_bytes(png := diagram(n + 1))
        sizes["photo"] += len(jpeg)
        sizes["diagram"] += len(png)
        images = (f'<p><img src="/media/{n}.jpg" alt="Photo {n}"></p><p><img src="/media/{n}.png" alt="Diagram {n}"></p>'
                  + (f'<p><img src="{SHARED}" alt="Shared"></p>' if n % 10 == 0 else ""))
        text = page.read_text(encoding="utf-8")
        text = text.replace('<div class="content">', f'<div class="content">{images}', 1)
        page.write_text(text.replace("<body>", '<body><img src="/media/theme.png" alt="Field Notes">', 1), encoding="utf-8")
    for page in site.rglob("index.html"):
        if "/posts/" not in page.as_posix():
            text = page.read_text(encoding="utf-8")
            page.write_text(text.replace("<body>", '<body><img src="/media/theme.png" alt="Field Notes">', 1), encoding="utf-8")
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.media")
    parser.add_argument("--posts", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with served_site(work) as (site, base):
            _, posts = write_site(site, args.posts, base)
            written = add_images(site)
            result: dict = {"posts": len(posts), "image_bytes_served": written}
            result.update(crawl_media_modes(work, lambda db, mode: crawl(db, f"{base}/", "--media", mode), "media"))
    per_1000 = 1000 / len(posts)
    result["archive_growth_mb_per_1000_posts"] = round((result["all"]["db_mb"] - result["off"]["db_mb"]) * per_1000, 1)
    result["slowdown"] = round(result["all"]["seconds"] / result["off"]["seconds"], 2)
    (ROOT / "bench" / "media.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("archive_growth_mb_per_1000_posts", "slowdown")}))


if __name__ == "__main__":
    main()
