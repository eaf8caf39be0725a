"""Training time of a shipped config under ``spacy train``: this checkout
against a baseline checkout of the project, on the UD treebanks of the data
folder, measured interleaved (every round trains each treebank with both,
the order alternating between rounds) so that a shared machine's load
falls on both alike.

The figure is the CPU time (user + system) of the ``spacy train`` process
per 1,000 training words, the median over rounds, and the ratio of this
checkout's to the baseline's. Each checkout trains with its own copy of the
config (``configs/CONFIG`` in its tree), both on the same DocBins (converted
once by this checkout).

The baseline is a directory holding the project at an earlier commit, its
extensions built in place (``git worktree add ../baseline COMMIT`` then
``python setup.py build_ext --inplace`` there). It runs with the
``--baseline-python`` interpreter, by default this one with the baseline
first on ``PYTHONPATH`` (the installed package's entry points then load the
baseline's modules; a baseline that lacks a module an entry point names
needs its own environment).

Usage (about 10 min for three small treebanks and 2 rounds)::

    python -m benchmarks.bench_train_time --baseline ../baseline \\
        --treebanks cs_cltt,hu_szeged,tr_imst --rounds 2 \\
        --output benchmarks/results/train_time_languages.json
"""
import argparse
import shlex
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from . import common
from .baseline_runs import (add_options, baseline_record, finish,
                            interleaved_rounds, treebanks_with_dev)
from .bench_languages import convert
from .conllu_text import treebank_stats


def time_training(root: Path, python: str, config: str, treebank: Dict[str, Any],
                  corpus: Dict[str, Path], work: Path, label: str,
                  overrides: Sequence[str] = ()) -> Dict[str, Any]:
    """One ``spacy train`` of ``root``'s ``configs/CONFIG`` on the corpus
    (``overrides``: more ``--section.key value`` arguments), its CPU and
    wall time."""
    run_name = f"{label}-{Path(config).stem}-{treebank['name']}"  # one per config: runs may share a work dir
    out = work / "models" / run_name
    cmd = [python, "-m", "spacy", "train", str(root / "configs" / config),
           "--output", str(out), "--paths.train", str(corpus["train"].resolve()),
           "--paths.dev", str(corpus["dev"].resolve()), "--nlp.lang", treebank["spacy_lang"], *overrides]
    env = common.checkout_env(root)
    log = work / "logs" / f"{run_name}.log"
    run = common.run_measured(cmd, log, cwd=root, env=env)
    if run["returncode"] != 0:
        raise RuntimeError(f"{label} training on {treebank['name']} failed: {common.tail(log, 3)}")
    return {"cpu_seconds": run["user_seconds"] + run["system_seconds"],
            "wall_seconds": run["wall_seconds"], "loadavg_before": run["loadavg_before"]}


def summarise(runs: List[Dict[str, Any]], words: int) -> Dict[str, Any]:
    """Median CPU seconds per 1,000 words of each side and their ratio."""
    out: Dict[str, Any] = {}
    for side in ("current", "baseline"):
        cpu = [r[side]["cpu_seconds"] for r in runs]
        out[side] = {"cpu_seconds_median": statistics.median(cpu),
                     "cpu_s_per_1k_words": statistics.median(cpu) / words * 1000}
    ratios = [r["current"]["cpu_seconds"] / r["baseline"]["cpu_seconds"] for r in runs]
    out["ratio_median"] = statistics.median(ratios)
    out["ratios"] = ratios
    return out


def markdown(results: Dict[str, Any]) -> str:
    lines = [f"`spacy train configs/{results['config']}`, CPU s per 1k training words "
             f"(median of {results['rounds']} interleaved rounds)", "",
             "| treebank | train words | this checkout | baseline | ratio |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for name, tb in results["treebanks"].items():
        s = tb["summary"]
        lines.append(f"| {name} | {tb['train_words']} | {s['current']['cpu_s_per_1k_words']:.2f} | "
                     f"{s['baseline']['cpu_s_per_1k_words']:.2f} | {s['ratio_median']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_options(p, rounds=2)
    p.add_argument("--config", default="mst_parser.cfg", help="a config file name in configs/")
    p.add_argument("--n-sents", type=int, default=1,
                   help="sentences per Doc of the converted corpora (10 for a config with a senter)")
    p.add_argument("--baseline-overrides", default="",
                   help="config overrides for the baseline's training only, given with =, e.g. "
                        "--baseline-overrides=\"--components.mst_parser.features.cluster_bits 0\" "
                        "where its config cannot start on a language")
    p.add_argument("--note", default="", help="how the baseline was set up (kept in the results)")
    p.add_argument("--work", type=Path, default=common.REPO_ROOT / "benchmarks" / "work" / "train_time")
    p.add_argument("--output", type=Path, default=common.RESULTS / "train_time_languages.json")
    args = p.parse_args(argv)
    baseline = args.baseline.resolve()
    if not (baseline / "configs" / args.config).is_file():
        p.error(f"--baseline {args.baseline}: no configs/{args.config} there")
    if args.n_sents < 1:
        p.error("--n-sents must be at least 1")
    found, names = treebanks_with_dev(p, args.data_dir, args.treebanks, why="spacy train needs one")
    results: Dict[str, Any] = {
        "command": common.invocation("bench_train_time", argv),
        "machine": common.machine_info(), "code": common.working_tree_code(),
        "baseline": baseline_record(baseline, args.baseline_python,
                                    overrides=args.baseline_overrides, note=args.note),
        "config": args.config, "rounds": args.rounds, "n_sents": args.n_sents, "treebanks": {}}
    corpora = {}
    for name in names:
        tb = found[name]
        corpus = {split: args.work / "corpus" / f"{name}-{split}-n{args.n_sents}.spacy"
                  for split in ("train", "dev")}
        corpus["train"].parent.mkdir(parents=True, exist_ok=True)
        for split, path in corpus.items():
            convert(tb[split], path, tb["spacy_lang"], args.n_sents)
        corpora[name] = corpus
        results["treebanks"][name] = {"train_words": treebank_stats(tb["train"])["words"], "runs": []}
    sides = {"current": (common.REPO_ROOT, sys.executable, []),
             "baseline": (baseline, args.baseline_python, shlex.split(args.baseline_overrides))}
    def run(side: str, name: str) -> Dict[str, Any]:
        root, python, overrides = sides[side]
        return time_training(root, python, args.config, found[name], corpora[name],
                             args.work, side, overrides)

    interleaved_rounds(args.rounds, names, run, results, args.output)
    finish(results, args.output, lambda tb: summarise(tb["runs"], tb["train_words"]), markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
