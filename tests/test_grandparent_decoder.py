"""Brute-force tests for the grandparent + sibling projective decoder
(Koo & Collins 2010 model 1 chart): on random arc, sibling (every cell, stop
factors included) and grandparent scores, with and without pruning masks,
forbidden arcs, large or forbidden stop scores, its tree is the best of all
projective single-root trees (n <= 7)."""
import functools

import numpy as np
import pytest
from test_second_order_decoders import all_trees, stop_mask

from spacy_mstparse.decoders import NoTreeError, is_projective, is_valid_tree
from spacy_mstparse.decoders.eisner_grandparent import eisner_grandparent, grandparent_tree_score
from spacy_mstparse.decoders.eisner_second_order import eisner_second_order
from spacy_mstparse.decoders.pruning import prune

TOL = 1e-3


@functools.lru_cache(maxsize=None)
def grand_index(n):
    """(trees, arc idx, sib idx, grand idx) of all projective single-root
    trees; grandparent indices padded with an extra zero entry."""
    trees, arcs, sib_idx = all_trees(n, True)
    N = n + 1
    grand_idx = np.full((len(trees), n), N**3, dtype=np.intp)
    for i, t in enumerate(trees):
        for c in range(1, N):
            h = t[c]
            if h > 0:
                grand_idx[i, c - 1] = (t[h] * N + h) * N + c
    return trees, arcs, sib_idx, grand_idx


def brute_force(arc, sib, grand, n):
    trees, arcs, sib_idx, grand_idx = grand_index(n)
    total = np.asarray(arc, dtype=np.float64).ravel()[arcs].sum(axis=1)
    total = total + np.append(np.asarray(sib, dtype=np.float64).ravel(), 0.0)[sib_idx].sum(axis=1)
    total = total + np.append(np.asarray(grand, dtype=np.float64).ravel(), 0.0)[grand_idx].sum(axis=1)
    return trees, total


def instance(rs, n):
    N = n + 1
    return (rs.randn(N, N).astype(np.float32), (rs.randn(N, N, N) * 0.7).astype(np.float32),
            (rs.randn(N, N, N) * 0.7).astype(np.float32))


@pytest.mark.parametrize("n", range(1, 8))
def test_grandparent_decoder_matches_brute_force(n):
    rs = np.random.RandomState(300 + n)
    for _ in range(60 if n < 7 else 15):
        arc, sib, grand = instance(rs, n)
        heads = eisner_grandparent(arc, sib, grand)
        assert is_valid_tree(heads) and is_projective(heads)
        assert (heads[1:] == 0).sum() == 1
        trees, total = brute_force(arc, sib, grand, n)
        assert grandparent_tree_score(arc, sib, grand, heads) == pytest.approx(total.max(), abs=TOL)


@pytest.mark.parametrize("n", [4, 6, 7])
@pytest.mark.parametrize("keep", [1, 2, 3])
def test_grandparent_decoder_with_pruning_masks(n, keep):
    """Pruned arcs (-inf) are never used, and the tree is the best of the
    projective trees made of kept arcs only."""
    rs = np.random.RandomState(400 + 10 * n + keep)
    for _ in range(20):
        arc, sib, grand = instance(rs, n)
        pruned = prune(arc.copy(), keep)
        heads = eisner_grandparent(pruned, sib, grand)
        assert all(np.isfinite(pruned[heads[c], c]) for c in range(1, n + 1))
        trees, total = brute_force(pruned, sib, grand, n)
        assert grandparent_tree_score(pruned, sib, grand, heads) == pytest.approx(total.max(), abs=TOL)


def test_grandparent_decoder_forbidden_arcs_and_no_tree():
    rs = np.random.RandomState(7)
    n = 5
    arc, sib, grand = instance(rs, n)
    arc[:, 3] = -np.inf
    arc[2, 3] = 1.0          # word 3 must take head 2
    heads = eisner_grandparent(arc, sib, grand)
    assert heads[3] == 2
    trees, total = brute_force(arc, sib, grand, n)
    assert grandparent_tree_score(arc, sib, grand, heads) == pytest.approx(total.max(), abs=TOL)
    arc[0, :] = -np.inf      # nothing may attach to the root
    with pytest.raises(NoTreeError):
        eisner_grandparent(arc, sib, grand)


def test_zero_grandparent_scores_give_second_order_eisner():
    rs = np.random.RandomState(11)
    for n in (3, 6, 9):
        arc, sib, _ = instance(rs, n)
        heads = eisner_grandparent(arc, sib, None)
        reference = eisner_second_order(arc, sib)
        assert grandparent_tree_score(arc, sib, None, heads) == pytest.approx(
            grandparent_tree_score(arc, sib, None, reference), abs=TOL)


@pytest.mark.parametrize("n", range(1, 7))
def test_grandparent_decoder_with_large_and_forbidden_stops(n):
    """Large stop scores (and some -inf ones) decide the tree: the decoder
    follows them, never uses a forbidden stop, and raises when every tree
    has one."""
    rs = np.random.RandomState(500 + n)
    mask = stop_mask(n + 1)
    for i in range(40):
        arc, sib, grand = instance(rs, n)
        sib[mask] = rs.randn(int(mask.sum())) * 4.0
        if i % 2:
            sib[mask & (rs.rand(*sib.shape) < 0.25)] = -np.inf
        trees, total = brute_force(arc, sib, grand, n)
        if total.max() == -np.inf:
            with pytest.raises(NoTreeError):
                eisner_grandparent(arc, sib, grand)
            continue
        heads = eisner_grandparent(arc, sib, grand)
        assert is_valid_tree(heads) and is_projective(heads)
        assert grandparent_tree_score(arc, sib, grand, heads) == pytest.approx(total.max(), abs=TOL)


@pytest.mark.parametrize("n", range(1, 7))
def test_grandparent_decoder_zero_stops_give_the_sibling_model(n):
    """Stop cells of 0: the best tree of the model without stop factors
    (sib[0, x, 0], the root's, are never read)."""
    rs = np.random.RandomState(600 + n)
    trees, arcs, sib_idx = all_trees(n, True, stops=False)
    _, _, _, grand_idx = grand_index(n)
    for _ in range(30):
        arc, sib, grand = instance(rs, n)
        sib[stop_mask(n + 1)] = 0.0
        sib[0, :, 0] = 100.0
        total = (np.asarray(arc, np.float64).ravel()[arcs].sum(axis=1)
                 + np.append(sib.astype(np.float64).ravel(), 0.0)[sib_idx].sum(axis=1)
                 + np.append(grand.astype(np.float64).ravel(), 0.0)[grand_idx].sum(axis=1))
        heads = eisner_grandparent(arc, sib, grand)
        assert grandparent_tree_score(arc, sib, grand, heads) == pytest.approx(total.max(), abs=TOL)
