"""Single-page titles on WCXB: ``python -m bench.titles --data DIR --split dev|test``.

By hand, never in tests. For every page of the split it compares with the
benchmark's title:

- **extract**: what ``blogarchive extract --url URL`` prints as the title today
  (``crawler.extract.offline.extract_file``, called in-process on the page saved to a
  temporary file, exactly as the command does; no title when it prints no post);
- **trafilatura**: trafilatura's own title (``bare_extraction(page).title`` on the
  whole page, with the options ``extract_post`` uses);
- **choose_title**: ``crawler.judge.titles.choose_title`` over the title candidates
  ``extract_post`` builds (read while it runs) plus ``crawler.judge.titles.title_candidates``,
  with what the page itself says its site is called as site parts
  (``crawler.judge.titles.site_name_parts``: ``og:site_name``, ``application-name``,
  JSON-LD ``WebSite``/``Organization`` names, the host's name), since one page
  has no learned site name; like ``extract``, no title when ``extract`` prints no post.

Titles are compared after whitespace, NFKC and typographic quotes and dashes
are normalised, nothing else. Prints the three exact-match rates (overall and
per page type) and every miss: truth | choose_title | extract | trafilatura,
with the candidates.

The data (CC-BY-4.0, ~115 MB, not in this repository): the WCXB repository,
https://github.com/Murrough-Foley/web-content-extraction-benchmark (commit
c039d5ee9f5a, ``dev/`` and ``test/``, each ``ground-truth/NNNN.json`` and
``html/NNNN.html.gz``). ``--data`` or ``$WCXB_DIR`` names its root.

What ``extract_post`` gives is cached (``--cache``, default
``$TMPDIR/blogarchive-titles-SPLIT.json``), keyed by the source of
the modules it runs (``CACHE_KEYED_ON``); ``--no-cache`` redoes it. About 6 minutes
for the dev split on two cores.
"""

import argparse
import gzip
import hashlib
import json
import os
import sys
import tempfile
import unicodedata
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CACHE_KEYED_ON = ["crawler/extract/post.py", "crawler/judge/metadata.py", "crawler/judge/pages.py", "crawler/extract/offline.py",
                  "crawler/judge/article.py", "crawler/judge/site.py", "crawler/judge/titles.py", "bench/titles.py"]
TYPOGRAPHIC = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
})


def normalise(title: str | None) -> str:
    """What the comparison forgives: whitespace, NFKC, typographic quotes and dashes."""
    text = unicodedata.normalize("NFKC", title or "").translate(TYPOGRAPHIC)
    return " ".join(text.split())


def pages(data: Path, split: str) -> list[dict[str, Any]]:
    out = []
    for gt in sorted((data / split / "ground-truth").glob("*.json")):
        doc = json.loads(gt.read_text(encoding="utf-8"))
        out.append({
            "id": gt.stem,
            "url": doc.get("url"),
            "type": (doc.get("_internal") or {}).get("page_type", {}).get("primary"),
            "truth": (doc.get("ground_truth") or {}).get("title"),
            "html": str(data / split / "html" / f"{gt.stem}.html.gz"),
        })
    return out


def run_extract(page: dict[str, Any]) -> dict[str, Any]:
    """``blogarchive extract --url URL`` on one page, in-process, and what it saw on the way."""
    import crawler.extract.post as ex
    from crawler.extract.offline import extract_file

    seen: dict[str, Any] = {"found": None}
    real_choose = ex._choose_metadata

    def choose(post: Any, found: list[Any], *args: Any, **kwargs: Any) -> Any:
        seen["found"] = [(c.value, c.origin) for c in found if c.field == "title"]
        return real_choose(post, found, *args, **kwargs)

    ex._choose_metadata = choose
    fd, path = tempfile.mkstemp(suffix=".html")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(gzip.open(page["html"]).read())
        result = extract_file(path, page["url"])
    finally:
        os.unlink(path)
        ex._choose_metadata = real_choose
    return {
        "id": page["id"],
        "post": "error" not in result,
        "extract": result.get("title"),
        "trafilatura": trafilatura_title(page),
        "found": seen["found"],
    }


def trafilatura_title(page: dict[str, Any]) -> str | None:
    """trafilatura's own title for the whole page, with the options ``extract_post`` uses."""
    import copy

    from trafilatura import bare_extraction
    from w3lib.encoding import html_to_unicode

    from crawler.extract.post import EXTRACTOR

    _, text = html_to_unicode(None, gzip.open(page["html"]).read())
    options = copy.copy(EXTRACTOR)
    options.url = options.source = page["url"]
    doc = bare_extraction(text, options=options)
    return getattr(doc, "title", None)


def code_key() -> str:
    h = hashlib.sha256()
    for name in CACHE_KEYED_ON:
        h.update((ROOT / name).read_bytes())
    return h.hexdigest()[:16]


