"""benchmarks/bench_ensemble_marginals.py: the coverage at an accuracy against
every threshold tried by hand, and the mixture marginal as the mean of the
members' marginals (one member: its own marginal)."""
import numpy as np

from benchmarks.bench_ensemble_marginals import coverage_at_accuracy, mixture_probs
from spacy_mstparse.calibration import Scored
from spacy_mstparse.graph.marginals import arc_marginals


def brute_coverage(probs, right, target):
    """The largest prefix (by decreasing probability, ties in input order)
    whose accuracy is >= target, tried prefix by prefix."""
    order = sorted(range(len(probs)), key=lambda i: -probs[i])
    best = 0
    for k in range(1, len(order) + 1):
        if np.mean([right[i] for i in order[:k]]) >= target:
            best = k
    return best / len(order)


def test_coverage_at_accuracy_matches_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(1, 40))
        probs = rng.random(n)
        right = rng.random(n) < probs
        for target in (0.5, 0.8, 0.97):
            assert coverage_at_accuracy(probs, right, target) == brute_coverage(probs, right, target)


def test_coverage_is_zero_when_the_most_probable_word_is_wrong():
    probs = np.array([0.9, 0.5, 0.1])
    right = np.array([False, True, True])
    assert coverage_at_accuracy(probs, right, 0.97) == 0.0


def _item(rng, n):
    arc = rng.normal(size=(n + 1, n + 1)).astype("float32")
    gold = np.concatenate([[-1], rng.integers(0, n + 1, size=n)]).astype("int32")
    return Scored(arc, gold, gold, None, ["X"] * n)


def test_mixture_is_the_mean_of_the_members_marginals():
    rng = np.random.default_rng(1)
    sizes = [3, 5, 6]
    models = [[_item(rng, n) for n in sizes] for _ in range(2)]
    heads = [np.concatenate([[-1], rng.integers(0, n + 1, size=n)]).astype("int32")
             for n in sizes]
    t = 0.7
    pred, gold = mixture_probs(models, t, heads)
    for i, n in enumerate(sizes):
        cols = np.arange(1, n + 1)
        each = [arc_marginals(m[i].arc, t, True, None).probs for m in models]
        expected = (each[0] + each[1]) / 2
        assert np.allclose(pred[i], expected[heads[i][1:], cols])
        assert np.allclose(gold[i], expected[models[0][i].gold[1:], cols])
        # one member alone: its own marginal
        alone, _ = mixture_probs([models[0]], t, heads)
        assert np.allclose(alone[i], each[0][heads[i][1:], cols])
        assert np.all((pred[i] >= 0) & (pred[i] <= 1 + 1e-9))
