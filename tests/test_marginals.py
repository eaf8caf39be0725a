"""Tests for the arc marginals (projective_marginals, nonprojective_marginals).

Against brute force: for n <= 6 (and a few n = 7 matrices) every tree of the
right kind (projective or not, one or several root children) is enumerated
with the decoder tests' enumeration; log Z and each arc's probability are
summed over the trees exactly. Then properties (columns sum to 1, forbidden
arcs get 0), 150-word stability, low-temperature concentration on the
Eisner / Chu-Liu-Edmonds trees, finite differences of log Z, closed forms
for the non-projective precision check, and input validation.
"""
from math import log

import numpy as np
import pytest
from test_decoders import enumerate_trees, tree_score

from spacy_mstparse.decoders import (
    chu_liu_edmonds,
    eisner,
    nonprojective_marginals,
    projective_marginals,
)

MARGINALS = {"projective": projective_marginals, "nonprojective": nonprojective_marginals}
DECODERS = {"projective": eisner, "nonprojective": chu_liu_edmonds}
TEMPERATURES = (1.0, 0.3)


def brute_force(scores, temperature, n, projective, single_root):
    """(marginals, log Z) by enumerating the trees; log Z = -inf if none is allowed."""
    trees, single, proj, arcs = enumerate_trees(n)
    mask = np.ones(len(trees), dtype=bool)
    if projective:
        mask &= proj
    if single_root:
        mask &= single
    arcs = arcs[mask]
    values = np.asarray(scores, dtype=np.float64).ravel()[arcs].sum(axis=1) / temperature
    N = n + 1
    top = values.max()
    if top == -np.inf:
        return np.zeros((N, N)), -np.inf
    log_z = top + np.log(np.exp(values - top).sum())
    p = np.exp(values - log_z)
    marg = np.bincount(arcs.ravel(), weights=np.repeat(p, n), minlength=N * N)
    return marg.reshape(N, N), log_z


def random_scores(rs, n, kind):
    if kind == 0:
        s = rs.randn(n + 1, n + 1)
    elif kind == 1:  # small integers: many ties
        s = rs.randint(-2, 3, size=(n + 1, n + 1)).astype(np.float64)
    elif kind == 2:  # large offset
        s = rs.randn(n + 1, n + 1) + 1000.0
    else:  # some forbidden arcs
        s = rs.randn(n + 1, n + 1)
        s[rs.rand(n + 1, n + 1) < 0.3] = -np.inf
    return s.astype(np.float32)


def check_marginals(marg, n):
    assert marg.dtype == np.float64 and marg.shape == (n + 1, n + 1)
    assert np.isfinite(marg).all()
    assert (marg >= 0.0).all() and (marg <= 1.0).all()
    assert (marg[:, 0] == 0.0).all()
    assert (np.diag(marg) == 0.0).all()
    np.testing.assert_allclose(marg[:, 1:].sum(axis=0), 1.0, rtol=0, atol=1e-9)


# ---------------------------------------------------------------------------
# brute force

N_MATRICES = {1: 8, 2: 24, 3: 32, 4: 32, 5: 24, 6: 16, 7: 3}


@pytest.mark.parametrize("n", range(1, 8))
@pytest.mark.parametrize("kind", ["projective", "nonprojective"])
def test_match_brute_force(n, kind):
    rs = np.random.RandomState(100 * n + len(kind))
    fn = MARGINALS[kind]
    checked = 0
    for i in range(N_MATRICES[n]):
        scores = random_scores(rs, n, i % 4)
        for temperature in TEMPERATURES:
            for single_root in (True, False):
                ref, ref_lz = brute_force(scores, temperature, n, kind == "projective", single_root)
                if ref_lz == -np.inf:
                    with pytest.raises(ValueError, match="forbidden"):
                        fn(scores, temperature, single_root)
                    continue
                marg, log_z = fn(scores, temperature=temperature, single_root=single_root)
                assert isinstance(log_z, float)
                assert log_z == pytest.approx(ref_lz, rel=1e-9, abs=1e-9)
                np.testing.assert_allclose(marg, ref, rtol=1e-9, atol=1e-10)
                check_marginals(marg, n)
                assert (marg[~np.isfinite(scores)] == 0.0).all()
                checked += 1
    assert checked >= N_MATRICES[n] * 3  # forbidden arcs rarely leave no tree


