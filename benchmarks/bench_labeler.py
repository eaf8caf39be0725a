"""Labeler ablation on EWT dev: LAS of labeler variants on fixed trees.

The second-stage labeler (McDonald, Lerman & Pereira 2006) is trained on the
gold training trees only, independently of the arc model, so its variants
can be compared on the same predicted dev trees:

1. ``--stage heads``: train the arc model in-process (the component's
   ``initialize`` / ``update``, 5-best MIRA, gold tags, one sentence per
   Doc, batches of 20, shuffle seed 0) for ``--orders`` (1: the default
   first-order settings, ``configs/mst_parser.cfg``; 2: the second-order
   settings of ``configs/mst_parser_o2.cfg``) and save its dev trees under
   ``benchmarks/work/labeler/``.
2. ``--stage labels``: for each labeler variant (``--variants``, bits of
   ``labeler.arc_labeler``: 1 context features, 2 label chain, 4 label
   restriction; 0 = version 1) and each shuffle seed, train the labeler
   alone for ``--epochs`` epochs on the gold training trees
   (``GraphTrainer.train_labeler``), then label the saved dev trees of each
   order and the gold dev trees; LAS (punctuation excluded) and label
   accuracy on correctly attached words.
3. ``--stage speed``: train labeler version 1 and version 2 (``--epochs``)
   and time labeling the saved first-order dev trees, the two in turn for
   ``--rounds`` rounds (one process); the median time ratio.

Usage::

    .venv/bin/python -m benchmarks.bench_labeler --stage heads --orders 1,2
    .venv/bin/python -m benchmarks.bench_labeler --stage labels --variants 0,1,2,4,7 --seeds 0,1

Results: ``benchmarks/results/labeler.json`` (``--output``).
"""
import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import numpy

from benchmarks import common
from benchmarks.common import DATA, REPO_ROOT

WORK = REPO_ROOT / "benchmarks" / "work" / "labeler"
TRAIN = DATA / "en_ewt-ud-train.conllu"
DEV = DATA / "en_ewt-ud-dev.conllu"
ORDER_CONFIGS = {
    1: {},
    2: {"order": 2, "features": {"@mst_features": "spacy_mstparse.FirstOrderFeatures.v2",
                                 "tag_columns": "both", "use_morph": False,
                                 "n_buckets": 4194304, "direction_backoff": False}},
}


def pipeline(config: Dict[str, Any], train_limit: int):
    import spacy

    from spacy_mstparse.components import mst_parser  # noqa: F401 (factory)

    nlp = spacy.blank("en")
    parser = nlp.add_pipe("mst_parser", config=config)
    train = common.gold_examples(TRAIN, nlp.vocab, train_limit)
    dev = common.gold_examples(DEV, nlp.vocab)
    nlp.initialize(lambda: train)
    return nlp, parser, train, dev


def stage_heads(args) -> Dict[str, Any]:
    out = {}
    for order in args.orders:
        nlp, parser, train, dev = pipeline(ORDER_CONFIGS[order], args.train_limit)
        seconds = common.train_epochs(parser, train, args.arc_epochs, 20, common.numpy_orders(0))
        gold = list(parser.training_sentences(dev))
        trees = [parser.graph.parse(s)[0] for s, _, _ in gold]
        n = ok = 0
        punct = parser.cfg["labels"].index("punct")
        for (s, heads, labels), pred in zip(gold, trees):
            keep = labels[1:] != punct
            n += int(keep.sum())
            ok += int(((pred[1:] == heads[1:]) & keep).sum())
        WORK.mkdir(parents=True, exist_ok=True)
        numpy.savez(WORK / f"heads-o{order}.npz", *trees)
        out[f"o{order}"] = {"uas": 100.0 * ok / n, "train_seconds": seconds,
                            "arc_epochs": args.arc_epochs}
        common.log(f"order {order}: dev UAS {100.0 * ok / n:.2f} ({seconds:.0f}s)")
    return out


def las(items, trees, labels_pred, punct: int):
    n = head_ok = both = 0
    for (s, heads, gold), pred_heads, pred in zip(items, trees, labels_pred):
        keep = gold[1:] != punct
        h = (pred_heads[1:] == heads[1:]) & keep
        n += int(keep.sum())
        head_ok += int(h.sum())
        both += int((h & (pred[1:] == gold[1:])).sum())
    return {"las": 100.0 * both / n, "uas": 100.0 * head_ok / n,
            "label_acc_on_correct_heads": 100.0 * both / head_ok}


