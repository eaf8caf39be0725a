"""The one decode entry (``decoders.dispatch``): every (decoder, order, k)
it declares is served, the exact combinations equal brute force on small
sentences (n <= 6), the approximate ones return distinct valid trees, best
first, the 1-best among them; ``tree_score`` and ``add_hamming_loss``."""
import numpy as np
import pytest
from test_grandparent_decoder import brute_force as grand_brute_force
from test_second_order_decoders import all_scores

from spacy_mstparse.decoders import NoTreeError, is_projective, is_valid_tree
from spacy_mstparse.decoders.dispatch import (
    DECODERS,
    Factors,
    add_hamming_loss,
    decode,
    serves,
)

TOL = 1e-3
KS = (1, 2, 5)


def factors(rs, n, order, pruned=False):
    N = n + 1
    arc = rs.randn(N, N).astype(np.float32)
    if pruned:
        arc[rs.rand(N, N) < 0.25] = -np.inf
    sib = (rs.randn(N, N, N) * 0.7).astype(np.float32) if order >= 2 else None
    grand = (rs.randn(N, N, N) * 0.7).astype(np.float32) if order == 3 else None
    return Factors(arc, sib, grand)


def brute_force(f, projective):
    """(trees, scores) of every single-root tree of the decoder's search space."""
    if f.order == 3:
        return grand_brute_force(f.arc, f.sib, f.grand, f.n)
    return all_scores(f.arc, f.sib, f.n, projective)


def test_the_declaration():
    assert set(DECODERS) == {"eisner", "chu_liu_edmonds"}
    for k in KS:
        assert all(serves("eisner", order, k) for order in (1, 2, 3))
        assert serves("chu_liu_edmonds", 1, k) and serves("chu_liu_edmonds", 2, k)
        assert not serves("chu_liu_edmonds", 3, k)
    assert not serves("eisner", 4) and not serves("eisner", 1, 0) and not serves("other", 1)
    f = factors(np.random.RandomState(0), 4, 3)
    with pytest.raises(ValueError, match="order-3"):
        decode("chu_liu_edmonds", f)
    with pytest.raises(ValueError, match="decoder must be one of"):
        decode("other", f)


def exact(name, order, k):
    """Exact: Eisner at every order 1-best, k-best up to order 2; CLE at first order."""
    return order == 1 or (name == "eisner" and (order == 2 or k == 1))


# Every (decoder, order, k) the entry says it serves.
SERVED = [(name, order, k) for name in sorted(DECODERS) for order in (1, 2, 3) for k in KS
          if serves(name, order, k)]


@pytest.mark.parametrize("name,order,k", SERVED)
@pytest.mark.parametrize("n", range(1, 7))
def test_every_combination_against_brute_force(name, order, k, n):
    projective = DECODERS[name].projective
    rs = np.random.RandomState(1000 * order + 10 * k + n)
    for trial in range(12 if n < 6 else 4):
        f = factors(rs, n, order, pruned=trial % 3 == 2)
        trees, total = brute_force(f, projective)
        allowed = np.sort(total[np.isfinite(total)])[::-1]
        if not len(allowed):
            with pytest.raises(NoTreeError):
                decode(name, f, k)
            continue
        got = decode(name, f, k)
        assert 1 <= len(got) <= min(k, len(allowed))
        assert len({h.tobytes() for h in got}) == len(got)
        scores = [f.tree_score(h) for h in got]
        for h, s in zip(got, scores):
            assert is_valid_tree(h) and (h[1:] == 0).sum() == 1 and np.isfinite(s)
            if projective:
                assert is_projective(h)
            index = np.flatnonzero((trees[:, 1:] == h[1:]).all(axis=1))
            assert len(index) == 1 or not projective   # CLE order 2 may leave the space
            if len(index):
                assert s == pytest.approx(total[index[0]], abs=TOL)
        assert all(a >= b - 1e-9 for a, b in zip(scores, scores[1:]))
        if exact(name, order, k):
            assert len(got) == min(k, len(allowed))
            np.testing.assert_allclose(scores, allowed[:len(got)], atol=TOL)
        elif order == 3:   # the exact best tree heads the list
            assert scores[0] == pytest.approx(allowed[0], abs=TOL)
        else:              # at least as good as the best projective tree
            proj = all_scores(f.arc, f.sib, n, True)[1]
            assert scores[0] >= proj.max() - TOL


@pytest.mark.parametrize("name,order", sorted({(name, order) for name, order, _ in SERVED}))
def test_k_best_starts_with_the_1_best(name, order):
    """(CLE at order 2: with a tree at least as good, climbed from another start.)"""
    rs = np.random.RandomState(order)
    for n in (0, 1, 4, 9):
        f = factors(rs, n, order)
        one = decode(name, f)
        assert len(one) == 1
        if n == 0:
            assert decode(name, f, 3)[0].tolist() == [-1]
            continue
        first = decode(name, f, 4)[0]
        if name == "chu_liu_edmonds" and order == 2:
            assert f.tree_score(first) >= f.tree_score(one[0])
        else:
            np.testing.assert_array_equal(first, one[0])


def test_tree_score_counts_every_factor():
    rs = np.random.RandomState(5)
    n = 5
    for order in (1, 2, 3):
        f = factors(rs, n, order)
        trees, total = brute_force(f, True)
        for t, s in zip(trees[:20], total[:20]):
            assert f.tree_score(t) == pytest.approx(s, abs=1e-4)
    with pytest.raises(ValueError, match="heads"):
        f.tree_score([-1, 0, 9, 1, 1, 1])


def test_factors_container():
    rs = np.random.RandomState(2)
    f = factors(rs, 3, 2)
    assert (f.n, f.order) == (3, 2) and f.grand is None
    g = f.with_arc(np.zeros((4, 4)))
    assert g.sib is f.sib and g.arc.dtype == np.float32 and g.order == 2
    arc = np.zeros((4, 4), dtype=np.float32)
    assert Factors(arc).arc is arc          # held as given: loss augmentation is in place
    with pytest.raises(ValueError, match="sib must have shape"):
        Factors(arc, np.zeros((3, 3, 3)))
    with pytest.raises(ValueError, match="square"):
        Factors(np.zeros((3, 4)))


def test_hamming_loss():
    arc = np.zeros((4, 4), dtype=np.float32)
    add_hamming_loss(arc, np.array([-1, 2, 0, -1]))
    expected = np.zeros((4, 4), dtype=np.float32)
    expected[:, 1] = expected[:, 2] = 1.0
    expected[2, 1] = expected[0, 2] = 0.0
    np.testing.assert_array_equal(arc, expected)
    with pytest.raises(ValueError):
        add_hamming_loss(arc, np.array([-1, 7, 0, 1]))