@pytest.mark.parametrize("n", [5, 7])
def test_match_brute_force_when_most_terms_are_negligible(n):
    # At a low temperature most terms of the chart's sums fall below
    # exp(-45) of the largest and are skipped; the marginals still match.
    rs = np.random.RandomState(7 * n)
    for _ in range(4):
        scores = random_scores(rs, n, 0)
        for temperature in (0.05, 0.02):
            ref, ref_lz = brute_force(scores, temperature, n, True, True)
            marg, log_z = projective_marginals(scores, temperature=temperature)
            assert log_z == pytest.approx(ref_lz, rel=1e-12)
            np.testing.assert_allclose(marg, ref, rtol=1e-9, atol=1e-12)
            assert ref[(ref > 0) & (ref < 1e-15)].size > 0  # the case has negligible arcs


@pytest.mark.parametrize("margin", [600.0, 700.0])
@pytest.mark.parametrize("single_root", [True, False])
def test_match_brute_force_on_both_sides_of_the_scaled_charts_range(margin, single_root):
    # Words 1 and 2 prefer each other by `margin`: every tree gives up one of
    # those arcs, so with each word's best head weighing 1 the scaled chart's
    # Z is about exp(-margin). At 600 it is in range (above 1e-280), at 700
    # it is not and the log chart answers; both match brute force.
    n = 4
    rs = np.random.RandomState(int(margin))
    scores = rs.randn(n + 1, n + 1).astype(np.float32)
    scores[1, 2] = scores[2, 1] = margin
    ref, ref_lz = brute_force(scores, 1.0, n, True, single_root)
    marg, log_z = projective_marginals(scores, 1.0, single_root)
    assert log_z == pytest.approx(ref_lz, rel=1e-12)
    masked = scores.astype(np.float64)
    np.fill_diagonal(masked, -np.inf)
    scaled_log_z = log_z - masked[:, 1:].max(axis=0).sum()  # log Z of the scaled chart
    assert (scaled_log_z < log(1e-280)) == (margin > 650)
    np.testing.assert_allclose(marg, ref, rtol=1e-9, atol=1e-12)
    check_marginals(marg, n)


def test_uniform_scores_count_trees():
    # All scores 0: log Z = log(number of trees) over 3 words.
    scores = np.zeros((4, 4), dtype=np.float32)
    counts = {
        # root child 1 or 3: 3 projective trees each; root child 2: one
        (projective_marginals, True): 7,
        # non-crossing trees on 4 points rooted at the first: C(9, 3) / 7
        (projective_marginals, False): 12,
        # n^(n-1) single-root trees, (n+1)^(n-1) rooted trees (Cayley)
        (nonprojective_marginals, True): 9,
        (nonprojective_marginals, False): 16,
    }
    for (fn, single_root), count in counts.items():
        marg, log_z = fn(scores, single_root=single_root)
        assert log_z == pytest.approx(log(count), rel=1e-12)
        check_marginals(marg, 3)
    # Non-projective: relabelling words 2 and 3 maps trees to trees.
    marg, _ = nonprojective_marginals(scores)
    assert marg[2, 1] == pytest.approx(marg[3, 1], rel=1e-12)
    assert marg[0, 2] == pytest.approx(marg[0, 3], rel=1e-12)


# ---------------------------------------------------------------------------
# forbidden arcs and trees


def test_only_non_projective_tree_allowed():
    # Allowed: 0 -> 2, 2 -> 3, 3 -> 1 (3 -> 1 crosses 0 -> 2); nothing else.
    scores = np.full((4, 4), -np.inf, dtype=np.float32)
    scores[0, 2] = 1.5
    scores[2, 3] = -2.0
    scores[3, 1] = 0.25
    marg, log_z = nonprojective_marginals(scores)
    assert log_z == pytest.approx(1.5 - 2.0 + 0.25)
    expected = np.zeros((4, 4))
    expected[0, 2] = expected[2, 3] = expected[3, 1] = 1.0
    np.testing.assert_allclose(marg, expected, atol=1e-12)
    with pytest.raises(ValueError, match="projective_marginals: every single-root tree"):
        projective_marginals(scores)


@pytest.mark.parametrize("kind", ["projective", "nonprojective"])
def test_no_tree_raises(kind):
    fn = MARGINALS[kind]
    scores = np.zeros((4, 4), dtype=np.float32)
    scores[0, 1:] = -np.inf  # nothing may attach to the root
    for single_root in (True, False):
        with pytest.raises(ValueError, match="forbidden"):
            fn(scores, single_root=single_root)
    # Word 2 can take no head at all.
    scores = np.zeros((4, 4), dtype=np.float32)
    scores[:, 2] = -np.inf
    with pytest.raises(ValueError, match="forbidden"):
        fn(scores)
    # Two words that may only hang from the root: fine with several root
    # children, impossible with one.
    scores = np.zeros((3, 3), dtype=np.float32)
    scores[1, 2] = scores[2, 1] = -np.inf
    with pytest.raises(ValueError, match="every single-root tree over the 2 words"):
        fn(scores)
    marg, log_z = fn(scores, single_root=False)
    assert log_z == pytest.approx(0.0)
    assert marg[0, 1] == pytest.approx(1.0) and marg[0, 2] == pytest.approx(1.0)


