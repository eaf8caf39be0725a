"""Averaging the weights of models trained on different sentence orders (EWT dev).

The measurement behind the ``replicas`` setting (``graph/replicas.py``):
trains one ``mst_parser`` per training order in-process (the component's
``update``, batches of 20, 5-best MIRA, gold tags; the system names of
``bench_clusters``, e.g. ``o2c6b24``), scores EWT dev (UAS / LAS without
punctuation) with each model's own weights, then with the mean of the
prediction weights of every model so far (arc and label weights).

An order is ``s:SEED`` (a fresh ``numpy`` permutation of the training set
each epoch, as the other in-process benchmarks), ``blkB:SEED`` (the same
permutation, then shuffled inside consecutive blocks of B sentences: what a
replica would see if it only reordered each spaCy batch) or ``bufM:SEED``
(the same permutation through a shuffle buffer of M sentences, flushed in
random order at the end of each epoch: close to what ``replicas`` does).

Usage::

    .venv/bin/python -m benchmarks.bench_order_averaging --system o2c6b24 --epochs 3 \\
        --orders s:1,s:0

Output: ``benchmarks/results/order_averaging.json`` (``--output``).
"""
import argparse
from pathlib import Path
from typing import Callable, Iterator, Sequence, Tuple

import numpy

from benchmarks import common
from benchmarks.common import DATA


def order_function(kind: str) -> Callable[[int], Sequence[int]]:
    """Epoch orders for an order name (module docstring)."""
    base, _, seed = kind.partition(":")
    seed = int(seed or 0)
    outer = numpy.random.RandomState(seed)
    inner = numpy.random.RandomState(1000 + seed)
    if not (base == "s" or (base[:3] in ("blk", "buf") and base[3:].isdigit())):
        raise ValueError(f"unknown order {kind!r}: s:SEED, blkB:SEED or bufM:SEED")

    def orders(n: int) -> Sequence[int]:
        order = outer.permutation(n)
        if base.startswith("blk"):
            size = int(base[3:])
            return numpy.concatenate([inner.permutation(order[i:i + size])
                                      for i in range(0, n, size)])
        if base.startswith("buf"):
            size, pool, out = int(base[3:]), [], []
            for x in order:
                pool.append(x)
                if len(pool) > size:
                    j = inner.randint(len(pool))
                    pool[j], pool[-1] = pool[-1], pool[j]
                    out.append(pool.pop())
            inner.shuffle(pool)
            return numpy.array(out + pool)
        return order

    return orders


def order_arguments(description: str, system: str, orders: str, output: str):
    """The arguments every per-order benchmark takes."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--system", default=system, help="a bench_clusters system name")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--orders", default=orders, help="comma-separated order names")
    p.add_argument("--output", type=Path, default=common.RESULTS / output)
    p.add_argument("--data-dir", type=Path, default=DATA)
    p.add_argument("--train-limit", type=int, default=0, help="first N training sentences")
    return p


def parse_order_arguments(p: argparse.ArgumentParser, argv, name: str):
    """(args, order names, the system's config, a results dict with the command,
    code, system, config and epochs); an unknown system or order is a usage error."""
    from benchmarks.bench_clusters import system_config

    args = p.parse_args(argv)
    kinds = [k.strip() for k in args.orders.split(",") if k.strip()]
    try:
        config = system_config(args.system)
        for kind in kinds:
            order_function(kind)
    except ValueError as err:
        p.error(str(err))
    results = {"command": common.invocation(name, argv), "code": common.working_tree_code(),
               "system": args.system, "config": config, "epochs": args.epochs}
    return args, kinds, config, results


def load_data(args, vocab):
    """(training examples, dev gold docs, dev input docs with gold tags) of EWT."""
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import make_input_docs

    examples = common.gold_examples(args.data_dir / "en_ewt-ud-train.conllu", vocab,
                                    args.train_limit)
    dev_gold = list(read_conllu(args.data_dir / "en_ewt-ud-dev.conllu", vocab, n_sents=1))
    return examples, dev_gold, make_input_docs(dev_gold, vocab, gold_tags=True)


def trained_per_order(config: dict, kinds: Sequence[str], examples, vocab,
                      epochs: int) -> Iterator[Tuple[str, object, float]]:
    """For each order name: (the name, an ``mst_parser`` of ``config`` with
    5-best MIRA trained ``epochs`` epochs in that order, batches of 20, the
    training seconds)."""
    import spacy

    from benchmarks.bench_grandparents import MIRA5

    for kind in kinds:
        pipe_nlp = spacy.blank("en", vocab=vocab)
        parser = pipe_nlp.add_pipe("mst_parser", config={**config, "learner": MIRA5})
        pipe_nlp.initialize(lambda: examples)
        seconds = common.train_epochs(parser, examples, epochs, 20, order_function(kind))
        yield kind, parser, seconds


def main(argv=None) -> int:
    import spacy

    from benchmarks.bench_seed_tables import evaluate, sentence_arrays

    p = order_arguments(__doc__.split("\n\n")[0], "o2c6b24", "s:1,s:0", "order_averaging.json")
    args, kinds, config, results = parse_order_arguments(p, argv, "bench_order_averaging")
    results.update(models=[], averages=[])
    nlp = spacy.blank("en")
    examples, dev_gold, dev = load_data(args, nlp.vocab)
    gold_arrays = [sentence_arrays(d) for d in dev_gold]
    weights = []
    for kind, parser, seconds in trained_per_order(config, kinds, examples, nlp.vocab,
                                                   args.epochs):
        scores = evaluate(parser, dev, gold_arrays)
        common.log(f"{kind}: UAS {scores['uas']:.2f} LAS {scores['las']:.2f} "
                   f"(train {seconds:.0f}s)")
        results["models"].append({"order": kind, "uas": scores["uas"], "las": scores["las"],
                                  "train_seconds": seconds})
        weights.append(tuple(w.astype("float64") for w in parser.prediction_weights()))
        if len(weights) > 1:
            arc = numpy.mean([w[0] for w in weights], axis=0).astype("float32")
            label = numpy.mean([w[1] for w in weights], axis=0).astype("float32")
            parser.graph.set_weights(arc, label)
            scores = evaluate(parser, dev, gold_arrays)
            common.log(f"mean of {', '.join(kinds[:len(weights)])}: UAS {scores['uas']:.2f} "
                       f"LAS {scores['las']:.2f}")
            results["averages"].append({"orders": kinds[:len(weights)], "uas": scores["uas"],
                                        "las": scores["las"]})
        common.save_results(results, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
