"""Feature-based recalibration of ``head_prob`` against temperature scaling
(issue 17's coverage target), on a trained ``mst_parser`` pipeline.

Kuleshov & Liang (2015) recalibrate a structured model's marginal
forecasts with a classifier over features of the event. Here: a logistic
regression (L2, Newton steps) predicting whether a word's predicted head is
right, from logit(head_prob) at the fitted temperature and feature groups
that a temperature cannot use: the second-best head's marginal, the arc's
marginal under the first-order part alone, the head's own head_prob, the
word's and the head's coarse tags (the tag also scaling the logit), the
direction, distance and sentence length. T and the regression are fitted on
one half of dev and measured on the other, both ways round; reported: ECE
(15 bins), and coverage / accuracy of the words whose probability is
>= 0.9, for temperature scaling alone and with each feature group.

Usage::

    .venv/bin/python -m benchmarks.bench_recalibration --model MODEL_DIR \\
        --out benchmarks/results/recalibration.json
"""
import argparse
import sys
from pathlib import Path

import numpy

from benchmarks import common
from spacy_mstparse.calibration import _annotated_inputs, _mst_parser
from spacy_mstparse.components.mst_calibration import scored_docs as scored_sentences
from spacy_mstparse.corpus.conll import read_conll
from spacy_mstparse.graph.calibration_metrics import calibration_report
from spacy_mstparse.graph.marginals import arc_marginals
from spacy_mstparse.graph.temperature import fit_temperature
from spacy_mstparse.pipeline_input import load_pipeline

GROUPS = ("second", "first_order", "head_prob_of_head", "tags", "head_tag", "distance")


def word_rows(items, temperature: float):
    """One dict per word: whether its head is right and the raw features."""
    rows = []
    for it in items:
        marg = arc_marginals(it.arc, temperature, True, it.sib).probs
        first = arc_marginals(it.arc, temperature, True, None).probs
        n = len(it.gold) - 1
        for c in range(1, n + 1):
            h = int(it.predicted[c])
            column = numpy.sort(marg[:, c])[::-1]
            rows.append({"ok": float(h == it.gold[c]), "p": float(marg[h, c]),
                         "second": float(column[1]), "first_order": float(first[h, c]),
                         "head_prob_of_head": float(marg[it.predicted[h], h]) if h else 1.0,
                         "tag": it.tags[c - 1], "head_tag": it.tags[h - 1] if h else "ROOT",
                         "h": h, "c": c, "n": n})
    return rows


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return float(numpy.log(p / (1 - p)))


def design(rows, groups, tags, head_tags) -> numpy.ndarray:
    out = []
    for r in rows:
        z = _logit(r["p"])
        f = [1.0, z]
        for g in ("second", "first_order", "head_prob_of_head"):
            if g in groups:
                f.append(_logit(r[g]))
        if "tags" in groups:
            f += [float(r["tag"] == t) for t in tags] + [z * (r["tag"] == t) for t in tags]
        if "head_tag" in groups:
            f += [float(r["head_tag"] == t) for t in head_tags]
        if "distance" in groups:
            d = r["h"] - r["c"] if r["h"] else 0
            f += [float(r["h"] == 0), float(d > 0), float(numpy.log1p(abs(d))),
                  float(numpy.log(r["n"]))]
        out.append(f)
    return numpy.array(out)


def fit_logistic(X: numpy.ndarray, y: numpy.ndarray, l2: float = 1.0) -> numpy.ndarray:
    w = numpy.zeros(X.shape[1])
    for _ in range(50):
        p = 1 / (1 + numpy.exp(-(X @ w)))
        g = X.T @ (p - y) + l2 * w
        g[0] -= l2 * w[0]
        H = (X * (p * (1 - p))[:, None]).T @ X + l2 * numpy.eye(len(w))
        step = numpy.linalg.solve(H, g)
        w -= step
        if numpy.abs(step).max() < 1e-8:
            break
    return w


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--dev", type=Path, default=common.DEFAULT_DEV)
    ap.add_argument("--out", type=Path, default=common.RESULTS / "recalibration.json")
    args = ap.parse_args(argv)
    nlp = load_pipeline(args.model)
    name, pipe = _mst_parser(nlp, args.model, None)
    gold = list(read_conll(args.dev, nlp.vocab, format="conllu", n_sents=1))
    items = scored_sentences(pipe, gold, _annotated_inputs(nlp, name, gold, True))
    half = len(items) // 2
    halves = {"first": items[:half], "second": items[half:]}
    results = {"command": common.invocation("bench_recalibration", argv),
               "commit": common.git("rev-parse", "HEAD"), "model": common.rel(args.model), "runs": []}
    for fit_on, measure_on in (("first", "second"), ("second", "first")):
        t = fit_temperature([(it.arc, it.gold, it.sib) for it in halves[fit_on]], True)[0]
        train, test = word_rows(halves[fit_on], t), word_rows(halves[measure_on], t)
        tags = sorted({r["tag"] for r in train})
        head_tags = sorted({r["head_tag"] for r in train})
        y_test = numpy.array([r["ok"] for r in test])
        run = {"fit_on": fit_on, "measure_on": measure_on, "temperature": t,
               "temperature_only": calibration_report([r["p"] for r in test], y_test)}
        for groups in [(g,) for g in GROUPS] + [GROUPS]:
            w = fit_logistic(design(train, groups, tags, head_tags),
                             numpy.array([r["ok"] for r in train]))
            probs = 1 / (1 + numpy.exp(-(design(test, groups, tags, head_tags) @ w)))
            run["+".join(groups)] = calibration_report(probs, y_test)
        results["runs"].append(run)
        for key, report in run.items():
            if isinstance(report, dict):
                print(f"{fit_on} -> {measure_on} {key:>70}: ECE {100 * report['ece']:.2f}%, "
                      f">= 0.9: coverage {100 * report['coverage@0.9']:.1f}% accuracy "
                      f"{100 * report['accuracy@0.9']:.2f}%")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    common.save_results(results, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
