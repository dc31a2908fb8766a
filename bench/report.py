"""docs/benchmarks.md from bench/results.json: the table, the targets, and the notes kept between runs.

``python -m bench.report`` writes it again from the last results.
"""

import json
from pathlib import Path

NOTES_START = "<!-- notes: written by hand, kept by bench/run.py -->"


def _f(value: float, digits: int = 1) -> str:
    return f"{value:,.{digits}f}"


def _cpu_split(crawl: dict) -> str:
    """Milliseconds of CPU per page in each part of a crawl (``bench.run.Sampler``)."""
    if "cpu_split" not in crawl:
        return "-"
    parts = ("reactor", "crawl_threads", "workers", "command")
    return ", ".join(_f(1000 * crawl["cpu_split"][k] / max(crawl["pages"], 1)) for k in parts)


def table(runs: list[dict]) -> str:
    head = "| measure | " + " | ".join(f"{r['size']:,} posts" for r in runs) + " |"
    rows = [head, "|---|" + "---|" * len(runs)]

    def row(name: str, cell) -> None:
        rows.append(f"| {name} | " + " | ".join(cell(r) for r in runs) + " |")

    row("pages in the site (posts, listings, tags, about)", lambda r: f"{r['pages_in_site']:,}")
    row("extraction-only floor: posts/s (CPU s per post)",
        lambda r: f"{_f(r['extraction_floor']['posts_per_s'])} ({_f(r['extraction_floor']['cpu_s_per_post'], 4)})")
    row("fetch-only floor (Scrapy, no parsing): pages/s", lambda r: _f(r["fetch_floor"]["pages_per_s"]))
    row("full crawl: seconds", lambda r: _f(r["full_crawl"]["seconds"]))
    row("full crawl: pages/s (posts/s)",
        lambda r: f"{_f(r['full_crawl']['pages_per_s'])} ({_f(r['full_crawl']['posts_per_s'])})")
    row("full crawl: CPU s per page (all processes)", lambda r: _f(r["full_crawl"]["cpu_s_per_page"], 4))
    row("full crawl: the reactor thread (the crawl process's main thread), % busy",
        lambda r: f"{r['full_crawl']['reactor_busy']:.0%}" if "reactor_busy" in r["full_crawl"] else "-")
    row("full crawl: CPU ms per page: reactor thread, the crawl process's other threads (the writer), "
        "extraction workers, command line",
        lambda r: _cpu_split(r["full_crawl"]))
    row("full crawl: peak RSS, MB (all processes)", lambda r: _f(r["full_crawl"]["peak_rss_mb"], 0))
    row("full crawl: peak PSS, MB (all processes, each page counted once)",
        lambda r: _f(r["full_crawl"]["peak_pss_mb"], 0) if "peak_pss_mb" in r["full_crawl"] else "-")
    row("full crawl: database, MB", lambda r: _f(r["full_crawl"]["db_mb"]))
    row("full crawl: bytes per post, total (posts, versions, captures, trigram index, grams index)",
        lambda r: " ".join([f"{b['total']:,.0f}", f"({b['posts']:,.0f}, {b['versions']:,.0f}, {b['captures']:,.0f},",
                            f"{b['trigram index']:,.0f}, {b['grams index']:,.0f})"])
        if (b := r["full_crawl"].get("bytes_per_post")) else "-")
    row("full crawl: the test server's CPU s", lambda r: _f(r["full_crawl"]["server_cpu_seconds"]))
    row("recrawl, no change: seconds (requests)",
        lambda r: f"{_f(r['recrawl']['seconds'])} ({r['recrawl']['requests']})")
    row("`--recheck`: seconds (requests, extractions)",
        lambda r: f"{_f(r['recheck']['seconds'])} ({r['recheck']['requests']:,}, {r['recheck']['extractions']})")
    row("start-up: `blogarchive crawl` to its first request, seconds (median of 3)",
        lambda r: _f(r["startup"]["seconds"], 2) if "startup" in r else "-")
    row("start-up floor: Scrapy alone (`scrapy runspider`, one URL) to its request, seconds (median of 3)",
        lambda r: _f(r["startup"]["scrapy_floor_seconds"], 2) if "scrapy_floor_seconds" in r.get("startup", {}) else "-")
    row("after a change†: edits seen, deletions marked, new posts archived",
        lambda r: f"{r['changed']['edits_seen']}/{r['changed']['edited']}, {r['changed']['deletions_marked']}/"
                  f"{r['changed']['deleted']}, {r['changed']['added_archived']}/{r['changed']['added']}" if "changed" in r else "-")
    row("after a change†: seconds (requests, extractions)",
        lambda r: f"{_f(r['changed']['seconds'])} ({r['changed']['requests']}, {r['changed']['extractions']})"
                  if "changed" in r else "-")
    row("trafilatura CLI, sitemap mode*: seconds (URLs listed)",
        lambda r: f"{'> ' if r['trafilatura'].get('timed_out') else ''}{_f(r['trafilatura']['seconds'])} "
                  f"({r['trafilatura']['urls']:,}{', stopped' if r['trafilatura'].get('timed_out') else ''})")
    for name in runs[-1]["search"]:
        row(f"search `{name}`: median ms (rows)",
            lambda r, name=name: f"{_f(r['search'][name]['median_ms'])} "
                                 f"({r['search'][name].get('error') or r['search'][name]['rows']})")
    return "\n".join(rows)


