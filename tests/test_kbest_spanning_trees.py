"""Brute-force tests for the k-best non-projective decoder (chu_liu_edmonds_k_best).

All trees over n <= 7 words are enumerated (``enumerate_trees`` of
test_decoders); the k-best list must be the top k of them (single-root trees
only with single_root=True): same scores in the same order, distinct valid
trees, scores reported as the trees' scores. Score matrices include small
integers (many ties), where only scores, not trees, can be compared.
Constraints (-inf scores) are tested in test_decoder_constraints.py.
"""
import numpy as np
import pytest
from test_decoders import enumerate_trees, random_scores, tree_score

from spacy_mstparse.decoders import chu_liu_edmonds, chu_liu_edmonds_k_best, is_valid_tree
from spacy_mstparse.decoders.kbest_spanning_trees import _chu_liu_edmonds_k_best_reference

TOL = 1e-3
N_MATRICES = {1: 40, 2: 80, 3: 120, 4: 120, 5: 100, 6: 60, 7: 16}


def brute_force(scores, n, single_root):
    """(trees, scores) of every tree of the kind asked, best first."""
    trees, single, _, arcs = enumerate_trees(n)
    total = np.asarray(scores, dtype=np.float64).ravel()[arcs].sum(axis=1)
    if single_root:
        trees, total = trees[single], total[single]
    order = np.argsort(-total, kind="stable")
    return trees[order], total[order]


def check_k_best(decode, scores, n, k, single_root):
    heads, reported = decode(scores, k, single_root=single_root)
    _, expected = brute_force(scores, n, single_root)
    m = min(k, len(expected))
    assert heads.dtype == np.int32 and heads.shape == (m, n + 1)
    assert reported.dtype == np.float64 and reported.shape == (m,)
    np.testing.assert_allclose(reported, expected[:m], atol=TOL)
    for h, s in zip(heads, reported):
        assert h[0] == -1 and is_valid_tree(h, single_root=single_root), h
        assert tree_score(scores, h) == pytest.approx(s, abs=TOL)
    assert len({tuple(h) for h in heads}) == m
    return heads, reported


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("n", range(1, 8))
def test_k_best_matches_brute_force(n, single_root):
    rs = np.random.RandomState(40 + 2 * n + single_root)
    for i in range(N_MATRICES[n]):
        scores = random_scores(rs, n, i % 4)
        k = (1, 2, 5, 12, 40)[i % 5]
        heads, reported = check_k_best(chu_liu_edmonds_k_best, scores, n, k, single_root)
        one = chu_liu_edmonds(scores, single_root=single_root)
        assert reported[0] == pytest.approx(tree_score(scores, one), abs=TOL)


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("n", range(1, 5))
def test_large_k_lists_every_tree(n, single_root):
    """k above the number of trees: every tree exactly once, sorted."""
    rs = np.random.RandomState(7 * n + single_root)
    trees, _ = brute_force(np.zeros((n + 1, n + 1)), n, single_root)
    everything = {tuple(t[1:]) for t in trees}
    for kind in range(4):
        scores = random_scores(rs, n, kind)
        heads, reported = chu_liu_edmonds_k_best(scores, len(trees) + 10, single_root)
        assert {tuple(h[1:]) for h in heads} == everything
        assert len(heads) == len(trees)
        assert np.all(np.diff(reported) <= TOL)


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("n", [2, 4, 6])
def test_reference_next_matches_brute_force(n, single_root):
    """The definition-based NEXT (the fallback path) gives the same lists."""
    rs = np.random.RandomState(90 + n + single_root)
    for i in range(20):
        scores = random_scores(rs, n, i % 4)
        check_k_best(_chu_liu_edmonds_k_best_reference, scores, n, (3, 10)[i % 2], single_root)


@pytest.mark.parametrize("n", [12, 30])
def test_larger_fast_equals_reference(n):
    rs = np.random.RandomState(300 + n)
    for i in range(4):
        scores = random_scores(rs, n, i % 4)
        for single_root in (True, False):
            heads, fast = chu_liu_edmonds_k_best(scores, 8, single_root)
            _, ref = _chu_liu_edmonds_k_best_reference(scores, 8, single_root)
            assert len(heads) == 8
            np.testing.assert_allclose(fast, ref, atol=TOL)
            assert len({tuple(h) for h in heads}) == 8
            for h, s in zip(heads, fast):
                assert is_valid_tree(h, single_root=single_root)
                assert tree_score(scores, h) == pytest.approx(s, abs=TOL)
            best = chu_liu_edmonds(scores, single_root=single_root)
            assert fast[0] == pytest.approx(tree_score(scores, best), abs=TOL)


def test_second_best_enters_a_cycle_elsewhere():
    """Hand-computed: words 1 and 2 prefer each other (10); the root offers
    5 to word 1 and 4 to word 2. Best 0->1->2 (15); second best 0->2->1 (14),
    which changes two arcs (it enters the cycle at the other word); third
    0->1, 0->2 (9)."""
    scores = np.full((3, 3), -50.0, dtype=np.float32)
    scores[1, 2] = scores[2, 1] = 10.0
    scores[0, 1] = 5.0
    scores[0, 2] = 4.0
    heads, reported = chu_liu_edmonds_k_best(scores, 5, single_root=False)
    assert heads.tolist() == [[-1, 0, 1], [-1, 2, 0], [-1, 0, 0]]
    assert reported.tolist() == [15.0, 14.0, 9.0]
    heads, reported = chu_liu_edmonds_k_best(scores, 5)
    assert heads.tolist() == [[-1, 0, 1], [-1, 2, 0]]
    assert reported.tolist() == [15.0, 14.0]


def test_all_ties():
    n = 5
    heads, reported = chu_liu_edmonds_k_best(np.zeros((n + 1, n + 1), np.float32), 30)
    assert len(heads) == 30 and len({tuple(h) for h in heads}) == 30
    assert np.all(reported == 0.0)
    assert all(is_valid_tree(h, single_root=True) for h in heads)


def test_edge_cases_and_validation():
    heads, reported = chu_liu_edmonds_k_best(np.zeros((1, 1), np.float32), 3)
    assert heads.tolist() == [[-1]] and reported.tolist() == [0.0]
    heads, reported = chu_liu_edmonds_k_best(np.array([[0, 2.5], [0, 0]], np.float32), 3)
    assert heads.tolist() == [[-1, 0]] and reported.tolist() == [2.5]
    rs = np.random.RandomState(5)
    scores = rs.randn(6, 6).astype(np.float32)
    expected = chu_liu_edmonds_k_best(scores, 4)
    for variant in (scores.astype(np.float64), scores.tolist(), np.asfortranarray(scores)):
        got = chu_liu_edmonds_k_best(variant, 4)
        assert got[0].tolist() == expected[0].tolist()
        assert got[1].tolist() == expected[1].tolist()
    assert chu_liu_edmonds_k_best(scores, np.int64(4))[0].shape == (4, 6)
    with pytest.raises(ValueError, match="k must be >= 1"):
        chu_liu_edmonds_k_best(scores, 0)
    with pytest.raises(TypeError):
        chu_liu_edmonds_k_best(scores, 2.5)
    for bad in (np.zeros(4), np.zeros((3, 4)), np.zeros((0, 0))):
        with pytest.raises(ValueError, match="square"):
            chu_liu_edmonds_k_best(bad, 2)
