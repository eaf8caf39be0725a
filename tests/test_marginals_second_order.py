"""Tests for the second-order (sibling) arc marginals (second_order_marginals).

Against brute force: for n <= 7 every projective single-root tree is
enumerated (the second-order decoder tests' enumeration, with the flat
indices of each tree's arcs, sibling factors and stop factors), its score
under random arc and sibling scores (every cell, stop cells included)
summed, and log Z and each arc's probability computed exactly; also with
large and forbidden stop scores. Then: without sibling scores the marginals equal the first-order
projective ones; forbidden arcs and sibling pairs get probability 0; a
150-word sentence stays finite; at low temperature the marginals concentrate
on the second-order Eisner tree; d log Z / d arc = marginal / T by finite
differences; input validation.
"""
import numpy as np
import pytest
from test_second_order_decoders import all_trees, stop_mask

from spacy_mstparse.decoders import eisner_second_order, projective_marginals
from spacy_mstparse.decoders.marginals_second_order import second_order_marginals


def brute_force(arc, sib, n, temperature):
    """(marginals, log Z) over all projective single-root trees."""
    trees, arcs, sib_idx = all_trees(n, True)
    total = np.asarray(arc, dtype=np.float64).ravel()[arcs].sum(axis=1)
    if sib is not None:
        flat = np.append(np.asarray(sib, dtype=np.float64).ravel(), 0.0)
        total = total + flat[sib_idx].sum(axis=1)
    values = total / temperature
    N = n + 1
    top = values.max()
    if top == -np.inf:
        return np.zeros((N, N)), -np.inf
    log_z = top + np.log(np.exp(values - top).sum())
    p = np.exp(values - log_z)
    marg = np.bincount(arcs.ravel(), weights=np.repeat(p, n), minlength=N * N)
    return marg.reshape(N, N), log_z


def random_instance(rs, n, kind):
    N = n + 1
    arc = rs.randn(N, N)
    sib = rs.randn(N, N, N) * 0.8
    if kind == 1:    # small integers: many ties
        arc = rs.randint(-2, 3, size=(N, N)).astype(np.float64)
        sib = rs.randint(-1, 2, size=(N, N, N)).astype(np.float64)
    elif kind == 2:  # large offsets
        arc = arc * 20.0 + 500.0
        sib = sib * 20.0 - 100.0
    elif kind == 3:  # forbidden arcs and sibling pairs
        arc[rs.rand(N, N) < 0.25] = -np.inf
        sib[rs.rand(N, N, N) < 0.2] = -np.inf
    return arc.astype(np.float32), sib.astype(np.float32)


def check_marginals(marg, n, atol=1e-9):
    assert marg.dtype == np.float64 and marg.shape == (n + 1, n + 1)
    assert np.isfinite(marg).all()
    assert (marg >= 0.0).all() and (marg <= 1.0).all()
    assert (marg[:, 0] == 0.0).all() and (np.diag(marg) == 0.0).all()
    np.testing.assert_allclose(marg[:, 1:].sum(axis=0), 1.0, rtol=0, atol=atol)


N_MATRICES = {1: 8, 2: 16, 3: 24, 4: 24, 5: 16, 6: 8, 7: 3}


@pytest.mark.parametrize("n", range(1, 8))
def test_match_brute_force(n):
    rs = np.random.RandomState(70 + n)
    checked = 0
    for i in range(N_MATRICES[n]):
        arc, sib = random_instance(rs, n, i % 4)
        for temperature in (1.0, 0.4, 3.0):
            ref, ref_lz = brute_force(arc, sib, n, temperature)
            if ref_lz == -np.inf:
                with pytest.raises(ValueError, match="forbidden"):
                    second_order_marginals(arc, sib, temperature)
                continue
            marg, log_z = second_order_marginals(arc, sib, temperature=temperature)
            assert isinstance(log_z, float)
            assert log_z == pytest.approx(ref_lz, rel=1e-9, abs=1e-9)
            np.testing.assert_allclose(marg, ref, rtol=1e-8, atol=1e-10)
            check_marginals(marg, n)
            assert (marg[~np.isfinite(arc)] == 0.0).all()
            checked += 1
    assert checked >= N_MATRICES[n] * 2