def targets(runs: list[dict]) -> list[tuple[str, bool, str]]:
    """(target, met, measured) for each target the runs can tell."""
    out = []
    for r in runs:
        n = f"{r['size']:,} posts"
        ratio = r["full_crawl"]["posts_per_s"] / r["extraction_floor"]["posts_per_s"]
        out.append((f"full crawl ≥ 0.75 × extraction-only floor ({n})", ratio >= 0.75, f"{ratio:.2f} ×"))
        floors = r["extraction_floor"]["cpu_s_per_post"] + r["fetch_floor"]["cpu_s_per_page"]
        cpu = r["full_crawl"]["cpu_s_per_page"] / floors
        out.append((f"full crawl's CPU s per page ≤ 1.25 × (extraction floor's per post + fetch floor's per page) ({n})",
                    cpu <= 1.25, f"{cpu:.2f} ×"))
        pipeline = 1 / (1 / r["fetch_floor"]["pages_per_s"] + 1 / r["extraction_floor"]["posts_per_s"])
        pace = r["full_crawl"]["posts_per_s"] / pipeline
        out.append((f"full crawl's posts/s ≥ 0.85 × the pipeline floor, 1 / (1 / fetch floor + 1 / extraction floor) ({n})",
                    pace >= 0.85, f"{pace:.2f} × ({pipeline:.1f}/s)"))
        if "reactor_busy" in r["full_crawl"]:
            busy = r["full_crawl"]["reactor_busy"]
            out.append((f"the reactor thread ≤ 50 % busy during the full crawl ({n})", busy <= 0.5, f"{busy:.0%}"))
        speed = r["trafilatura"]["seconds"] / r["full_crawl"]["seconds"]
        at_least = "at least " if r["trafilatura"].get("timed_out") else ""
        out.append((f"faster than trafilatura's CLI ({n})", speed > 1, f"{at_least}{speed:.2f} × faster"))
        share = r["recrawl"]["seconds"] / r["full_crawl"]["seconds"]
        out.append((f"no-change recrawl ≤ 2 % of the full crawl ({n})", share <= 0.02, f"{share:.1%}"))
        out.append((f"no-change recrawl ≤ 10 requests per source ({n})", r["recrawl"]["requests"] <= 10,
                    f"{r['recrawl']['requests']} requests"))
        out.append((f"`--recheck` re-extracts nothing ({n})", r["recheck"]["extractions"] == 0,
                    f"{r['recheck']['extractions']} extractions"))
        if "startup" in r:
            floor = r["startup"].get("scrapy_floor_seconds")
            out.append((f"first request ≤ 0.4 s after `blogarchive crawl` starts ({n})", r["startup"]["seconds"] <= 0.4,
                        f"{r['startup']['seconds']:.2f} s" + (f" (Scrapy alone: {floor:.2f} s)" if floor else "")))
        if "changed" in r:
            c = r["changed"]
            out.append((f"the default crawl after a change sees every announced edit, marks every deletion ({n})",
                        c["edits_seen"] == c["edited"] and c["deletions_marked"] == c["deleted"],
                        f"{c['edits_seen']}/{c['edited']} edits, {c['deletions_marked']}/{c['deleted']} deletions"))
    sizes = {r["size"]: r for r in runs}
    if 1000 in sizes:
        peak = sizes[1000]["full_crawl"]["peak_rss_mb"]
        out.append(("peak RSS of the process tree < 350 MB at 1,000 posts", peak < 350, f"{peak:,.0f} MB"))
    if 1000 in sizes and 10000 in sizes:
        growth = sizes[10000]["full_crawl"]["peak_rss_mb"] / sizes[1000]["full_crawl"]["peak_rss_mb"]
        out.append(("peak RSS at 10,000 posts ≤ 1.3 × at 1,000", growth <= 1.3, f"{growth:.2f} ×"))
    if 10000 in sizes:
        for way, what in (("api", "the JSON API, `_nocount=1&_nofacet=1`, 3 columns"), ("table", "with count and facets"),
                          ("canned", "the `search` canned query")):
            medians = [v["median_ms"] for k, v in sizes[10000]["search"].items() if k.startswith(f"{way} ")]
            if medians:
                worst = max(medians)
                out.append((f"search median ≤ 50 ms at 10,000 posts, {what} (slowest term)", worst <= 50,
                            f"{worst:.1f} ms"))
    return out


