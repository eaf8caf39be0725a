"""Brute-force tests for the second-order and k-best decoders.

All single-root trees over n <= 6 words are enumerated (``enumerate_trees``
of test_decoders); for each tree the flat indices of its arcs, of its
sibling factors (h, previous sibling or h, child) and of its stop factors
(every word h and side: (h, outermost dependent, h), or (h, h, h) / (h, 0, h)
with no right / left dependent; Koo & Collins 2010) are precomputed, so the
score of every tree under random arc and sibling scores is one numpy sum.
The random ``sib`` arrays fill every cell, stop cells included.
"""
import functools

import numpy as np
import pytest
from test_decoders import enumerate_trees

from spacy_mstparse.decoders import NoTreeError, is_projective, is_valid_tree
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


def sibling_factors(heads, stops=True):
    """Flat (h*N + s)*N + c indices of a tree's sibling factors and (unless
    ``stops=False``) its words' stop factors."""
    n = len(heads) - 1
    N = n + 1
    out = []
    for h in range(N):
        for side, none in ((range(h + 1, N), h), (range(h - 1, 0, -1), 0)):
            prev = h
            for c in side:
                if heads[c] == h:
                    out.append((h * N + prev) * N + c)
                    prev = c
            if stops and h > 0:
                out.append((h * N + (prev if prev != h else none)) * N + h)
    return out


def stop_mask(N):
    """Boolean (N, N, N) mask of the stop cells sib[h, x, h], h >= 1."""
    mask = np.zeros((N, N, N), dtype=bool)
    for h in range(1, N):
        mask[h, :, h] = True
    return mask


@functools.lru_cache(maxsize=None)
def all_trees(n, projective_only, stops=True):
    """(heads, arc indices, padded sibling indices) of every single-root tree
    (projective ones only if asked); padding points at an extra zero entry.
    ``stops=False``: sibling factors only (the model without stop factors)."""
    trees, single, projective, arcs = enumerate_trees(n)
    keep = single & projective if projective_only else single
    trees, arcs = trees[keep], arcs[keep]
    N = n + 1
    sibs = [sibling_factors(t, stops) for t in trees]
    pad = N**3
    width = max(len(s) for s in sibs)
    sib_idx = np.full((len(sibs), width), pad, dtype=np.intp)
    for i, s in enumerate(sibs):
        sib_idx[i, : len(s)] = s
    return trees, arcs, sib_idx


def all_scores(arc, sib, n, projective_only, stops=True):
    trees, arcs, sib_idx = all_trees(n, projective_only, stops)
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


# -- stop factors ----------------------------------------------------------


def big_stops(rs, n, scale=4.0):
    """A random instance whose stop cells are large enough to decide the tree."""
    arc, sib = random_instance(rs, n)
    mask = stop_mask(n + 1)
    sib[mask] = (rs.randn(int(mask.sum())) * scale).astype(np.float32)
    return arc, sib


@pytest.mark.parametrize("n", range(1, 7))
def test_large_stop_scores_decide_the_tree(n):
    """With large stop scores the best tree usually differs from the best
    tree of the sibling-only model; the 1-best and k-best decoders follow
    the stops (a decoder ignoring them fails here)."""
    rs = np.random.RandomState(900 + n)
    changed = 0
    for _ in range(40):
        arc, sib = big_stops(rs, n)
        trees, scores = all_scores(arc, sib, n, projective_only=True)
        _, chain_only = all_scores(arc, sib, n, projective_only=True, stops=False)
        changed += int(np.argmax(scores) != np.argmax(chain_only))
        heads = eisner_second_order(arc, sib)
        assert second_order_tree_score(arc, sib, heads) == pytest.approx(scores.max(), abs=TOL)
        kheads, reported = eisner_k_best(arc, sib, 4)
        np.testing.assert_allclose(reported, np.sort(scores)[::-1][:4], atol=TOL)
        np.testing.assert_allclose([second_order_tree_score(arc, sib, h) for h in kheads],
                                   reported, atol=TOL)
    assert changed >= (5 if n >= 2 else 0)


@pytest.mark.parametrize("n", range(1, 7))
def test_zero_stop_cells_give_the_sibling_model(n):
    """Stop cells of 0 (stops switched off): the decoders score exactly the
    McDonald & Pereira sibling model; the cells sib[0, x, 0] are never read."""
    rs = np.random.RandomState(950 + n)
    for _ in range(30):
        arc, sib = random_instance(rs, n)
        sib[stop_mask(n + 1)] = 0.0
        sib[0, :, 0] = rs.randn(n + 1) * 100.0   # the root has no stop factors
        _, chain_only = all_scores(arc, sib, n, projective_only=True, stops=False)
        heads, reported = eisner_k_best(arc, sib, 5)
        np.testing.assert_allclose(reported, np.sort(chain_only)[::-1][:5], atol=TOL)
        np.testing.assert_allclose([second_order_tree_score(arc, sib, h) for h in heads],
                                   reported, atol=TOL)


