"""Same results and no slower: ``mst_parser`` of two source trees side by side.

Checks a refactoring of the graph parser (GraphModel / GraphTrainer): for
each tree (``--old`` and ``--new``, two checkouts with built extensions), a
subprocess with that tree first on ``PYTHONPATH`` trains the default
first-order pipeline (and ``--order 2``: the o2 config's settings) with
``spacy_mstparse.GoldAnnotationsCorpus``-style gold tags on the first
``--train-limit`` EWT train sentences for ``--epochs`` epochs in a fixed
order, then parses EWT dev. ``--systems`` picks the models: ``o1``, ``o2``,
``o3`` (Eisner at that order; o2 with the o2 config's features, o3 adding
grandparents) and ``o1-cle`` / ``o2-cle`` (Chu-Liu-Edmonds), each serial
and, with ``--threads 1,2``, trained and parsed on two threads too. The trees' dev UAS/LAS and whether their parses
are identical are reported; parse speed is timed in ``--rounds`` rounds that
alternate old and new subprocesses (each loads the saved model and times
``nlp.pipe`` over dev, best of three passes), and the median new/old ratio
is reported. One subprocess at a time, on as many threads as the system asks.
With ``--instructions`` the C batch parse of each tree is also counted in
instructions by valgrind's callgrind on the first 300 dev sentences: unlike
the clock, the count does not move with the machine's load.

Usage (from the repository root; the old tree e.g. ``git worktree add
../old <commit>`` and ``python setup.py build_ext --inplace`` there)::

    python -m benchmarks.bench_refactor_parity --old ../old --new . \\
        --systems o1,o2,o3,o1-cle,o2-cle --threads 1,2 --train-limit 2000 --epochs 5 \\
        --rounds 5 --output benchmarks/results/refactor_parity.json
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "ud"

WORKER = r"""
import hashlib, json, sys, time
import spacy
from spacy.training import Example
from spacy.util import minibatch
from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.corpus.readers import gold_annotated_doc
import spacy_mstparse.components.mst_parser  # registers the factory and its registries

# The installed entry points name the new tree's modules; resolve the
# registered functions from the imported tree only.
spacy.registry.mst_learners.entry_points = False
spacy.registry.mst_features.entry_points = False

mode, data, model_dir, system, threads, limit, epochs = sys.argv[1:8]
threads, limit, epochs = int(threads), int(limit), int(epochs)
order = int(system[1])

def examples(path, vocab, n=0):
    out = []
    for ref in read_conllu(path, vocab):
        out.append(Example(gold_annotated_doc(Example(ref.copy(), ref)), ref))
        if n and len(out) == n:
            break
    return out

if mode == "train":
    nlp = spacy.blank("en")
    config = {} if order == 1 else {"order": order, "features": {
        "@mst_features": "spacy_mstparse.FirstOrderFeatures.v2", "direction_backoff": False}}
    config.update(n_threads=threads,
                  decoder="chu_liu_edmonds" if system.endswith("-cle") else "eisner")
    parser = nlp.add_pipe("mst_parser", config=config)
    train = examples(data + "/en_ewt-ud-train.conllu", nlp.vocab, limit)
    nlp.initialize(lambda: train)
    start = time.perf_counter()
    for _ in range(epochs):
        for batch in minibatch(train, 16):
            parser.update(batch)
    seconds = time.perf_counter() - start
    dev = examples(data + "/en_ewt-ud-dev.conllu", nlp.vocab)
    scores = nlp.evaluate(dev)
    parsed = [[(t.head.i, t.dep_) for t in d] for d in nlp.pipe([eg.predicted for eg in dev])]
    digest = hashlib.sha256(json.dumps(parsed).encode()).hexdigest()
    nlp.to_disk(model_dir)
    print(json.dumps({"uas": scores["dep_uas"], "las": scores["dep_las"],
                      "train_seconds": seconds, "parses_sha256": digest}))
elif mode == "count":  # one pass over the first 300 dev sentences (run under callgrind)
    nlp = spacy.load(model_dir, config={"components": {"mst_parser": {"n_threads": threads}}})
    for _ in nlp.pipe([eg.predicted for eg in examples(data + "/en_ewt-ud-dev.conllu",
                                                       nlp.vocab, 300)]):
        pass
    print(json.dumps({}))
else:
    nlp = spacy.load(model_dir, config={"components": {"mst_parser": {"n_threads": threads}}})
    dev = examples(data + "/en_ewt-ud-dev.conllu", nlp.vocab)
    docs = [eg.predicted for eg in dev]
    n_words = sum(len(d) for d in docs)
    best = 0.0
    for _ in range(3):
        copies = [d.copy() for d in docs]
        start = time.perf_counter()
        for _ in nlp.pipe(copies):
            pass
        best = max(best, n_words / (time.perf_counter() - start))
    print(json.dumps({"words_per_second": best}))