def test_uniform_scores_count_trees():
    # 3 words, all scores 0: 7 projective single-root trees.
    N = 4
    marg, log_z = second_order_marginals(np.zeros((N, N), np.float32),
                                         np.zeros((N, N, N), np.float32))
    assert log_z == pytest.approx(np.log(7.0), rel=1e-12)
    check_marginals(marg, 3)
    # Root child 2 in 1 tree, 1 and 3 in 3 trees each.
    assert marg[0, 2] == pytest.approx(1 / 7) and marg[0, 1] == pytest.approx(3 / 7)


def test_hand_computed_sibling_effect():
    # Two words. Trees: 0->1->2 (arc 0->1 + arc 1->2 + sib[0,0,1] + sib[1,1,2])
    # and 0->2->1 (arc 0->2 + arc 2->1 + sib[0,0,2] + sib[2,2,1]).
    arc = np.zeros((3, 3), np.float32)
    sib = np.zeros((3, 3, 3), np.float32)
    sib[1, 1, 2] = np.log(3.0)   # the first tree has weight 3, the second 1
    marg, log_z = second_order_marginals(arc, sib)
    assert log_z == pytest.approx(np.log(4.0))
    assert marg[0, 1] == pytest.approx(0.75) and marg[1, 2] == pytest.approx(0.75)
    assert marg[0, 2] == pytest.approx(0.25) and marg[2, 1] == pytest.approx(0.25)
    # A pair of siblings: 0 -> 2 with 1 and 3 on either side, or a chain.
    arc = np.zeros((4, 4), np.float32)
    sib = np.zeros((4, 4, 4), np.float32)
    sib[2, 2, 3] = sib[2, 2, 1] = 100.0  # both of 2's first children
    marg, _ = second_order_marginals(arc, sib)
    assert marg[2, 1] == pytest.approx(1.0) and marg[2, 3] == pytest.approx(1.0)


def test_hand_computed_stop_factors():
    # Two words. 0->1->2: stops sib[1, 2, 1] (2 outermost right of 1),
    # sib[1, 0, 1], sib[2, 2, 2], sib[2, 0, 2]; 0->2->1: sib[2, 1, 2],
    # sib[2, 2, 2], sib[1, 1, 1] (1 has no right dependent), sib[1, 0, 1].
    arc = np.zeros((3, 3), np.float32)
    sib = np.zeros((3, 3, 3), np.float32)
    sib[1, 2, 1] = np.log(2.0)
    sib[1, 1, 1] = np.log(3.0)
    sib[0, 1, 0] = sib[0, 2, 0] = 50.0   # the root has no stop factors
    marg, log_z = second_order_marginals(arc, sib)
    assert log_z == pytest.approx(np.log(5.0))
    assert marg[1, 2] == pytest.approx(0.4) and marg[2, 1] == pytest.approx(0.6)
    # Three words; word 2 may not be without a left dependent: 2 -> 1.
    arc = np.zeros((4, 4), np.float32)
    sib = np.zeros((4, 4, 4), np.float32)
    sib[2, 0, 2] = -np.inf
    marg, _ = second_order_marginals(arc, sib)
    check_marginals(marg, 3)
    assert marg[2, 1] == pytest.approx(1.0)
    # ... nor without a right dependent: 2 -> 3 too, so 2 is the root's child.
    sib[2, 2, 2] = -np.inf
    marg, _ = second_order_marginals(arc, sib)
    assert marg[2, 1] == pytest.approx(1.0) and marg[2, 3] == pytest.approx(1.0)
    assert marg[0, 2] == pytest.approx(1.0)


@pytest.mark.parametrize("n", range(1, 7))
def test_large_and_forbidden_stops_match_brute_force(n):
    """Large stop scores, some -inf: marginals and log Z equal brute force
    (they do not if the chart ignores the stop cells)."""
    rs = np.random.RandomState(170 + n)
    mask = stop_mask(n + 1)
    checked = 0
    for i in range(12):
        arc, sib = random_instance(rs, n, 0)
        sib[mask] = rs.randn(int(mask.sum())) * 4.0
        if i % 2:
            sib[mask & (rs.rand(*sib.shape) < 0.25)] = -np.inf
        ref, ref_lz = brute_force(arc, sib, n, 1.0)
        if ref_lz == -np.inf:
            with pytest.raises(ValueError, match="forbidden"):
                second_order_marginals(arc, sib)
            continue
        marg, log_z = second_order_marginals(arc, sib)
        assert log_z == pytest.approx(ref_lz, rel=1e-9, abs=1e-9)
        np.testing.assert_allclose(marg, ref, rtol=1e-8, atol=1e-10)
        check_marginals(marg, n)
        checked += 1
    assert checked >= 6