def extracted(todo: list[dict[str, Any]], cache_path: Path | None, workers: int) -> dict[str, dict[str, Any]]:
    key = code_key()
    cache: dict[str, Any] = {}
    if cache_path and cache_path.exists():
        stored = json.loads(cache_path.read_text(encoding="utf-8"))
        cache = stored["pages"] if stored.get("key") == key else {}
    missing = [p for p in todo if p["id"] not in cache]
    if missing:
        print(f"extracting {len(missing)} pages ({workers} workers)...", file=sys.stderr)
        with ProcessPoolExecutor(workers) as pool:
            for i, r in enumerate(pool.map(run_extract, missing, chunksize=4), 1):
                cache[r["id"]] = r
                if i % 100 == 0:
                    print(f"  {i}/{len(missing)}", file=sys.stderr)
        if cache_path:
            cache_path.write_text(json.dumps({"key": key, "pages": cache}, ensure_ascii=False), encoding="utf-8")
    return cache


def new_title(page: dict[str, Any], r: dict[str, Any]) -> tuple[tuple[str, str] | None, list[tuple[str, str]]]:
    """``choose_title`` on ``extract_post``'s title candidates plus ``title_candidates``."""
    from lxml import html as lxml_html
    from w3lib.encoding import html_to_unicode

    from crawler.judge.titles import choose_title, site_name_parts, title_candidates

    _, text = html_to_unicode(None, gzip.open(page["html"]).read())
    try:
        root = lxml_html.fromstring(text)
    except (ValueError, lxml_html.etree.ParserError):
        root = None
    found = [tuple(c) for c in (r["found"] or [])]
    if r["trafilatura"] and not any(o == "trafilatura" for _, o in found):
        found.append((r["trafilatura"], "trafilatura"))
    extra = title_candidates(root) if root is not None else []
    cands = found + extra
    site = site_name_parts(root, page["url"]) if root is not None else []
    return choose_title(cands, site_parts=site), cands


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.titles")
    parser.add_argument("--data", default=os.environ.get("WCXB_DIR"), help="WCXB's root (or $WCXB_DIR)")
    parser.add_argument("--split", choices=["dev", "test"], required=True)
    parser.add_argument("--cache", help="cache file for extract_post's results")
    parser.add_argument("--no-cache", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit", type=int, help="only the first N pages")
    parser.add_argument("--misses", choices=["new", "extract", "none"], default="new",
                        help="whose misses to list (default: choose_title's)")
    args = parser.parse_args(argv)
    if not args.data:
        parser.error("--data DIR or $WCXB_DIR: the root of a WCXB checkout (see this module's docstring)")
    data = Path(args.data)
    todo = [p for p in pages(data, args.split) if p["truth"]]
    if args.limit:
        todo = todo[: args.limit]
    cache_path = None if args.no_cache else Path(args.cache or Path(tempfile.gettempdir()) / f"blogarchive-titles-{args.split}.json")
    results = extracted(todo, cache_path, args.workers)

    score: Counter[str] = Counter()
    by_type: dict[str, Counter[str]] = {}
    misses = []
    for page in todo:
        r = results[page["id"]]
        chosen, cands = new_title(page, r)
        new = chosen[0] if chosen and r["post"] else None
        truth = normalise(page["truth"])
        hits = {
            "trafilatura": normalise(r["trafilatura"]) == truth,
            "extract": normalise(r["extract"]) == truth,
            "choose_title": normalise(new) == truth,
        }
        t = by_type.setdefault(page["type"], Counter())
        t["pages"] += 1
        score["pages"] += 1
        score["posts"] += r["post"]
        for name, hit in hits.items():
            score[name] += hit
            t[name] += hit
        which = {"new": "choose_title", "extract": "extract"}.get(args.misses)
        if which and not hits[which]:
            misses.append((page, r, chosen, cands))

    for page, r, chosen, cands in misses:
        print(f"--- {page['id']} ({page['type']}) {page['url']}")
        print(f"  truth        | {page['truth']}")
        print(f"  choose_title | {chosen[1] + ': ' + chosen[0] if chosen else None}{'' if r['post'] else '  (extract prints no post)'}")
        print(f"  extract      | {r['extract']}")
        print(f"  trafilatura  | {r['trafilatura']}")
        for value, origin in cands:
            print(f"    {origin:20} {value}")
    n = score["pages"]
    print(f"\nWCXB {args.split}: {n} pages with a title, {score['posts']} extracted as posts by `blogarchive extract`")
    for name in ("trafilatura", "extract", "choose_title"):
        print(f"  {name:13} title exact {score[name] / n:.3f} ({score[name]}/{n})")
    print("  per page type (pages: trafilatura / extract / choose_title):")
    for kind, t in sorted(by_type.items(), key=lambda kv: -kv[1]["pages"]):
        print(f"    {kind:14} {t['pages']:5}: " + " / ".join(f"{t[k] / t['pages']:.3f}" for k in ("trafilatura", "extract", "choose_title")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