def stage_labels(args) -> Dict[str, Any]:
    from spacy_mstparse.graph import GraphModel, GraphTrainer
    from spacy_mstparse.labeler.arc_labeler import ArcLabeler
    from spacy_mstparse.learners import Perceptron

    nlp, parser, train, dev = pipeline({}, args.train_limit)
    train_items = list(parser.training_sentences(train))
    dev_items = list(parser.training_sentences(dev))
    labels, root = parser.cfg["labels"], parser.cfg["root_label"]
    punct = labels.index("punct")
    tree_sets = {"gold": [heads for _, heads, _ in dev_items]}
    for order in args.orders:
        path = WORK / f"heads-o{order}.npz"
        with numpy.load(path) as archive:
            tree_sets[f"o{order}"] = [archive[f"arr_{i}"] for i in range(len(archive.files))]
    out: Dict[str, Any] = {}
    for flags in args.variants:
        for seed in args.seeds:
            model = GraphModel(parser.model_features, labels=labels, root_label=root,
                               label_buckets=args.label_buckets, labeler_version=2)
            model.labeler = ArcLabeler(model.label_buckets, len(labels), False, 2, flags)
            model.fit_label_restrictions(train_items)
            trainer = GraphTrainer(model, Perceptron())
            rng = numpy.random.RandomState(seed)
            start = time.perf_counter()
            curve = []
            for epoch in range(1, args.epochs + 1):
                trainer.train_labeler(train_items[i] for i in rng.permutation(len(train_items)))
                if epoch in args.eval_epochs or epoch == args.epochs:
                    seconds = time.perf_counter() - start
                    weights = numpy.ascontiguousarray(trainer.label_table.averaged(), dtype="float32")
                    model.set_weights(numpy.zeros(model.n_arc_weights, dtype="float32"), weights)
                    t0 = time.perf_counter()
                    point = {"epoch": epoch, "train_seconds": seconds}
                    for name, trees in tree_sets.items():
                        pred = [model.label(s, h) for (s, _, _), h in zip(dev_items, trees)]
                        point[name] = las(dev_items, trees, pred, punct)
                    point["label_seconds_per_set"] = (time.perf_counter() - t0) / len(tree_sets)
                    curve.append(point)
                    start += time.perf_counter() - t0
                    common.log(f"flags {flags} seed {seed} epoch {epoch}: " + ", ".join(
                        f"{k} LAS {point[k]['las']:.2f}" for k in tree_sets))
            out[f"flags{flags}-seed{seed}"] = {"flags": flags, "seed": seed, "curve": curve,
                                               "final": curve[-1]}
    return out


def trained_labeler(parser, train_items, flags: int, epochs: int, label_buckets: int):
    from spacy_mstparse.graph import GraphModel, GraphTrainer
    from spacy_mstparse.labeler.arc_labeler import ArcLabeler
    from spacy_mstparse.learners import Perceptron

    labels, root = parser.cfg["labels"], parser.cfg["root_label"]
    model = GraphModel(parser.model_features, labels=labels, root_label=root,
                       label_buckets=label_buckets, labeler_version=2)
    model.labeler = ArcLabeler(model.label_buckets, len(labels), False, 2, flags)
    model.fit_label_restrictions(train_items)
    trainer = GraphTrainer(model, Perceptron())
    rng = numpy.random.RandomState(0)
    for _ in range(epochs):
        trainer.train_labeler(train_items[i] for i in rng.permutation(len(train_items)))
    model.set_weights(numpy.zeros(model.n_arc_weights, dtype="float32"),
                      numpy.ascontiguousarray(trainer.label_table.averaged(), dtype="float32"))
    return model


def stage_speed(args) -> Dict[str, Any]:
    from spacy_mstparse.labeler.arc_labeler import VERSION_FLAGS

    nlp, parser, train, dev = pipeline({}, args.train_limit)
    train_items = list(parser.training_sentences(train))
    dev_items = list(parser.training_sentences(dev))
    with numpy.load(WORK / "heads-o1.npz") as archive:
        trees = [archive[f"arr_{i}"] for i in range(len(archive.files))]
    models = {v: trained_labeler(parser, train_items, VERSION_FLAGS[v], args.epochs,
                                 args.label_buckets) for v in (1, 2)}
    times: Dict[int, List[float]] = {1: [], 2: []}
    for _ in range(args.rounds):
        for version, model in models.items():
            start = time.process_time()
            for (s, _, _), h in zip(dev_items, trees):
                model.label(s, h)
            times[version].append(time.process_time() - start)
    n_words = sum(s.n for s, _, _ in dev_items)
    ratios = sorted(b / a for a, b in zip(times[1], times[2]))
    out = {"rounds": args.rounds, "words": n_words, "seconds": times,
           "median_ratio_v2_over_v1": ratios[len(ratios) // 2],
           "words_per_second": {v: n_words / min(t) for v, t in times.items()}}
    common.log(f"labeling EWT dev: v1 {min(times[1]):.3f}s, v2 {min(times[2]):.3f}s (best of "
               f"{args.rounds}), median ratio {out['median_ratio_v2_over_v1']:.2f}")
    return out


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--stage", choices=("heads", "labels", "speed"), required=True)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--orders", default="1,2")
    p.add_argument("--arc-epochs", type=int, default=10)
    p.add_argument("--variants", default="0,7")
    p.add_argument("--seeds", default="0")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--eval-epochs", default="")
    p.add_argument("--label-buckets", type=int, default=2**17)
    p.add_argument("--train-limit", type=int, default=0)
    p.add_argument("--output", type=Path, default=REPO_ROOT / "benchmarks/results/labeler.json")
    args = p.parse_args(argv)
    args.orders = [int(x) for x in args.orders.split(",")]
    args.variants = [int(x) for x in args.variants.split(",")]
    args.seeds = [int(x) for x in args.seeds.split(",")]
    args.eval_epochs = [int(x) for x in args.eval_epochs.split(",") if x]
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    results: Dict[str, Any] = {}
    if args.output.exists():
        results = json.loads(args.output.read_text())
    section = results.setdefault(args.stage, {})
    stage = {"heads": stage_heads, "labels": stage_labels, "speed": stage_speed}[args.stage]
    section.update(stage(args))
    results.setdefault("runs", []).append({"stage": args.stage,
                                           "command": common.invocation("bench_labeler", argv),
                                           "code": common.working_tree_code(),
                                           "machine": common.machine_info()})
    common.save_results(results, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
