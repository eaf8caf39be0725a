"""Constraints through the scores: -inf forbids an arc (a fixed head is every
other head of the word forbidden).

Every decoder must return a tree that avoids the forbidden arcs whenever its
search space (projective for Eisner, single root unless turned off) holds
one, scoring as the best such tree found by brute force over all trees of
n <= 6 words; and raise NoTreeError (a ValueError) when there is none.
"""
import numpy as np
import pytest
from test_decoders import enumerate_trees, random_scores, tree_score
from test_second_order_decoders import all_scores

from spacy_mstparse.decoders import (
    NoTreeError,
    approximate_nonprojective,
    chu_liu_edmonds,
    chu_liu_edmonds_k_best,
    eisner,
    eisner_k_best,
    eisner_second_order,
    is_projective,
    is_valid_tree,
    second_order_tree_score,
)

TOL = 1e-3
NO_TREE = "no tree satisfies the constraints"
FORBID_P = (0.15, 0.4, 0.6, 0.75, 0.9)


def forbid(rs, scores, p):
    """Copy of scores with each usable arc forbidden with probability p."""
    out = scores.astype(np.float32, copy=True)
    mask = rs.rand(*out.shape) < p
    out[mask] = -np.inf
    return out


def space(n, projective, single_root):
    trees, single, proj, arcs = enumerate_trees(n)
    keep = np.ones(len(trees), dtype=bool)
    if projective:
        keep &= proj
    if single_root:
        keep &= single
    return trees[keep], arcs[keep]


def allowed_scores(scores, n, projective, single_root):
    """Scores of every tree of the space; -inf for those using a forbidden arc."""
    trees, arcs = space(n, projective, single_root)
    return trees, np.asarray(scores, dtype=np.float64).ravel()[arcs].sum(axis=1)


def uses_forbidden(scores, heads):
    return any(np.isneginf(scores[heads[c], c]) for c in range(1, len(heads)))


FIRST_ORDER = [
    ("eisner", eisner, True),
    ("chu_liu_edmonds", chu_liu_edmonds, False),
]


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("name,decode,projective", FIRST_ORDER)
@pytest.mark.parametrize("n", range(1, 7))
def test_first_order_decoders_honour_forbidden_arcs(n, name, decode, projective, single_root):
    rs = np.random.RandomState(10 * n + 2 * projective + single_root)
    impossible = possible = 0
    for i in range(150):
        scores = forbid(rs, random_scores(rs, n, i % 4), FORBID_P[i % len(FORBID_P)])
        _, totals = allowed_scores(scores, n, projective, single_root)
        best = totals.max()
        if best == -np.inf:
            impossible += 1
            with pytest.raises(NoTreeError, match=NO_TREE):
                decode(scores, single_root=single_root)
            continue
        possible += 1
        heads = decode(scores, single_root=single_root)
        assert is_valid_tree(heads, single_root=single_root), heads
        assert not projective or is_projective(heads)
        assert not uses_forbidden(scores, heads), (scores, heads)
        assert tree_score(scores, heads) == pytest.approx(best, abs=TOL)
    assert possible > 20 and (impossible > 5 or n == 1)


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("n", range(1, 7))
def test_k_best_spanning_trees_honour_forbidden_arcs(n, single_root):
    rs = np.random.RandomState(70 + 2 * n + single_root)
    for i in range(60):
        scores = forbid(rs, random_scores(rs, n, i % 4), FORBID_P[i % len(FORBID_P)])
        _, totals = allowed_scores(scores, n, False, single_root)
        allowed = np.sort(totals[totals > -np.inf])[::-1]
        k = (1, 3, 8, 50)[i % 4]
        if len(allowed) == 0:
            with pytest.raises(NoTreeError, match=NO_TREE):
                chu_liu_edmonds_k_best(scores, k, single_root=single_root)
            continue
        heads, reported = chu_liu_edmonds_k_best(scores, k, single_root=single_root)
        assert len(heads) == min(k, len(allowed))
        np.testing.assert_allclose(reported, allowed[: len(heads)], atol=TOL)
        assert len({tuple(h) for h in heads}) == len(heads)
        for h, s in zip(heads, reported):
            assert is_valid_tree(h, single_root=single_root)
            assert not uses_forbidden(scores, h)
            assert tree_score(scores, h) == pytest.approx(s, abs=TOL)


