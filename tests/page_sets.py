"""Public single-page extraction benchmarks: blogarchive's extraction beside trafilatura's alone.

``python tests/page_sets.py [--sets DIR] [--only NAME] [--limit N] [--json FILE]``
(``make fidelity`` runs it too, and writes its table into docs/fidelity.md).

Each page of a set is given, as text, to ``crawler.extract.post.extract_post`` (the
crawl's own extraction, with no feed and no site to learn from) and to
``trafilatura.bare_extraction(html, include_comments=False)``, and both are scored
with the same measures:

- text F1: F1 of the bags of words of the extracted text and of the set's gold
  text (``fidelity.words``: lower-cased runs of letters and digits, CJK
  characters one by one), averaged over the set's pages; an empty page scores 0;
- empty: pages left without text, and of those, the pages where the other
  extractor keeps 200 characters or more;
- title exact: the title equal to the gold title after ``fidelity.title_key``,
  on pages whose gold has a title.

The sets are not in the repository (their pages belong to their sites): each is
a checkout of its public repository under ``DIR`` (``--sets``, else the
``BLOGARCHIVE_PAGE_SETS`` environment variable, else
``~/.cache/blogarchive/page-sets``); a set whose folder is missing is skipped.

- ``article-extraction-benchmark``: https://github.com/scrapinghub/article-extraction-benchmark
  (MIT): 181 news and blog articles, ``html/ID.html.gz`` and ``ground-truth.json``
  (``articleBody``; no titles).
- ``web-content-extraction-benchmark``: https://github.com/Murrough-Foley/web-content-extraction-benchmark
  (WCXB, CC-BY-4.0), its dev split: 1,497 pages of seven types,
  ``dev/html/ID.html.gz`` and ``dev/ground-truth/ID.json`` (``main_content``, ``title``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:  # run as a command
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from fidelity import bag_f1, title_key, words  # noqa: E402
from trafilatura import bare_extraction  # noqa: E402

from crawler.extract.post import extract_post  # noqa: E402

DEFAULT_DIR = Path.home() / ".cache" / "blogarchive" / "page-sets"
# A page the other extractor keeps this many characters of is not one to leave empty.
KEPT_CHARS = 200


@dataclass
class Page:
    """One page of a set and its gold text and title."""

    id: str
    url: str
    html: str
    text: str
    title: str | None


def sets_dir(given: Path | None = None) -> Path:
    """Where the sets' checkouts are: ``given``, else ``BLOGARCHIVE_PAGE_SETS``, else the cache folder."""
    return given or Path(os.environ.get("BLOGARCHIVE_PAGE_SETS") or DEFAULT_DIR)


def _read_gz(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace")


def scrapinghub_pages(folder: Path) -> Iterator[Page]:
    """The article-extraction-benchmark's pages, in the order of its ``ground-truth.json``."""
    truth = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
    for key, gold in truth.items():
        yield Page(key, gold["url"], _read_gz(folder / "html" / f"{key}.html.gz"), gold["articleBody"], None)


def wcxb_pages(folder: Path) -> Iterator[Page]:
    """The dev split of WCXB, in the order of its file names."""
    for path in sorted((folder / "dev" / "ground-truth").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        gold = record["ground_truth"]
        yield Page(path.stem, record.get("url") or "", _read_gz(folder / "dev" / "html" / f"{path.stem}.html.gz"),
                   gold.get("main_content") or "", gold.get("title"))


# (name in the report, folder under the sets' directory, its pages)
SETS = [
    ("article-extraction-benchmark (scrapinghub, 181 articles)", "article-extraction-benchmark", scrapinghub_pages),
    ("WCXB dev split (1,497 pages, 7 types)", "web-content-extraction-benchmark", wcxb_pages),
]


def ours(page: Page) -> tuple[str, str | None]:
    """blogarchive's text and title for a page, as the crawl extracts them with nothing else to go on."""
    post = extract_post(page.url, page.html)
    return (post.text or "", post.title) if post is not None else ("", None)


def theirs(page: Page) -> tuple[str, str | None]:
    """trafilatura's text and title for a page, alone, comments left out."""
    doc = bare_extraction(page.html, url=page.url, include_comments=False, with_metadata=True)
    return (doc.text or "", doc.title) if doc is not None else ("", None)


def score_page(page: Page) -> dict:
    """Both extractors' measures on one page."""
    gold = words(page.text)
    row: dict = {"id": page.id}
    for name, extract in (("ours", ours), ("trafilatura", theirs)):
        text, title = extract(page)
        row[name] = {"f1": bag_f1(gold, words(text)), "chars": len(text.strip()),
                     "title": None if page.title is None else title_key(title) == title_key(page.title)}
    return row


def summarise(name: str, rows: list[dict]) -> dict:
    """A set's measures for each extractor, from its pages' rows."""
    out: dict = {"set": name, "pages": len(rows)}
    for who, other in (("ours", "trafilatura"), ("trafilatura", "ours")):
        titled = [r[who]["title"] for r in rows if r[who]["title"] is not None]
        out[who] = {
            "f1": sum(r[who]["f1"] for r in rows) / len(rows) if rows else None,
            "empty": sum(not r[who]["chars"] for r in rows),
            "empty_kept": sum(not r[who]["chars"] and r[other]["chars"] >= KEPT_CHARS for r in rows),
            "title": sum(titled) / len(titled) if titled else None,
        }
    return out


def score_sets(folder: Path, *, only: str | None = None, limit: int | None = None,
               log=print) -> list[dict]:
    """Every set found under ``folder`` scored (``only``: the sets whose folder name holds it)."""
    results = []
    for name, sub, pages in SETS:
        if only and only not in sub:
            continue
        if not (folder / sub).is_dir():
            log(f"{name}: skipped, no checkout at {folder / sub}")
            continue
        rows = []
        for i, page in enumerate(pages(folder / sub)):
            if limit is not None and i >= limit:
                break
            rows.append(score_page(page))
        result = summarise(name, rows)
        result["rows"] = rows
        log(summary_line(result))
        results.append(result)
    return results


def _f(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def summary_line(result: dict) -> str:
    o, t = result["ours"], result["trafilatura"]
    return (f"{result['set']}: text F1 {_f(o['f1'])} (trafilatura {_f(t['f1'])}), empty {o['empty']} "
            f"({o['empty_kept']} kept by trafilatura) / {t['empty']}, title exact {_f(o['title'])} "
            f"(trafilatura {_f(t['title'])})")


def table(results: list[dict]) -> list[str]:
    """The sets' Markdown table: one row per set, blogarchive beside trafilatura."""
    lines = ["| set | pages | blogarchive text F1 | trafilatura text F1 | pages left empty: blogarchive "
             "(of them kept by trafilatura) / trafilatura | title exact: blogarchive / trafilatura |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in results:
        o, t = r["ours"], r["trafilatura"]
        lines.append(f"| {r['set']} | {r['pages']} | {_f(o['f1'])} | {_f(t['f1'])} | "
                     f"{o['empty']} ({o['empty_kept']}) / {t['empty']} | {_f(o['title'])} / {_f(t['title'])} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", type=Path, help=f"the sets' checkouts (default $BLOGARCHIVE_PAGE_SETS or {DEFAULT_DIR})")
    parser.add_argument("--only", help="score only the sets whose folder name holds this")
    parser.add_argument("--limit", type=int, help="the first N pages of each set")
    parser.add_argument("--json", type=Path, help="write every page's measures here")
    args = parser.parse_args(argv)
    results = score_sets(sets_dir(args.sets), only=args.only, limit=args.limit)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    print("\n".join(table(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
