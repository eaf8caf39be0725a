"""Calibration and coverage of ``token._.head_prob`` by kind of token
(issue 17's targets), on a trained and calibrated ``mst_parser`` pipeline.

``calibrate`` reports over every token, punctuation included; UAS leaves
punctuation out. This parses a dev file through the public API
(``spacy.load`` with ``probabilities`` on, ``token._.head_prob``; gold
words and sentences, gold tags with ``--gold-tags``) and reports ECE (15
bins), accuracy and the coverage / accuracy of the tokens whose
``head_prob`` is >= 0.9 and >= 0.99 for all tokens, the tokens that are not
punctuation (gold UPOS ``PUNCT``) and punctuation alone. Calibrate the
model first (``python -m spacy_mstparse calibrate``): the temperature in
the model is used as it is.

Usage::

    .venv/bin/python -m benchmarks.bench_coverage --model MODEL_DIR --gold-tags \\
        --out benchmarks/results/coverage_o2.json
"""
import argparse
import sys
from pathlib import Path

import numpy

from benchmarks import common
from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.graph.calibration_metrics import calibration_report
from spacy_mstparse.pipeline_input import make_input_docs

GROUPS = {"all": None, "without punctuation": False, "punctuation": True}


def token_rows(model: Path, dev: Path, gold_tags: bool, component: str):
    """(head_prob, head right?, punctuation?) for every dev token."""
    import spacy

    nlp = spacy.load(model, config={"components": {component: {"probabilities": True}}})
    gold = list(read_conllu(dev, nlp.vocab, n_sents=1))
    docs = make_input_docs(gold, nlp.vocab, gold_tags=gold_tags)
    rows = []
    for reference, doc in zip(gold, nlp.pipe(docs)):
        for ref, tok in zip(reference, doc):
            rows.append((tok._.head_prob, tok.head.i == ref.head.i, ref.pos_ == "PUNCT"))
    return rows


def report(rows) -> dict:
    probs = numpy.array([r[0] for r in rows], dtype="float64")
    right = numpy.array([r[1] for r in rows], dtype=bool)
    punct = numpy.array([r[2] for r in rows], dtype=bool)
    out = {}
    for name, want in GROUPS.items():
        sel = numpy.ones(len(rows), dtype=bool) if want is None else punct == want
        out[name] = dict(calibration_report(probs[sel], right[sel]), share=float(sel.mean()))
    return out


def table(groups: dict) -> str:
    lines = ["| tokens | share | head accuracy | ECE | >= 0.9: coverage / accuracy "
             "| >= 0.99: coverage / accuracy |", "| --- | ---: | ---: | ---: | --- | --- |"]
    for name, r in groups.items():
        lines.append(
            f"| {name} | {r['share']:.1%} | {r['accuracy']:.2%} | {r['ece']:.2%} "
            f"| {r['coverage@0.9']:.1%} / {r['accuracy@0.9']:.2%} "
            f"| {r['coverage@0.99']:.1%} / {r['accuracy@0.99']:.2%} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, required=True, help="a calibrated pipeline directory")
    p.add_argument("--dev", type=Path, default=common.DEFAULT_DEV)
    p.add_argument("--gold-tags", action="store_true", help="give the parser the gold tags")
    p.add_argument("--component", default="mst_parser")
    p.add_argument("--out", type=Path, default=common.RESULTS / "coverage.json")
    args = p.parse_args(argv)
    groups = report(token_rows(args.model, args.dev, args.gold_tags, args.component))
    text = table(groups)
    print(text)
    results = {"command": common.invocation("bench_coverage", argv),
               "model": common.rel(args.model), "dev": common.rel(args.dev),
               "gold_tags": args.gold_tags, "groups": groups,
               "code": common.working_tree_code()}
    common.save_results(results, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