@pytest.mark.parametrize("with_sib", [False, True])
@pytest.mark.parametrize("n", range(1, 7))
def test_projective_k_best_honours_forbidden_arcs_and_siblings(n, with_sib):
    """eisner_k_best / eisner_second_order: -inf arcs, and (with sibling
    scores) -inf sibling pairs, are never used; the list is the top k of the
    allowed projective single-root trees."""
    rs = np.random.RandomState(130 + 2 * n + with_sib)
    N = n + 1
    for i in range(40):
        arc = forbid(rs, rs.randn(N, N), FORBID_P[i % len(FORBID_P)] * 0.7)
        sib = None
        if with_sib:
            sib = (rs.randn(N, N, N) * 0.7).astype(np.float32)
            sib[rs.rand(N, N, N) < 0.1] = -np.inf
        trees, totals = all_scores(arc, sib, n, projective_only=True)
        allowed = np.sort(totals[totals > -np.inf])[::-1]
        k = (1, 4, 20)[i % 3]
        if len(allowed) == 0:
            with pytest.raises(NoTreeError, match=NO_TREE):
                eisner_k_best(arc, sib, k)
            with pytest.raises(NoTreeError, match=NO_TREE):
                eisner_second_order(arc, sib)
            continue
        heads, reported = eisner_k_best(arc, sib, k)
        assert len(heads) == min(k, len(allowed))
        np.testing.assert_allclose(reported, allowed[: len(heads)], atol=TOL)
        assert len({tuple(h) for h in heads}) == len(heads)
        for h, s in zip(heads, reported):
            assert is_valid_tree(h, single_root=True) and is_projective(h)
            assert second_order_tree_score(arc, sib, h) == pytest.approx(s, abs=TOL)
        one = eisner_second_order(arc, sib)
        assert second_order_tree_score(arc, sib, one) == pytest.approx(allowed[0], abs=TOL)


@pytest.mark.parametrize("with_sib", [False, True])
@pytest.mark.parametrize("n", range(2, 7))
def test_approximate_nonprojective_honours_forbidden_arcs(n, with_sib):
    """An allowed single-root tree whenever one exists, projective or not; at
    least as good as the best allowed projective tree when there is one."""
    rs = np.random.RandomState(170 + 2 * n + with_sib)
    N = n + 1
    trees, single, proj, _ = enumerate_trees(n)
    nonprojective_pool = trees[single & ~proj]
    nonprojective_only = 0
    for i in range(80):
        arc = forbid(rs, rs.randn(N, N), FORBID_P[i % len(FORBID_P)])
        if i % 2 and len(nonprojective_pool):
            # A non-projective tree plus a few other arcs stay allowed.
            tree = nonprojective_pool[rs.randint(len(nonprojective_pool))]
            arc = forbid(rs, rs.randn(N, N), 0.85)
            arc[tree[1:], np.arange(1, N)] = rs.randn(n)
        sib = (rs.randn(N, N, N) * 0.7).astype(np.float32) if with_sib else None
        _, any_tree = allowed_scores(arc, n, False, True)
        _, projective = allowed_scores(arc, n, True, True)
        if any_tree.max() == -np.inf:
            with pytest.raises(NoTreeError, match=NO_TREE):
                approximate_nonprojective(arc, sib)
            continue
        heads = approximate_nonprojective(arc, sib)
        assert is_valid_tree(heads, single_root=True)
        assert not uses_forbidden(arc, heads), (arc, heads)
        if projective.max() == -np.inf:
            nonprojective_only += 1
            assert not is_projective(heads)
        else:
            _, proj_scores = all_scores(arc, sib, n, projective_only=True)
            assert second_order_tree_score(arc, sib, heads) >= proj_scores.max() - TOL
    if n >= 3:
        assert nonprojective_only >= 5, "too few cases with only non-projective trees allowed"


