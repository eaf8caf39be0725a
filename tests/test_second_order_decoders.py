"""Brute-force tests for the second-order and k-best decoders.

All single-root trees over n <= 6 words are enumerated (``enumerate_trees``
of test_decoders); for each tree the flat indices of its arcs and of its
sibling factors (h, previous sibling or h, child) are precomputed, so the
score of every tree under random arc and sibling scores is one numpy sum.
"""
import functools

import numpy as np
import pytest
from test_decoders import enumerate_trees

from spacy_mstparse.decoders import is_projective, is_valid_tree
from spacy_mstparse.decoders.eisner_second_order import (
    eisner_k_best,
    eisner_second_order,
    second_order_tree_score,
)
from spacy_mstparse.decoders.second_order_nonprojective import (
    approximate_nonprojective,
    improve_tree,
)

TOL = 1e-3


def sibling_factors(heads):
    """Flat (h*N + s)*N + c indices of a tree's sibling factors."""
    n = len(heads) - 1
    N = n + 1
    out = []
    for h in range(N):
        for side in (range(h + 1, N), range(h - 1, 0, -1)):
            prev = h
            for c in side:
                if heads[c] == h:
                    out.append((h * N + prev) * N + c)
                    prev = c
    return out


@functools.lru_cache(maxsize=None)
def all_trees(n, projective_only):
    """(heads, arc indices, padded sibling indices) of every single-root tree
    (projective ones only if asked); padding points at an extra zero entry."""
    trees, single, projective, arcs = enumerate_trees(n)
    keep = single & projective if projective_only else single
    trees, arcs = trees[keep], arcs[keep]
    N = n + 1
    sibs = [sibling_factors(t) for t in trees]
    pad = N**3
    width = max(len(s) for s in sibs)
    sib_idx = np.full((len(sibs), width), pad, dtype=np.intp)
    for i, s in enumerate(sibs):
        sib_idx[i, : len(s)] = s
    return trees, arcs, sib_idx


def all_scores(arc, sib, n, projective_only):
    trees, arcs, sib_idx = all_trees(n, projective_only)
    total = np.asarray(arc, dtype=np.float64).ravel()[arcs].sum(axis=1)
    if sib is not None:
        flat = np.append(np.asarray(sib, dtype=np.float64).ravel(), 0.0)
        total = total + flat[sib_idx].sum(axis=1)
    return trees, total


def random_instance(rs, n, with_sib=True):
    N = n + 1
    arc = rs.randn(N, N).astype(np.float32)
    sib = (rs.randn(N, N, N) * 0.7).astype(np.float32) if with_sib else None
    return arc, sib


@pytest.mark.parametrize("n", range(1, 7))
def test_second_order_eisner_matches_brute_force(n):
    rs = np.random.RandomState(100 + n)
    for _ in range(150):
        arc, sib = random_instance(rs, n)
        heads = eisner_second_order(arc, sib)
        assert heads.dtype == np.int32 and heads[0] == -1
        assert is_valid_tree(heads, single_root=True) and is_projective(heads)
        _, scores = all_scores(arc, sib, n, projective_only=True)
        assert second_order_tree_score(arc, sib, heads) == pytest.approx(scores.max(), abs=TOL)


@pytest.mark.parametrize("n", range(1, 7))
@pytest.mark.parametrize("with_sib", [False, True])
def test_k_best_matches_brute_force(n, with_sib):
    """The k-best list is the top k of all projective trees: same scores in
    the same order, distinct valid trees, scores reported correctly."""
    rs = np.random.RandomState(7 * n + with_sib)
    for k in (1, 2, 5, 10):
        for _ in range(30):
            arc, sib = random_instance(rs, n, with_sib)
            heads, reported = eisner_k_best(arc, sib, k)
            trees, scores = all_scores(arc, sib, n, projective_only=True)
            expected = np.sort(scores)[::-1][:k]
            assert len(heads) == min(k, len(trees))
            np.testing.assert_allclose(reported, expected, atol=TOL)
            got = [second_order_tree_score(arc, sib, h) for h in heads]
            np.testing.assert_allclose(got, reported, atol=TOL)
            assert len({tuple(h) for h in heads}) == len(heads)
            for h in heads:
                assert is_valid_tree(h, single_root=True) and is_projective(h)


