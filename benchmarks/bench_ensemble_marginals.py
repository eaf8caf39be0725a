"""Arc probabilities from several training orders (issue 17's coverage target).

``head_prob`` is the marginal of the predicted arc under one model's
distribution over trees. Two models trained on different orders of the
same sentences (the ``replicas`` of ``graph/replicas.py``) agree on most
arcs and disagree on some; their disagreement is information a single
model's marginal does not have (ensemble uncertainty, Lakshminarayanan et
al. 2017). This trains R models in-process (the ``bench_clusters`` system,
``bench_order_averaging``'s orders, gold tags), parses EWT dev with the
mean of their weights (what ``replicas = R`` ships: the heads users get),
and compares, for those heads:

* ``mean weights``: the marginal under the mean-weight model (today's
  ``head_prob``; p(tree) proportional to exp(mean score / T));
* ``mixture``: the mean over the R models of each model's marginal at a
  shared T (a mixture of the R distributions over trees).

T is fitted (gold-head log-likelihood) on one half of dev and measured on
the other, both ways round. Reported: ECE (15 bins), coverage / accuracy at
``head_prob >= 0.9``, and the share of words that are 97% right when ranked
by the probability (what a perfect recalibration of that ranking could
cover).

Usage::

    .venv/bin/python -m benchmarks.bench_ensemble_marginals --system o2c6b24s --epochs 3 \\
        --orders s:0,s:1 --output benchmarks/results/ensemble_marginals.json
"""
import math
from typing import List, Sequence

import numpy

from benchmarks import common


def coverage_at_accuracy(probs: numpy.ndarray, right: numpy.ndarray, target: float) -> float:
    """The largest share of words, taken by decreasing probability, whose
    accuracy is still >= ``target``."""
    order = numpy.argsort(-probs, kind="stable")
    acc = numpy.cumsum(right[order]) / numpy.arange(1, len(order) + 1)
    ok = numpy.nonzero(acc >= target)[0]
    return float((ok[-1] + 1) / len(order)) if ok.size else 0.0


def mixture_probs(per_model: Sequence[List], temperature: float, predicted: List[numpy.ndarray],
                  projective: bool = True):
    """For every sentence: (the mixture marginal of each predicted head, and
    of each gold head), the mixture being the mean of the models' marginals."""
    from spacy_mstparse.graph.marginals import arc_marginals

    pred_p, gold_p = [], []
    for i, heads in enumerate(predicted):
        mix = None
        for items in per_model:
            it = items[i]
            m = arc_marginals(it.arc, temperature, projective, it.sib).probs
            mix = m if mix is None else mix + m
        mix /= len(per_model)
        gold = per_model[0][i].gold
        cols = numpy.arange(1, len(gold))
        pred_p.append(mix[heads[1:], cols])
        gold_p.append(mix[gold[1:], cols])
    return pred_p, gold_p


def fit_mixture_temperature(per_model, predicted, sel, low=0.05, high=2.0, grid=9, refine=10):
    """T maximising the mean log mixture-probability of the gold heads of
    the sentences ``sel`` (a grid over log T, then golden-section search)."""
    from spacy_mstparse.graph.temperature import golden_section_max

    subset = [[items[i] for i in sel] for items in per_model]
    heads = [predicted[i] for i in sel]

    def f(log_t):
        _, gold_p = mixture_probs(subset, math.exp(log_t), heads)
        return float(numpy.mean(numpy.log(numpy.maximum(numpy.concatenate(gold_p), 1e-12))))

    points = numpy.linspace(math.log(low), math.log(high), grid)
    values = [f(x) for x in points]
    i = int(numpy.argmax(values))
    x, fx = golden_section_max(f, points[max(i - 1, 0)], points[min(i + 1, grid - 1)], refine)
    return float(math.exp(x if fx >= values[i] else points[i]))