@pytest.mark.parametrize("n", range(2, 7))
def test_fixed_heads(n):
    """Fixing heads (all other heads of those words forbidden) gives the best
    tree with those heads; a projective gold tree keeps Eisner feasible."""
    rs = np.random.RandomState(230 + n)
    trees, single, proj, arcs = enumerate_trees(n)
    gold_pool = trees[single & proj]
    for i in range(40):
        scores = random_scores(rs, n, i % 4)
        gold = gold_pool[rs.randint(len(gold_pool))]
        fixed = [c for c in range(1, n + 1) if rs.rand() < 0.4]
        constrained = scores.copy()
        for c in fixed:
            keep = constrained[gold[c], c]
            constrained[:, c] = -np.inf
            constrained[gold[c], c] = keep
        for decode, projective in ((eisner, True), (chu_liu_edmonds, False)):
            heads = decode(constrained)
            assert all(heads[c] == gold[c] for c in fixed)
            mask = single.copy()
            if projective:
                mask &= proj
            for c in fixed:
                mask &= trees[:, c] == gold[c]
            best = scores.astype(np.float64).ravel()[arcs[mask]].sum(axis=1).max()
            assert tree_score(scores, heads) == pytest.approx(best, abs=TOL)
        k_heads, _ = chu_liu_edmonds_k_best(constrained, 5)
        assert all(h[c] == gold[c] for h in k_heads for c in fixed)


def test_single_root_infeasible_but_several_root_children_allowed():
    # Words 1 and 2 may only hang from the root: one tree, two root children.
    scores = np.zeros((3, 3), dtype=np.float32)
    scores[1, 2] = scores[2, 1] = -np.inf
    for decode in (eisner, chu_liu_edmonds):
        assert decode(scores, single_root=False).tolist() == [-1, 0, 0]
        with pytest.raises(NoTreeError, match="single-root"):
            decode(scores, single_root=True)
    assert chu_liu_edmonds_k_best(scores, 3, single_root=False)[0].tolist() == [[-1, 0, 0]]
    for decode in (
        lambda s: chu_liu_edmonds_k_best(s, 3),
        lambda s: eisner_k_best(s, None, 3),
        lambda s: eisner_second_order(s),
        lambda s: approximate_nonprojective(s),
    ):
        with pytest.raises(NoTreeError, match=NO_TREE):
            decode(scores)


def test_errors_are_value_errors_and_name_the_decoder():
    scores = np.full((4, 4), -np.inf, dtype=np.float32)
    for name, decode in (
        ("eisner", eisner),
        ("chu_liu_edmonds", chu_liu_edmonds),
        ("chu_liu_edmonds_k_best", lambda s: chu_liu_edmonds_k_best(s, 2)),
        ("eisner_k_best", lambda s: eisner_k_best(s, None, 2)),
        ("approximate_nonprojective", approximate_nonprojective),
    ):
        with pytest.raises(ValueError, match=NO_TREE) as info:
            decode(scores)
        assert isinstance(info.value, NoTreeError)
        # approximate_nonprojective falls back to chu_liu_edmonds' message
        assert name in str(info.value) or name == "approximate_nonprojective"
    # the root arc of a one-word sentence
    one = np.array([[0.0, -np.inf], [0.0, 0.0]], dtype=np.float32)
    for decode in (eisner, chu_liu_edmonds):
        for single_root in (True, False):
            with pytest.raises(NoTreeError):
                decode(one, single_root=single_root)


def test_forbidden_cycle_only_non_projective():
    """Only a non-projective tree is allowed: 0 -> 2, 2 -> 4, 4 -> 1, 1 -> 3
    (crossing arcs); Eisner raises, the non-projective decoders find it."""
    n = 4
    scores = np.full((n + 1, n + 1), -np.inf, dtype=np.float32)
    gold = [-1, 4, 0, 1, 2]
    for c in range(1, n + 1):
        scores[gold[c], c] = 1.0
    scores[3, 1] = 0.5  # allowed, but 3 -> 1 with 1 -> 3 is a cycle
    assert not is_projective(gold)
    with pytest.raises(NoTreeError, match="projective"):
        eisner(scores)
    assert chu_liu_edmonds(scores).tolist() == gold
    assert approximate_nonprojective(scores).tolist() == gold
    heads, reported = chu_liu_edmonds_k_best(scores, 4)
    assert heads.tolist() == [gold] and reported.tolist() == [4.0]