def test_first_order_k_best_equals_eisner():
    from spacy_mstparse.decoders import eisner

    rs = np.random.RandomState(3)
    for n in (8, 15, 30):
        arc = rs.randn(n + 1, n + 1).astype(np.float32)
        heads, _ = eisner_k_best(arc, None, 3)
        best = eisner(arc)
        arc64 = arc.astype(np.float64)
        words = np.arange(1, n + 1)
        assert arc64[heads[0][1:], words].sum() == pytest.approx(arc64[best[1:], words].sum(), abs=TOL)


def test_edge_cases_and_validation():
    assert eisner_second_order(np.zeros((1, 1), np.float32)).tolist() == [-1]
    heads, scores = eisner_k_best(np.zeros((2, 2), np.float32), None, 5)
    assert heads.tolist() == [[-1, 0]] and scores.shape == (1,)
    with pytest.raises(ValueError, match="square"):
        eisner_second_order(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="sib must have shape"):
        eisner_second_order(np.zeros((3, 3), np.float32), np.zeros((3, 3), np.float32))
    with pytest.raises(ValueError, match="k must be"):
        eisner_k_best(np.zeros((3, 3), np.float32), None, 0)


# -- approximate second-order non-projective decoding ----------------------


@pytest.mark.parametrize("n", range(2, 7))
def test_approximate_nonprojective_is_valid_and_improves(n):
    rs = np.random.RandomState(500 + n)
    for _ in range(60):
        arc, sib = random_instance(rs, n)
        start = eisner_second_order(arc, sib)
        heads = approximate_nonprojective(arc, sib)
        assert is_valid_tree(heads, single_root=True)
        assert second_order_tree_score(arc, sib, heads) >= second_order_tree_score(
            arc, sib, start
        ) - TOL
        # a local optimum: no single-arc move keeping a single-root tree helps
        score = second_order_tree_score(arc, sib, heads)
        for c in range(1, n + 1):
            for h in range(0, n + 1):
                if h == c or h == heads[c]:
                    continue
                moved = heads.copy()
                moved[c] = h
                if is_valid_tree(moved, single_root=True):
                    assert second_order_tree_score(arc, sib, moved) <= score + TOL


def test_approximate_nonprojective_finds_one_move_optimum():
    """Crafted: the best tree is non-projective and one arc away from the
    best projective tree; the hill climb must find exactly the best tree."""
    rs = np.random.RandomState(11)
    n = 5
    found = 0
    for _ in range(400):
        arc, sib = random_instance(rs, n)
        trees, scores = all_scores(arc, sib, n, projective_only=False)
        best = trees[int(np.argmax(scores))].astype(np.int32)
        best[0] = -1
        start = eisner_second_order(arc, sib)
        if is_projective(best) or int((best[1:] != start[1:]).sum()) != 1:
            continue
        found += 1
        heads = approximate_nonprojective(arc, sib)
        assert heads.tolist() == best.tolist()
    assert found >= 3, "too few crafted cases generated"


def test_improve_tree_handcrafted():
    """words 1..4; projective start 0->2, 2->1, 2->3, 3->4; a large score for
    2->4 (crossing nothing) and for the arc 1->3 crossing 2->4 is not needed:
    the move 3->4 => 1->4 makes the tree non-projective and is the only gain."""
    N = 5
    arc = np.full((N, N), -5.0, dtype=np.float32)
    for h, c in [(0, 2), (2, 1), (2, 3), (3, 4)]:
        arc[h, c] = 1.0
    arc[1, 4] = 3.0  # 1 -> 4 crosses 2 -> 3
    sib = np.zeros((N, N, N), dtype=np.float32)
    start = np.array([-1, 2, 0, 2, 3], dtype=np.int32)
    heads = improve_tree(arc, sib, start)
    assert heads.tolist() == [-1, 2, 0, 2, 1]
    assert not is_projective(heads)
    assert second_order_tree_score(arc, sib, heads) == pytest.approx(6.0)