def measure(probs, right) -> dict:
    from spacy_mstparse.graph.calibration_metrics import calibration_report

    p = numpy.concatenate(probs)
    y = numpy.concatenate(right)
    out = calibration_report(p, y)
    out["coverage_at_97"] = coverage_at_accuracy(p, y, 0.97)
    return out


def main(argv=None) -> int:
    import spacy

    from benchmarks.bench_order_averaging import (
        load_data,
        order_arguments,
        parse_order_arguments,
        trained_per_order,
    )
    from spacy_mstparse.components.mst_calibration import head_probabilities, scored_docs as scored_sentences
    from spacy_mstparse.graph.temperature import fit_temperature

    p = order_arguments(__doc__.split("\n\n")[0], "o2c6b24s", "s:0,s:1", "ensemble_marginals.json")
    args, kinds, config, results = parse_order_arguments(p, argv, "bench_ensemble_marginals")
    if len(kinds) < 2:
        p.error("give at least two orders")
    results["orders"] = kinds
    nlp = spacy.blank("en")
    examples, dev_gold, dev = load_data(args, nlp.vocab)
    weights, parser = [], None
    for kind, parser, seconds in trained_per_order(config, kinds, examples, nlp.vocab,
                                                   args.epochs):
        common.log(f"{kind}: trained in {seconds:.0f}s")
        weights.append(tuple(numpy.array(w, dtype="float32") for w in parser.prediction_weights()))
    per_model = []
    for arc, label in weights:
        parser.graph.set_weights(arc, label)
        per_model.append(scored_sentences(parser, dev_gold, dev))
    mean = [numpy.mean([w[i] for w in weights], axis=0).astype("float32") for i in (0, 1)]
    parser.graph.set_weights(*mean)
    mean_items = scored_sentences(parser, dev_gold, dev)
    predicted = [it.predicted for it in mean_items]
    results["uas_all_words"] = {
        "mean weights": float(numpy.mean(numpy.concatenate(
            [it.predicted[1:] == it.gold[1:] for it in mean_items]))),
        **{kind: float(numpy.mean(numpy.concatenate(
            [it.predicted[1:] == it.gold[1:] for it in items])))
           for kind, items in zip(kinds, per_model)}}
    common.log(f"UAS (every word): {results['uas_all_words']}")
    n = len(mean_items)
    halves = {"first half -> second": (range(0, n // 2), range(n // 2, n)),
              "second half -> first": (range(n // 2, n), range(0, n // 2))}
    results["splits"] = {}
    for name, (fit_on, test_on) in halves.items():
        row = {}
        t_mean, _ = fit_temperature([(mean_items[i].arc, mean_items[i].gold, mean_items[i].sib)
                                     for i in fit_on], True)
        probs, right = head_probabilities([mean_items[i] for i in test_on], t_mean, True)
        row["mean weights"] = dict(measure([probs], [right]), T=t_mean)
        heads = [predicted[i] for i in test_on]
        ok = [mean_items[i].predicted[1:] == mean_items[i].gold[1:] for i in test_on]
        sizes = sorted({2, len(per_model)})
        for size in sizes:
            models = per_model[:size]
            t_mix = fit_mixture_temperature(models, predicted, list(fit_on))
            test_models = [[items[i] for i in test_on] for items in models]
            pred_p, _ = mixture_probs(test_models, t_mix, heads)
            key = "mixture" if size == len(per_model) else f"mixture of the first {size}"
            row[key] = dict(measure(pred_p, ok), T=t_mix)
        for k, v in row.items():
            common.log(f"{name}, {k}: T {v['T']:.3f} ECE {100 * v['ece']:.2f}% "
                       f">=0.9 {100 * v['coverage@0.9']:.1f}% / {100 * v['accuracy@0.9']:.2f}% "
                       f"97%-right by rank {100 * v['coverage_at_97']:.1f}%")
        results["splits"][name] = row
        common.save_results(results, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
