"""Grandparent factors (order 3) against second and first order on EWT dev.

Trains each system in-process (``common.train_epochs``: the component's
``update``, batches of 20, shuffle seed ``--seed``, gold tags, 5-best MIRA,
the component's default learner), evaluates UAS / LAS (punctuation excluded)
on EWT dev after every epoch, then times ``parser.pipe`` over dev round-robin
(``--runs`` rounds, one process, one core) and reports median words/s and
the time ratios within a round.

Systems: ``o1`` (``configs/mst_parser.cfg``: first order, direction
back-off), ``o2`` (``configs/mst_parser_o2.cfg``: siblings, no back-off),
``o3`` (the o2 settings with ``order = 3``: siblings and grandparents over
arcs pruned to ``GraphModel.GRAND_KEEP_HEADS`` heads per word).

Usage::

    .venv/bin/python -m benchmarks.bench_grandparents --systems o2,o3 --epochs 4
    .venv/bin/python -m benchmarks.bench_grandparents --train-limit 1000 --epochs 1

Output: ``benchmarks/results/grandparents.json`` and a Markdown table.
"""
import argparse
import statistics
import sys
from pathlib import Path
from typing import Callable, Dict, Optional

from benchmarks import common
from benchmarks.bench_seed_tables import evaluate, sentence_arrays
from benchmarks.common import DATA

MIRA5 = {"@mst_learners": "spacy_mstparse.MIRA.v1", "k": 5, "C": None}
O2_FEATURES = {"@mst_features": "spacy_mstparse.FirstOrderFeatures.v2", "tag_columns": "both",
               "use_morph": False, "n_buckets": 2**22, "direction_backoff": False}
SYSTEMS = {
    "o1": {"order": 1, "decoder": "eisner"},
    "o2": {"order": 2, "decoder": "eisner", "features": O2_FEATURES},
    "o3": {"order": 3, "decoder": "eisner", "features": O2_FEATURES},
}