@pytest.mark.parametrize("kind", ["projective", "nonprojective"])
def test_forbidden_arcs_get_zero_on_larger_sentences(kind):
    rs = np.random.RandomState(5)
    n = 25
    scores = rs.randn(n + 1, n + 1).astype(np.float32)
    forbidden = rs.rand(n + 1, n + 1) < 0.5
    forbidden[np.arange(n), np.arange(1, n + 1)] = False  # keep the chain 0 -> 1 -> ... -> n
    scores[forbidden] = -np.inf
    marg, log_z = MARGINALS[kind](scores)
    check_marginals(marg, n)
    assert np.isfinite(log_z)
    used = forbidden.copy()
    used[:, 0] = False
    np.fill_diagonal(used, False)
    assert used.sum() > 100
    assert (marg[used] == 0.0).all()


# ---------------------------------------------------------------------------
# stability, temperature, gradients


@pytest.mark.parametrize("kind", ["projective", "nonprojective"])
@pytest.mark.parametrize("single_root", [True, False])
def test_long_sentence_large_scores(kind, single_root):
    n = 150
    rs = np.random.RandomState(150)
    scores = (rs.randn(n + 1, n + 1) * 50.0 + 500.0).astype(np.float32)
    marg, log_z = MARGINALS[kind](scores, single_root=single_root)
    check_marginals(marg, n)
    # best <= log Z <= best + log(number of trees), and there are at most
    # (n+1)^(n-1) trees (Cayley).
    best = tree_score(scores, DECODERS[kind](scores, single_root=single_root))
    assert best <= log_z + 1e-6 * abs(best)
    assert log_z <= best + (n - 1) * log(n + 1)


def test_long_sentence_projective_below_nonprojective():
    n = 150
    rs = np.random.RandomState(151)
    scores = (rs.randn(n + 1, n + 1) * 3.0).astype(np.float32)
    for single_root in (True, False):
        _, lz_p = projective_marginals(scores, single_root=single_root)
        _, lz_n = nonprojective_marginals(scores, single_root=single_root)
        assert lz_p < lz_n  # projective trees are a subset


@pytest.mark.parametrize("kind", ["projective", "nonprojective"])
def test_low_temperature_concentrates_on_best_tree(kind):
    # Unit noise plus 4 on the arcs of a random tree, so that the best tree
    # is separated from the next ones (pure noise has near ties at T = 0.03).
    n = 30
    fn, decode = MARGINALS[kind], DECODERS[kind]
    cols = np.arange(1, n + 1)
    for seed in range(5):
        rs = np.random.RandomState(seed)
        scores = rs.randn(n + 1, n + 1)
        order = rs.permutation(cols)
        for k, c in enumerate(order):
            scores[0 if k == 0 else order[rs.randint(k)], c] += 4.0
        scores = scores.astype(np.float32)
        best = decode(scores)
        mass = []
        for temperature in (1.0, 0.3, 0.1, 0.03):
            marg, log_z = fn(scores, temperature=temperature)
            check_marginals(marg, n)
            # log Z >= best / T, with equality approached as T -> 0
            assert log_z >= tree_score(scores, best) / temperature - 1e-9 * abs(log_z)
            mass.append(marg[best[1:], cols].mean())
        assert mass == sorted(mass)
        assert mass[-1] > 0.95
        # the best tree's arcs have the largest marginal of each word
        assert (marg[:, 1:].argmax(axis=0) == best[1:]).all()


def test_projective_zero_temperature_limit():
    # Tiny temperatures (the log chart: out of the scaled chart's range) are
    # fine and give the Eisner tree.
    n = 40
    rs = np.random.RandomState(41)
    scores = rs.randn(n + 1, n + 1).astype(np.float32)
    best = eisner(scores)
    marg, log_z = projective_marginals(scores, temperature=1e-6)
    check_marginals(marg, n)
    np.testing.assert_allclose(marg[best[1:], np.arange(1, n + 1)], 1.0, atol=1e-9)
    assert log_z * 1e-6 == pytest.approx(tree_score(scores, best), abs=1e-6)