def scale_table(scale: dict) -> str:
    """The search at scale (``bench.search``): the archive, warm and cold searches, index costs, bytes per post."""
    b = scale["build"]
    rows = [f"| measure | {b['posts']:,} posts |", "|---|---|",
            f"| archive built without a crawl: seconds (MB) | {_f(b['seconds'])} ({_f(b['mb'], 0)}) |"]
    for name, r in scale["warm"].items():
        rows.append(f"| warm search `{name}`: median / p95 ms (rows) | {_f(r['median_ms'])} / {_f(r['p95_ms'])} "
                    f"({r.get('error') or r['rows']}) |")
    for name, r in scale["cold"].items():
        rows.append(f"| cold first search `{name}`: ms | {_f(r['ms'], 0)}{' (' + r['error'] + ')' if r['error'] else ''} |")
    for name, ms in scale["index_cost_ms"].items():
        rows.append(f"| writing a post (25 a transaction, as the writer commits): {name}, ms | {_f(ms, 2)} |")
    for name, size in scale["bytes_per_post"].items():
        rows.append(f"| bytes per post: {name} | {size:,.0f} |")
    return "\n".join(rows)


def scale_targets(scale: dict, with_search: bool = False) -> list[tuple]:
    """(target, met, measured) of the search at scale; with ``with_search``, also the search that
    decided it ("WAY TERM") and how it was measured (``warm``, ``first``, ``cold``: ``bench.profile``)."""
    n = f"{scale['build']['posts']:,} posts"
    out: list[tuple[str, bool, str, str | None, str | None]] = []
    for way, what in (("api", "the JSON API"), ("table", "the posts table with count and facets")):
        warm = {k: v for k, v in scale["warm"].items() if k.startswith(f"{way} ")}
        median = max(warm.items(), key=lambda kv: kv[1]["median_ms"])
        p95 = max(warm.items(), key=lambda kv: kv[1]["p95_ms"])
        out.append((f"search median ≤ 50 ms at {n}, {what} (slowest word)", median[1]["median_ms"] <= 50,
                    f"{median[1]['median_ms']:.1f} ms (`{median[0]}`)", median[0], "warm"))
        # of 20 searches in a row, the slowest is the first: it computes the word's matches
        out.append((f"search p95 ≤ 150 ms at {n}, {what} (slowest word)", p95[1]["p95_ms"] <= 150,
                    f"{p95[1]['p95_ms']:.1f} ms (`{p95[0]}`)", p95[0], "first"))
    cold = max(scale["cold"].items(), key=lambda kv: kv[1]["ms"])
    out.append((f"cold first search ≤ 500 ms at {n}, any word length (slowest)", cold[1]["ms"] <= 500,
                f"{cold[1]['ms']:.0f} ms (`{cold[0]}`)", cold[0], "cold"))
    errors = [f"{when} `{k}`" for when in ("warm", "cold") for k, v in scale[when].items() if v.get("error")]
    out.append((f"Datasette's time limit never hit at {n}", not errors, ", ".join(errors) or "no error", None, None))
    return out if with_search else [t[:3] for t in out]


