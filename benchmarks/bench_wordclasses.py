"""How fast word classes are induced, treebank by treebank.

Word classes come from divisive exchange clustering (Kneser & Ney 1993;
Martin, Liermann & Ney 1998; split top-down into a Brown-style hierarchy:
``spacy_mstparse.wordclasses``). ``clusters = "auto"`` induces them from the
training words at ``initialize`` when spaCy has no table for the language,
and ``python -m spacy_mstparse clusters`` from any text. For every
``NAME-ud-train.conllu`` in ``--data-dir`` (or a folder in it) this times
the induction on the training words with the defaults the parser uses
(depth 8, min_count 2, at most 10 exchange passes per level), in process,
one core, ``--runs`` times (the median is reported); then on every training
file together, and the ``clusters`` command on them as a user runs it (wall,
loading and reading included).

Usage::

    python -m benchmarks.bench_wordclasses --runs 3

Output: ``benchmarks/results/wordclasses.json`` (``--output``) and a Markdown
table (``--markdown``, default beside it).
"""
import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from benchmarks import common
from benchmarks.bench_languages import find_treebanks
from spacy_mstparse.wordclasses import DEPTH, MIN_COUNT, PASSES


def read_words(path: Path) -> List[List[str]]:
    """The words of each sentence of a treebank (the parser's reader)."""
    import spacy

    from spacy_mstparse.corpus.word_lists import treebank_sentences

    return list(treebank_sentences(path, spacy.blank("xx").vocab))


def time_induction(sentences: List[List[str]], runs: int) -> Dict[str, Any]:
    """Median seconds of ``induce_word_classes`` (defaults) over ``runs``
    runs, and what the last run found."""
    from spacy_mstparse.wordclasses import induce_word_classes

    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        classes = induce_word_classes(sentences)
        seconds.append(time.perf_counter() - start)
    tokens = sum(len(s) for s in sentences)
    median = statistics.median(seconds)
    return {"sentences": len(sentences), "tokens": tokens,
            "types": len({w for s in sentences for w in s}), "classed_words": len(classes),
            "classes_used": len(set(classes.paths.values())), "depth": classes.depth,
            "seconds_runs": [round(s, 3) for s in seconds], "seconds": median,
            "tokens_per_second": tokens / median if median else None,
            "final_objective": classes.objectives[-1] if classes.objectives else None}


def time_command(train_files: List[Path], work: Path) -> Dict[str, Any]:
    """``python -m spacy_mstparse clusters --treebank ...`` on every file."""
    work.mkdir(parents=True, exist_ok=True)
    out = work / "classes.tsv"
    cmd = [sys.executable, "-m", "spacy_mstparse", "clusters", "--output", common.rel(out)]
    for path in train_files:
        cmd += ["--treebank", common.rel(path)]
    run = common.run_measured(cmd, work / "clusters.log")
    if run["returncode"] != 0:
        return {"command": run["command"], "error": common.tail(work / "clusters.log", 3)}
    return {"command": run["command"], "wall_seconds": run["wall_seconds"],
            "peak_rss_mb": run["peak_rss_mb"],
            "classed_words": sum(1 for _ in out.open(encoding="utf-8"))}


def markdown_table(results: Dict[str, Any]) -> str:
    lines = ["| training words of | sentences | tokens | types | words classed | seconds "
             "| tokens/s |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, row in results["corpora"].items():
        lines.append(f"| {name} | {row['sentences']:,} | {row['tokens']:,} | {row['types']:,} "
                     f"| {row['classed_words']:,} | {row['seconds']:.2f} "
                     f"| {common.num(row['tokens_per_second'], ',.0f')} |")
    command = results.get("command_run") or {}
    settings = results["settings"]
    lines += ["", f"Divisive exchange clustering, depth {settings['depth']} "
                  f"({2 ** settings['depth']} classes), min_count {settings['min_count']}, at most "
                  f"{settings['passes']} passes per level; median of {settings['runs']} runs in "
                  f"process, one core."]
    if command.get("wall_seconds") is not None:
        lines.append(f"The `clusters` command on every training file together: "
                     f"{command['wall_seconds']:.1f} s wall (loading and reading included), "
                     f"peak RSS {command['peak_rss_mb']:.0f} MB.")
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", type=Path, default=common.DATA)
    p.add_argument("--treebanks", default=None, help="comma-separated names (default: all)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--work-dir", type=Path, default=common.WORK / "wordclasses")
    p.add_argument("--output", type=Path, default=common.RESULTS / "wordclasses.json")
    p.add_argument("--markdown", type=Path, default=None)
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    treebanks = find_treebanks(args.data_dir)
    if args.treebanks:
        chosen = common.choose_names(p, args.treebanks, [tb["name"] for tb in treebanks],
                                     "treebank")
        treebanks = [tb for tb in treebanks if tb["name"] in chosen]
    if not treebanks:
        p.error(f"no NAME-ud-train.conllu in {args.data_dir.resolve()}")
    results: Dict[str, Any] = {
        "command": common.invocation("bench_wordclasses", argv),
        "code": common.working_tree_code(), "machine": common.machine_info(),
        "settings": {"runs": args.runs, "depth": DEPTH, "min_count": MIN_COUNT, "passes": PASSES},
        "corpora": {},
    }
    everything: List[List[str]] = []
    for tb in treebanks:
        sentences = read_words(tb["train"])
        everything += sentences
        common.log(f"{tb['name']}: {len(sentences)} sentences")
        results["corpora"][tb["name"]] = dict(time_induction(sentences, args.runs),
                                              file=common.rel(tb["train"]))
        common.save_results(results, args.output)
    if len(treebanks) > 1:
        common.log("every training file together")
        results["corpora"]["all of them"] = time_induction(everything, args.runs)
    results["command_run"] = time_command([tb["train"] for tb in treebanks], args.work_dir)
    common.finish_results(results, args.output, markdown_table(results),
                          args.markdown or args.output.with_suffix(".md"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