@pytest.mark.parametrize("kind", ["projective", "nonprojective"])
@pytest.mark.parametrize("single_root", [True, False])
def test_gradient_of_log_z_is_marginal(kind, single_root):
    # Scores on a 2^-8 grid and a step of 2^-7 are exact in float32.
    n = 5
    rs = np.random.RandomState(55)
    scores = (np.round(rs.randn(n + 1, n + 1) * 256) / 256).astype(np.float32)
    temperature = 0.7
    fn = MARGINALS[kind]
    marg, _ = fn(scores, temperature, single_root)
    step = 2.0**-7
    for h in range(n + 1):
        for c in range(1, n + 1):
            if h == c:
                continue
            up = scores.copy()
            up[h, c] += step
            down = scores.copy()
            down[h, c] -= step
            fd = (fn(up, temperature, single_root)[1] - fn(down, temperature, single_root)[1]) / (2 * step)
            assert fd == pytest.approx(marg[h, c] / temperature, rel=1e-4, abs=1e-7), (h, c)


# ---------------------------------------------------------------------------
# the matrix-tree theorem's precision check


@pytest.mark.parametrize("depth", [1.0, 5.0, 12.0])
def test_two_cycle_closed_form(depth):
    # Words 1 and 2 prefer each other (score 0), root arcs cost `depth`.
    # Multiple root children: trees {0->1, 0->2}, {0->1, 1->2}, {0->2, 2->1}.
    scores = np.zeros((3, 3), dtype=np.float32)
    scores[0, 1] = scores[0, 2] = -depth
    marg, log_z = nonprojective_marginals(scores, single_root=False)
    a, b = np.exp(-2 * depth), np.exp(-depth)
    z = a + 2 * b
    assert log_z == pytest.approx(np.log(z), rel=1e-12)
    assert marg[0, 1] == pytest.approx((a + b) / z, rel=1e-9)
    assert marg[2, 1] == pytest.approx(b / z, rel=1e-9)


def test_precision_check_raises_instead_of_returning_noise():
    # As above with the cycle 40 T deep: the determinant is ~e^-40 next to
    # entries of size 1, so the marginals would have no correct digit.
    scores = np.zeros((3, 3), dtype=np.float32)
    scores[0, 1] = scores[0, 2] = -40.0
    with pytest.raises(FloatingPointError, match="temperature=1.0"):
        nonprojective_marginals(scores, single_root=False)
    # The same distribution at a higher temperature is fine.
    marg, _ = nonprojective_marginals(scores, temperature=8.0, single_root=False)
    check_marginals(marg, 2)
    # The projective chart has no such limit.
    marg, log_z = projective_marginals(scores, single_root=False)
    assert log_z == pytest.approx(np.log(2.0) - 40.0)
    assert marg[0, 1] == pytest.approx(0.5) and marg[2, 1] == pytest.approx(0.5)


# ---------------------------------------------------------------------------
# special cases and validation


@pytest.mark.parametrize("fn", [projective_marginals, nonprojective_marginals])
@pytest.mark.parametrize("single_root", [True, False])
def test_tiny(fn, single_root):
    marg, log_z = fn(np.zeros((1, 1)), single_root=single_root)
    assert marg.dtype == np.float64 and marg.shape == (1, 1) and marg[0, 0] == 0.0
    assert log_z == 0.0
    marg, log_z = fn(np.array([[7.0, 3.0], [np.nan, np.nan]]), 2.0, single_root)
    assert marg.tolist() == [[0.0, 1.0], [0.0, 0.0]]
    assert log_z == pytest.approx(1.5)


@pytest.mark.parametrize("fn", [projective_marginals, nonprojective_marginals])
def test_input_conversion_and_validation(fn):
    rs = np.random.RandomState(12)
    scores = rs.randn(6, 6).astype(np.float32)
    marg, log_z = fn(scores)
    noisy = scores.copy()
    noisy[:, 0] = np.nan
    noisy[np.arange(6), np.arange(6)] = np.inf
    for variant in (scores.astype(np.float64), scores.tolist(), np.asfortranarray(scores), noisy):
        m2, lz2 = fn(variant)
        np.testing.assert_array_equal(m2, marg)
        assert lz2 == log_z
    for bad in (np.zeros(4), np.zeros((3, 4)), np.zeros((2, 2, 2)), np.zeros((0, 0))):
        with pytest.raises(ValueError, match="square"):
            fn(bad)
    for temperature in (0.0, -1.0, np.inf, np.nan):
        with pytest.raises(ValueError, match="temperature"):
            fn(scores, temperature)
    for value, name in ((np.nan, "nan"), (np.inf, "inf"), (1e39, "inf")):
        bad = scores.copy().astype(np.float64)
        bad[2, 4] = value
        with pytest.raises(ValueError, match=rf"scores\[2, 4\] is {name}"), np.errstate(over="ignore"):
            fn(bad)
    with pytest.raises(ValueError, match="overflow"):
        fn(scores * 1e30, 1e-300)