def _functions(found: list) -> str:
    return "; ".join(f"`{name}` {share:.0%}" for name, share in found[:5]) or "-"


def profiles_section(profiles: list[dict]) -> str:
    """Each profile of missed targets (``bench.profile.missed``): the parts of the processes and their top functions."""
    out = ["## Profiles of the targets missed\n",
           "`bench/profile.py`, with py-spy: each part's share of the samples; *self*, the functions running "
           "at the top of its stacks; *through*, this project's functions its samples pass through (each as a "
           "share of the part's samples).\n"]
    for p in profiles:
        timing = f"{p['seconds']:.1f} s" if "seconds" in p else f"{p['ms']:.0f} ms a search"
        out.append("- " + "\n- ".join(p["targets"]))
        out.append(f"\n  Profiled: {p['what']} ({timing}, {p['samples']:,} samples).\n")
        out.append("| part | share | self | through |\n|---|---|---|---|")
        for part, e in p["parts"].items():
            out.append(f"| {part} | {e['share']:.0%} | {_functions(e['self'])} | {_functions(e['inclusive'])} |")
        out.append("")
    return "\n".join(out) + "\n"


def write_report(results: dict, path: Path) -> str:
    """Write ``path`` (keeping its notes section) and return the table and targets as text."""
    runs, m = results["runs"], results["machine"]
    scale = results.get("search_at_scale")
    found = targets(runs) + (scale_targets(scale) if scale else [])
    checks = "\n".join(f"| {name} | {'met' if ok else '**missed**'} | {value} |" for name, ok, value in found)
    body = (
        f"{table(runs)}\n\n\\* trafilatura {results.get('trafilatura_version', '')} run as "
        "`trafilatura --sitemap URL/sitemap.xml --list` then `trafilatura -i LIST -o DIR --markdown --no-comments`, "
        "both with `--config-file bench/trafilatura.cfg`: that config file turns its SSRF protection off (it "
        "refuses 127.0.0.1 otherwise) and its 5 s sleep between requests to a host to 0; everything else is its "
        "default. Two steps, because in one (`--sitemap URL -o DIR`) with no sleep it downloads the sitemap itself "
        "again and again and never ends. The blog is served on port 80: its URL checks refuse an IP address "
        "with a port. It is stopped after twice blogarchive's full crawl. The files it writes are no count of the "
        "pages: it names them by a bag-of-words hash of their text, which collides on this synthetic text.\n\n"
        "† After the rest, the blog gets 5 new posts, 10 old ones edited (5 in its feed; each one's sitemap `lastmod` "
        "moves) and 4 deleted (1 in its feed), as `bench.blogs.change_site` does; then one default crawl.\n\n"
        + (f"Search at scale (`bench/search.py`: an archive built without a crawl, searched through "
           f"`blogarchive serve`; cold: a fresh server, the archive's file out of the page cache"
           f"{'; measured on ' + scale['machine']['date'] if 'machine' in scale else ''}):\n\n"
           f"{scale_table(scale)}\n\n" if scale else "")
        + f"| target | | measured |\n|---|---|---|\n{checks}\n"
        + (f"\n{profiles_section(results['profiles'])}" if results.get("profiles") else "")
    )
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    notes = old[old.index(NOTES_START):] if NOTES_START in old else f"{NOTES_START}\n"
    path.write_text(
        "# Benchmarks\n\n"
        f"Measured on {m['date']}: {m['cpu']}, {m['cores']} cores, {m['ram_gb']} GB RAM, {m['system']}, "
        f"Python {m['python']}; crawls with `--delay 0 --concurrency {results['concurrency']}`.\n\n"
        "Rerun with `make bench` (1,000 and 10,000 posts) or `make bench BENCH_SIZES=1000` (quick); it rewrites "
        "this file, except the notes at the end, and `bench/results.json`. What each line measures is in "
        "`bench/run.py`'s docstring.\n\n"
        f"{body}\n{notes}",
        encoding="utf-8",
    )
    return body


if __name__ == "__main__":
    ROOT = Path(__file__).resolve().parents[1]
    print(write_report(json.loads((ROOT / "bench" / "results.json").read_text()), ROOT / "docs" / "benchmarks.md"))