@pytest.mark.parametrize("n", [1, 5, 12, 30])
def test_without_siblings_equals_first_order(n):
    rs = np.random.RandomState(n)
    arc = rs.randn(n + 1, n + 1).astype(np.float32)
    for temperature in (1.0, 0.3):
        ref, ref_lz = projective_marginals(arc, temperature, single_root=True)
        for sib in (None, np.zeros((n + 1,) * 3, np.float32)):
            marg, log_z = second_order_marginals(arc, sib, temperature)
            assert log_z == pytest.approx(ref_lz, rel=1e-10)
            np.testing.assert_allclose(marg, ref, atol=1e-10)


def test_forbidden_arcs_and_pairs_get_zero():
    rs = np.random.RandomState(9)
    n = 20
    arc = rs.randn(n + 1, n + 1).astype(np.float32)
    sib = rs.randn(n + 1, n + 1, n + 1).astype(np.float32)
    forbidden = rs.rand(n + 1, n + 1) < 0.4
    forbidden[np.arange(n), np.arange(1, n + 1)] = False  # keep the chain 0 -> 1 -> ... -> n
    arc[forbidden] = -np.inf
    # Forbid every "first child" factor of word 5 on its right: it takes no
    # right dependent.
    sib[5, 5, 6:] = -np.inf
    arc[5, 6] = 0.0
    marg, log_z = second_order_marginals(arc, sib)
    check_marginals(marg, n)
    used = forbidden.copy()
    used[:, 0] = False
    np.fill_diagonal(used, False)
    assert (marg[used] == 0.0).all()
    assert (marg[5, 6:] == 0.0).all()
    with pytest.raises(ValueError, match="forbidden"):
        second_order_marginals(np.full((4, 4), -np.inf, np.float32))


def test_long_sentence_and_low_temperature():
    n = 150
    rs = np.random.RandomState(150)
    arc = (rs.randn(n + 1, n + 1) * 50.0 + 500.0).astype(np.float32)
    sib = (rs.randn(n + 1, n + 1, n + 1) * 20.0).astype(np.float32)
    marg, log_z = second_order_marginals(arc, sib)
    check_marginals(marg, n, atol=1e-7)
    assert np.isfinite(log_z)
    # At a low temperature the mass is on the second-order Eisner tree.
    n = 25
    arc = rs.randn(n + 1, n + 1).astype(np.float32)
    sib = rs.randn(n + 1, n + 1, n + 1).astype(np.float32)
    best = eisner_second_order(arc, sib)
    marg, _ = second_order_marginals(arc, sib, temperature=1e-3)
    np.testing.assert_allclose(marg[best[1:], np.arange(1, n + 1)], 1.0, atol=1e-6)


def test_gradient_of_log_z_is_marginal_over_temperature():
    rs = np.random.RandomState(4)
    n, T, eps = 6, 0.7, 1e-3
    arc = rs.randn(n + 1, n + 1)
    sib = rs.randn(n + 1, n + 1, n + 1).astype(np.float32)
    marg, _ = second_order_marginals(arc.astype(np.float32), sib, T)
    for h, c in [(0, 3), (2, 5), (6, 1), (4, 3)]:
        up, down = arc.copy(), arc.copy()
        up[h, c] += eps
        down[h, c] -= eps
        lz_up = second_order_marginals(up.astype(np.float32), sib, T)[1]
        lz_down = second_order_marginals(down.astype(np.float32), sib, T)[1]
        assert (lz_up - lz_down) / (2 * eps) == pytest.approx(marg[h, c] / T, abs=1e-3)


def test_validation():
    with pytest.raises(ValueError, match="square"):
        second_order_marginals(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="sib must have shape"):
        second_order_marginals(np.zeros((3, 3), np.float32), np.zeros((3, 3), np.float32))
    sib = np.zeros((3, 3, 3), np.float32)
    sib[1, 1, 2] = np.nan
    with pytest.raises(ValueError, match=r"sib\[1, 1, 2\]"):
        second_order_marginals(np.zeros((3, 3), np.float32), sib)
    with pytest.raises(ValueError, match="temperature"):
        second_order_marginals(np.zeros((3, 3), np.float32), None, 0.0)
    marg, log_z = second_order_marginals(np.zeros((1, 1), np.float32))
    assert marg.shape == (1, 1) and log_z == 0.0