@pytest.mark.parametrize("n", range(1, 7))
def test_forbidden_stop_cells(n):
    """-inf stop cells (a forbidden outermost dependent, or forbidden "no
    dependent on this side") never occur in the listed trees."""
    rs = np.random.RandomState(980 + n)
    mask = stop_mask(n + 1)
    for _ in range(30):
        arc, sib = random_instance(rs, n)
        sib[mask & (rs.rand(*sib.shape) < 0.3)] = -np.inf
        _, scores = all_scores(arc, sib, n, projective_only=True)
        allowed = np.sort(scores[np.isfinite(scores)])[::-1]
        if len(allowed) == 0:
            with pytest.raises(NoTreeError):
                eisner_k_best(arc, sib, 3)
            continue
        heads, reported = eisner_k_best(arc, sib, 3)
        np.testing.assert_allclose(reported, allowed[:3], atol=TOL)
        for h in heads:
            assert np.isfinite(second_order_tree_score(arc, sib, h))
        one = eisner_second_order(arc, sib)
        assert second_order_tree_score(arc, sib, one) == pytest.approx(allowed[0], abs=TOL)


def test_forbidden_stop_handcrafted():
    """Two words: forbidding "word 1 has no right dependent" leaves only
    0 -> 1 -> 2; also forbidding 2 as 1's outermost right dependent leaves
    no tree."""
    arc = np.zeros((3, 3), np.float32)
    arc[0, 2] = 10.0
    sib = np.zeros((3, 3, 3), np.float32)
    sib[1, 1, 1] = -np.inf
    heads, scores = eisner_k_best(arc, sib, 5)
    assert heads.tolist() == [[-1, 0, 1]] and scores.tolist() == [0.0]
    sib[1, 2, 1] = -np.inf
    with pytest.raises(NoTreeError):
        eisner_second_order(arc, sib)
    # Stop scores on both sides of the one word: counted once each.
    arc = np.zeros((2, 2), np.float32)
    sib = np.zeros((2, 2, 2), np.float32)
    sib[1, 1, 1], sib[1, 0, 1], sib[0, 1, 0] = 2.0, 3.0, 100.0
    heads, scores = eisner_k_best(arc, sib, 1)
    assert scores.tolist() == [5.0]
    assert second_order_tree_score(arc, sib, heads[0]) == 5.0


# -- approximate second-order non-projective decoding ----------------------


@pytest.mark.parametrize("n", range(2, 7))
@pytest.mark.parametrize("make,seed,reps", [("random_instance", 500, 60), ("big_stops", 1200, 30)])
def test_approximate_nonprojective_is_valid_and_improves(n, make, seed, reps):
    """The climb never ends below its projective start and ends in a
    single-move local optimum of ``second_order_tree_score`` (also with stop
    scores large enough to decide the tree)."""
    rs = np.random.RandomState(seed + n)
    for _ in range(reps):
        arc, sib = globals()[make](rs, n)
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


@pytest.mark.parametrize("n", range(2, 7))
def test_improve_tree_move_gain_matches_tree_score(n):
    """One climb step from random (often non-projective) trees, with large
    stop scores: the move made is the best single move by
    ``second_order_tree_score`` (the climb's local gains, stop factors of the
    old and new head included, agree with the full score), or none when no
    move gains."""
    rs = np.random.RandomState(1100 + n)
    trees, _, _ = all_trees(n, False)
    for _ in range(40):
        arc, sib = big_stops(rs, n)
        start = trees[rs.randint(len(trees))].astype(np.int32)
        start[0] = -1
        before = second_order_tree_score(arc, sib, start)
        best = before
        for c in range(1, n + 1):
            if start[c] == 0:
                continue  # the climb keeps the root's one child
            for h in range(1, n + 1):
                moved = start.copy()
                moved[c] = h
                if h != start[c] and is_valid_tree(moved, single_root=True):
                    best = max(best, second_order_tree_score(arc, sib, moved))
        heads = improve_tree(arc, sib, start, max_moves=1)
        assert is_valid_tree(heads, single_root=True)
        after = second_order_tree_score(arc, sib, heads)
        if best > before + 1e-3:
            assert after == pytest.approx(best, abs=TOL)
        else:
            assert after >= before - TOL


