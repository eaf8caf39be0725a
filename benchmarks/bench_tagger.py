"""Training and tagging time of ``mst_tagger`` alone, and its dev accuracy:
this checkout against a baseline checkout of the project, measured
interleaved (each round runs every treebank with both, the order
alternating between rounds) on the UD treebanks of the data folder.

Each run is a child process of the checkout's interpreter with the checkout
first on ``PYTHONPATH``: it builds a blank pipeline with ``mst_tagger``
(``folds`` 0: one model, no jackknife; the component's other defaults),
initializes it on the gold training sentences and tags the dev sentences.
The figures are the CPU time (``time.process_time``) of ``initialize`` and
of tagging, per 1,000 words, the medians over rounds, and dev UPOS, XPOS
and FEATS accuracy (spaCy's Scorer; the same in every round, the seed
being fixed). The baseline is set up as for ``bench_train_time``.

Usage (about 5 min for the four treebanks and 3 rounds)::

    python -m benchmarks.bench_tagger --baseline ../base --rounds 3 \\
        --output benchmarks/results/tagger_speed.json
"""
import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from . import common
from .baseline_runs import (SIDES, add_options, baseline_record, finish,
                            interleaved_rounds, treebanks_with_dev)
from .bench_languages import convert
from .conllu_text import treebank_stats

# The child's program: only the public API, so that it runs on both checkouts.
CHILD = r"""
import json, sys, time
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example

train_path, dev_path, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
nlp = spacy.blank("xx")
train = list(DocBin().from_disk(train_path).get_docs(nlp.vocab))
dev = list(DocBin().from_disk(dev_path).get_docs(nlp.vocab))
nlp.add_pipe("mst_tagger", config={"folds": 0, "seed": seed})
words = lambda doc: Doc(nlp.vocab, words=[t.text for t in doc])
examples = [Example(words(d), d) for d in train]
start = time.process_time()
nlp.initialize(lambda: examples)
train_cpu = time.process_time() - start
docs = [words(d) for d in dev]
start = time.process_time()
tagged = list(nlp.pipe(docs))
tag_cpu = time.process_time() - start
scores = nlp.get_pipe("mst_tagger").score([Example(p, d) for p, d in zip(tagged, dev)])
print(json.dumps({"train_cpu": train_cpu, "tag_cpu": tag_cpu, "pos_acc": scores.get("pos_acc"),
                  "tag_acc": scores.get("tag_acc"), "morph_acc": scores.get("morph_acc")}))
"""


def run_child(root: Path, python: str, corpus: Dict[str, Path], seed: int) -> Dict[str, Any]:
    """One training and tagging by the checkout at ``root``."""
    proc = subprocess.run([python, "-c", CHILD, str(corpus["train"].resolve()),
                           str(corpus["dev"].resolve()), str(seed)],
                          cwd=root, env=common.checkout_env(root), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"the tagger run of {root} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def summarise(runs: List[Dict[str, Any]], words: Dict[str, int]) -> Dict[str, Any]:
    """Median CPU s per 1,000 words of each side, the median ratios and the accuracies."""
    out: Dict[str, Any] = {}
    for side in SIDES:
        first = runs[0][side]
        out[side] = {
            "train_s_per_1k_words": statistics.median(r[side]["train_cpu"] for r in runs)
            / words["train"] * 1000,
            "tag_s_per_1k_words": statistics.median(r[side]["tag_cpu"] for r in runs)
            / words["dev"] * 1000,
            **{key: first[key] for key in ("pos_acc", "tag_acc", "morph_acc")}}
    for part in ("train", "tag"):
        out[f"{part}_ratio_median"] = statistics.median(
            r["current"][f"{part}_cpu"] / r["baseline"][f"{part}_cpu"] for r in runs)
    return out


def markdown(results: Dict[str, Any]) -> str:
    def pct(value):
        return common.num(None if value is None else value * 100, ".2f")

    lines = [f"`mst_tagger` alone (folds 0), CPU s per 1k words (median of {results['rounds']} "
             "interleaved rounds); dev accuracy, this checkout / baseline", "",
             "| treebank | train: this / baseline | ratio | tag: this / baseline | ratio "
             "| UPOS | XPOS | FEATS |",
             "| --- | ---: | ---: | ---: | ---: | --- | --- | --- |"]
    for name, tb in results["treebanks"].items():
        s = tb["summary"]
        cur, base = s["current"], s["baseline"]
        acc = [f"{pct(cur[k])} / {pct(base[k])}" for k in ("pos_acc", "tag_acc", "morph_acc")]
        lines.append(f"| {name} | {cur['train_s_per_1k_words']:.3f} / {base['train_s_per_1k_words']:.3f} "
                     f"| {s['train_ratio_median']:.2f} | {cur['tag_s_per_1k_words']:.3f} / "
                     f"{base['tag_s_per_1k_words']:.3f} | {s['tag_ratio_median']:.2f} | "
                     + " | ".join(acc) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_options(p, rounds=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--work", type=Path, default=common.REPO_ROOT / "benchmarks" / "work" / "tagger")
    p.add_argument("--output", type=Path, default=common.RESULTS / "tagger_speed.json")
    args = p.parse_args(argv)
    baseline = args.baseline.resolve()
    if not (baseline / "spacy_mstparse").is_dir():
        p.error(f"--baseline {args.baseline}: no spacy_mstparse package there")
    found, names = treebanks_with_dev(p, args.data_dir, args.treebanks)
    results: Dict[str, Any] = {
        "command": common.invocation("bench_tagger", argv),
        "machine": common.machine_info(), "code": common.working_tree_code(),
        "baseline": baseline_record(baseline, args.baseline_python),
        "rounds": args.rounds, "seed": args.seed, "treebanks": {}}
    corpora, words = {}, {}
    for name in names:
        tb = found[name]
        corpora[name] = {split: args.work / "corpus" / f"{name}-{split}.spacy" for split in ("train", "dev")}
        corpora[name]["train"].parent.mkdir(parents=True, exist_ok=True)
        for split, path in corpora[name].items():
            convert(tb[split], path, tb["spacy_lang"], 1)
        words[name] = {split: treebank_stats(tb[split])["words"] for split in ("train", "dev")}
        results["treebanks"][name] = {"words": words[name], "runs": []}
    sides = {"current": (common.REPO_ROOT, sys.executable), "baseline": (baseline, args.baseline_python)}
    interleaved_rounds(args.rounds, names,
                       lambda side, name: run_child(*sides[side], corpora[name], args.seed),
                       results, args.output)
    finish(results, args.output, lambda tb: summarise(tb["runs"], tb["words"]), markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
