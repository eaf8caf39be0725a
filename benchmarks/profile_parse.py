"""Where parse time goes: encode, arc scoring, decoding, labeling.

Loads a trained pipeline, encodes the gold-tagged sentences of a CoNLL-U
file, and times each stage of mst_parser's prediction separately through
its ``GraphModel`` (``parser.graph``: ``scores``, ``decode``, ``label``;
best of ``--repeats`` runs); then times first-order arc scoring alone with
random weight tables of several sizes, to show how much of the scoring cost
is memory access. Prints the figures and writes them as JSON.

    python -m benchmarks.profile_parse MODEL ../shared/data/ud/en_ewt-ud-dev.conllu \
        --output benchmarks/results/profile_parse.json
"""
import argparse
import json
import time
from pathlib import Path

import numpy
import spacy

from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.pipeline_input import make_input_docs
from spacy_mstparse.features.first_order import FirstOrderFeatures


def best_time(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("gold")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--output", type=Path, default=None)
    args = ap.parse_args()

    nlp = spacy.load(args.model)
    parser = nlp.get_pipe("mst_parser")
    gold = list(read_conllu(args.gold, nlp.vocab))
    docs = make_input_docs(gold, nlp.vocab, gold_tags=True)
    n_words = sum(len(d) for d in docs)
    parser.prediction_weights()
    graph = parser.graph
    features = parser.model_features
    bounds = [parser.sentence_bounds(d) for d in docs]

    sentences = []
    stages = {}
    stages["encode"] = best_time(
        lambda: sentences.__setitem__(
            slice(None), [s for d, b in zip(docs, bounds) for s in parser.encoder.encode(d, b)]
        ),
        args.repeats,
    )
    scores = []
    stages["score"] = best_time(
        lambda: scores.__setitem__(slice(None), [graph.scores(s) for s in sentences]),
        args.repeats,
    )
    heads = []
    stages["decode"] = best_time(
        lambda: heads.__setitem__(slice(None), [graph.decode(f)[0] for f in scores]),
        args.repeats,
    )
    stages["label"] = best_time(
        lambda: [graph.label(s, h) for s, h in zip(sentences, heads)],
        args.repeats,
    )
    total = sum(stages.values())
    result = {
        "model": args.model,
        "gold": args.gold,
        "words": n_words,
        "decoder": parser.decoder,
        "order": parser.order,
        "features": parser.features.to_dict(),
        "stage_seconds": stages,
        "stage_share": {k: v / total for k, v in stages.items()},
        "words_per_second_all_stages": n_words / total,
        "scoring_words_per_second_by_table_size": {},
    }
    rng = numpy.random.RandomState(0)
    for log2 in (10, 16, 20, 22, 24):
        table = FirstOrderFeatures(2**log2, features.n_tagsets, features.use_morph,
                                   features.direction_backoff)
        weights = rng.randn(2**log2).astype("float32")
        seconds = best_time(lambda: [table.score(s, weights) for s in sentences], args.repeats)
        result["scoring_words_per_second_by_table_size"][f"2^{log2}"] = n_words / seconds

    for name, seconds in stages.items():
        print(f"{name:<8} {seconds:7.3f} s  {100 * seconds / total:5.1f}%")
    print(f"all stages: {n_words / total:,.0f} words/s")
    for size, speed in result["scoring_words_per_second_by_table_size"].items():
        print(f"scoring with a {size:>5} table: {speed:,.0f} words/s")
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
