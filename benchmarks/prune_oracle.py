"""Oracle loss of arc pruning: the share of gold arcs of EWT dev that
``decoders.pruning`` drops when it keeps the k best heads of every word
(plus its left neighbour), under the first-order model's cheap first-pass
scores (``FirstOrderFeatures.score(..., first_pass=True)``: unigram sums and
the tag-pair template) and under its full arc scores, float and 8-bit
weights.

Trains ``mst_parser`` first order with the component defaults (5-best MIRA;
``--epochs`` epochs on EWT train, gold tags), then counts.

Usage::

    .venv/bin/python -m benchmarks.prune_oracle                  # ~3 min
    .venv/bin/python -m benchmarks.prune_oracle --train-limit 2000

Output: ``benchmarks/results/prune_oracle.json`` and a Markdown table.
"""
import argparse
import json
import os
import sys
from pathlib import Path

from benchmarks import common
from benchmarks.common import DATA


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--train-limit", type=int, default=0)
    p.add_argument("--ks", default="2,4,6,8,10,15")
    p.add_argument("--output", type=Path, default=common.RESULTS / "prune_oracle.json")
    p.add_argument("--data-dir", type=Path, default=DATA)
    args = p.parse_args(argv)
    ks = [int(k) for k in args.ks.split(",")]

    import numpy
    import spacy

    from spacy_mstparse.components import mst_parser  # noqa: F401
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.decoders.pruning import prune_heads
    from spacy_mstparse.pipeline_input import make_input_docs

    nlp = spacy.blank("en")
    examples = common.gold_examples(args.data_dir / "en_ewt-ud-train.conllu", nlp.vocab,
                                    args.train_limit)
    parser = nlp.add_pipe("mst_parser")
    nlp.initialize(lambda: examples)
    common.train_epochs(parser, examples, args.epochs, 16, common.numpy_orders(0))
    gold = list(read_conllu(args.data_dir / "en_ewt-ud-dev.conllu", nlp.vocab, n_sents=1))
    dev = make_input_docs(gold, nlp.vocab, gold_tags=True)
    parser.prediction_weights()
    graph = parser.graph
    sentences = [parser.encoder.encode(d, [(0, len(d))])[0] for d in dev]
    gold_heads = [numpy.array([-1] + [0 if t.head.i == t.i else t.head.i + 1 for t in ref])
                  for ref in gold]
    n_arcs = sum(len(h) - 1 for h in gold_heads)
    result = {"command": common.invocation("prune_oracle", argv),
              "commit": common.git("rev-parse", "HEAD"), "machine": common.machine_info(),
              "gold_arcs": n_arcs, "oracle_loss_percent": {}}
    for quantized in (False, True):
        graph.quantize_weights = quantized
        weights = graph.prediction_arc_weights
        for kind in ("first_pass", "full"):
            matrices = [graph.first_order.score(s, weights, first_pass=kind == "first_pass")
                        for s in sentences]
            row = {}
            for k in ks:
                lost = 0
                for scores, heads in zip(matrices, gold_heads):
                    kept = prune_heads(scores, k)
                    lost += int((~kept[heads[1:], numpy.arange(1, len(heads))]).sum())
                row[k] = 100.0 * lost / n_arcs
            result["oracle_loss_percent"][f"{kind}{'-q8' if quantized else ''}"] = row
    result["loadavg_end"] = list(os.getloadavg())
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1))
    print("| scores | " + " | ".join(f"k = {k}" for k in ks) + " |")
    print("|---|" + "---:|" * len(ks))
    for name, row in result["oracle_loss_percent"].items():
        print(f"| {name} | " + " | ".join(f"{row[k]:.2f}%" for k in ks) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