"""


def run(tree: Path, *args, prefix=()) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree.resolve()), "OPENBLAS_NUM_THREADS": "1"}
    # Not from the repository root: "" (the working directory) would come
    # before PYTHONPATH on sys.path.
    out = subprocess.run([*prefix, sys.executable, "-c", WORKER, *map(str, args)], env=env,
                         capture_output=True, text=True, cwd=tempfile.gettempdir())
    if out.returncode:
        raise SystemExit(f"worker failed ({tree}, {args[0]}):\n{out.stderr[-3000:]}")
    return {"stderr": out.stderr, **json.loads(out.stdout.strip().splitlines()[-1])}


def instructions(tree: Path, model: Path, system: str, threads: int) -> int:
    """Instructions the C batch parse (``parse_sentences``) executes on the
    first 300 dev sentences, counted by callgrind (repeatable under load)."""
    out = run(tree, "count", DATA, model, system, threads, 0, 0, prefix=(
        "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
        "--toggle-collect=*parse_sentences*"))
    found = re.search(r"Collected : (\d+)", out["stderr"])
    if found is None:
        raise SystemExit(f"callgrind printed no count:\n{out['stderr'][-2000:]}")
    return int(found.group(1))


def compare(trees, tmp: Path, system: str, threads: int, args) -> dict:
    """Train with both trees, then time their parses in alternating rounds."""
    row = {}
    for name, tree in trees.items():
        print(f"{system}, {threads} thread(s): training with the {name} tree ...", flush=True)
        row[name] = run(tree, "train", DATA, tmp / f"{name}-{system}-{threads}", system, threads,
                        args.train_limit, args.epochs)
    speeds = {"old": [], "new": []}
    for r in range(args.rounds):
        for name in (("old", "new") if r % 2 == 0 else ("new", "old")):
            speeds[name].append(run(trees[name], "parse", DATA, tmp / f"{name}-{system}-{threads}",
                                    system, threads, 0, 0)["words_per_second"])
    ratios = [n / o for n, o in zip(speeds["new"], speeds["old"])]
    if args.instructions:
        counts = {name: instructions(tree, tmp / f"{name}-{system}-{threads}", system, threads)
                  for name, tree in trees.items()}
        row.update(instructions=counts, instruction_ratio=counts["new"] / counts["old"])
    for name in trees:
        row[name].pop("stderr", None)
    row.update(speeds=speeds, median_ratio=statistics.median(ratios),
               identical_parses=row["old"]["parses_sha256"] == row["new"]["parses_sha256"],
               identical_scores=(row["old"]["uas"], row["old"]["las"])
               == (row["new"]["uas"], row["new"]["las"]))
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", type=Path, required=True)
    p.add_argument("--new", type=Path, default=REPO)
    p.add_argument("--systems", default="o1,o2",
                   help="comma-separated: o1, o2, o3 (Eisner), o1-cle, o2-cle")
    p.add_argument("--threads", default="1", help="comma-separated thread counts, e.g. 1,2")
    p.add_argument("--instructions", action="store_true",
                   help="also count the C batch parse's instructions with valgrind's callgrind")
    p.add_argument("--train-limit", type=int, default=2000)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    trees = {"old": args.old, "new": args.new}
    # The trees are named by their commits, not by where they lie on this machine.
    shown = {str(args.old): "OLD_CHECKOUT", str(args.new): "NEW_CHECKOUT"}
    command = "python -m benchmarks.bench_refactor_parity " + " ".join(
        shown.get(arg, arg) for arg in sys.argv[1:])
    results = {"command": command,
               "commits": {}, "systems": {}}
    for name, tree in trees.items():
        head = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True)
        results["commits"][name] = head.stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        for system in args.systems.split(","):
            if system not in ("o1", "o2", "o3", "o1-cle", "o2-cle"):
                raise SystemExit(f"unknown system {system!r}")
            for threads in map(int, args.threads.split(",")):
                key = f"{system}/{threads}t"
                results["systems"][key] = row = compare(trees, Path(tmp), system, threads, args)
                print(f"{key}: UAS old {row['old']['uas']:.4f} new {row['new']['uas']:.4f}, "
                      f"LAS old {row['old']['las']:.4f} new {row['new']['las']:.4f}, identical "
                      f"parses: {row['identical_parses']}; words/s old "
                      f"{statistics.median(row['speeds']['old']):.0f} new "
                      f"{statistics.median(row['speeds']['new']):.0f}, median ratio new/old "
                      f"{row['median_ratio']:.3f}" + (
                          f", instructions new/old {row['instruction_ratio']:.4f}"
                          if "instruction_ratio" in row else ""), flush=True)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