def train_and_time(configs: Dict[str, dict], args, results: dict,
                   after_training: Optional[Callable] = None, initialize: Optional[Callable] = None
                   ) -> None:
    """Train each ``mst_parser`` config in-process on EWT train (gold tags,
    5-best MIRA, batches of 20, ``args.epochs`` epochs in the order of
    ``args.seed``), score EWT dev after every epoch, then time
    ``parser.pipe`` over dev round-robin (``args.runs`` rounds); fills
    ``results["systems"]`` and saves it to ``args.output`` as it goes.
    ``initialize(parser, nlp, examples)`` runs after ``nlp.initialize``;
    ``after_training(name, parser, dev, gold_arrays)`` after each system."""
    import spacy

    from spacy_mstparse.components import mst_parser  # noqa: F401
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import make_input_docs

    nlp = spacy.blank("en")
    examples = common.gold_examples(args.data_dir / "en_ewt-ud-train.conllu", nlp.vocab,
                                    args.train_limit)
    dev_gold = list(read_conllu(args.data_dir / "en_ewt-ud-dev.conllu", nlp.vocab, n_sents=1))
    dev = make_input_docs(dev_gold, nlp.vocab, gold_tags=True)
    gold_arrays = [sentence_arrays(d) for d in dev_gold]
    n_words = sum(len(d) for d in dev)
    results["dev_words"] = n_words
    parsers = {}
    for name, config in configs.items():
        pipe_nlp = spacy.blank("en", vocab=nlp.vocab)
        parser = pipe_nlp.add_pipe("mst_parser", config={"learner": MIRA5, **config})
        pipe_nlp.initialize(lambda: examples)
        if initialize is not None:
            initialize(parser, pipe_nlp, examples)
        epochs = []

        def on_epoch(epoch, losses, seconds, parser=parser, epochs=epochs, name=name):
            scores = evaluate(parser, dev, gold_arrays)
            epochs.append({"epoch": epoch, "train_seconds": seconds, "uas": scores["uas"],
                           "las": scores["las"], "words_per_second": scores["words_per_second"]})
            common.log(f"{name} epoch {epoch}: UAS {scores['uas']:.2f} LAS {scores['las']:.2f} "
                       f"train {seconds:.0f}s, parse {scores['words_per_second']:,.0f} words/s")
            return False

        common.train_epochs(parser, examples, args.epochs, 20, common.numpy_orders(args.seed),
                            on_epoch)
        results["systems"][name] = {"config": config, "epochs": epochs}
        if after_training is not None:
            after_training(name, parser, dev, gold_arrays)
        parsers[name] = parser
        common.save_results(results, args.output)
    names = list(parsers)
    times = {name: [] for name in names}
    for r in range(args.runs):
        for name, parser in parsers.items():
            times[name].append(common.timed_pipe(parser, dev)[1])
        common.log(f"round {r + 1}: " + ", ".join(f"{n} {times[n][-1]:.2f}s" for n in names))
    for name in names:
        run = results["systems"][name]
        run["seconds"] = times[name]
        run["words_per_second_median"] = n_words / statistics.median(times[name])
        run[f"time_vs_{names[0]}"] = statistics.median(
            b / a for a, b in zip(times[names[0]], times[name]))
    common.save_results(results, args.output)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--systems", default="o2,o3", help=f"comma-separated, from: {', '.join(SYSTEMS)}")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--train-limit", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--grand-keep", type=int, default=0,
                   help="order 3: heads kept per word (GraphModel.GRAND_KEEP_HEADS; 0 = default)")
    p.add_argument("--eval-keeps", default="",
                   help="order 3: after training, dev UAS / LAS with these heads kept per word")
    p.add_argument("--output", type=Path, default=common.RESULTS / "grandparents.json")
    p.add_argument("--data-dir", type=Path, default=DATA)
    args = p.parse_args(argv)
    names = common.choose_names(p, args.systems, SYSTEMS, "system")

    from spacy_mstparse.graph.model import GraphModel

    if args.grand_keep:
        GraphModel.GRAND_KEEP_HEADS = args.grand_keep
    results = {"command": common.invocation("bench_grandparents", argv),
               "commit": common.git("rev-parse", "HEAD"), "machine": common.machine_info(),
               "systems": {}}

    def after_training(name, parser, dev, gold_arrays):
        results["systems"][name]["grand_keep"] = GraphModel.GRAND_KEEP_HEADS
        if args.eval_keeps and parser.order == 3:
            trained_keep = GraphModel.GRAND_KEEP_HEADS
            by_keep = {}
            for keep in [int(k) for k in args.eval_keeps.split(",")]:
                GraphModel.GRAND_KEEP_HEADS = keep
                scores = evaluate(parser, dev, gold_arrays)
                by_keep[keep] = {"uas": scores["uas"], "las": scores["las"],
                                 "words_per_second": scores["words_per_second"]}
                common.log(f"{name} parsed with {keep} heads kept: UAS {scores['uas']:.2f} "
                           f"LAS {scores['las']:.2f}, {scores['words_per_second']:,.0f} words/s")
            GraphModel.GRAND_KEEP_HEADS = trained_keep
            results["systems"][name]["parse_keep"] = by_keep

    train_and_time({name: SYSTEMS[name] for name in names}, args, results, after_training)
    print(f"| system | UAS by epoch | LAS by epoch | train s (all epochs) | words/s (median of "
          f"{args.runs}) | time / {names[0]} |")
    print("|---|---|---|---:|---:|---:|")
    for name in names:
        run = results["systems"][name]
        uas = " / ".join("%.2f" % e["uas"] for e in run["epochs"])
        las = " / ".join("%.2f" % e["las"] for e in run["epochs"])
        print(f"| {name} | {uas} | {las} "
              f"| {run['epochs'][-1]['train_seconds']:.0f} | {run['words_per_second_median']:,.0f} "
              f"| {run[f'time_vs_{names[0]}']:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
