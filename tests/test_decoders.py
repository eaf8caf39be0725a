"""Brute-force tests for the decoders (Eisner and Chu-Liu-Edmonds).

For n = 1..7 all trees over n words rooted at 0 are enumerated once (vectorized
with numpy); on thousands of random score matrices the decoders' trees must be
valid (and projective for Eisner) and score as well as the best tree of the
same kind (projective or not, single or multiple root children).
"""
import functools
import time
from math import comb

import numpy as np
import pytest

from spacy_mstparse.decoders import chu_liu_edmonds, eisner, is_projective, is_valid_tree

MAX_N = 7
TOL = 1e-4


@functools.lru_cache(maxsize=None)
def candidates(n):
    """All n^n head vectors with heads[c] != c (column 0 = 0), as an (n^n, n+1) array."""
    k = np.arange(n**n, dtype=np.int64)
    digits = (k[:, None] // (n ** np.arange(n, dtype=np.int64))[None, :]) % n
    words = np.arange(1, n + 1)
    heads = np.zeros((n**n, n + 1), dtype=np.intp)
    heads[:, 1:] = digits + (digits >= words[None, :])  # skip the word itself
    return heads


@functools.lru_cache(maxsize=None)
def enumerate_trees(n):
    """All trees over n words: heads (K, n+1) with column 0 = 0, masks, arc indices."""
    cand = candidates(n)
    # Ancestor 2^j steps up by pointer doubling; the root is a fixed point.
    anc = cand
    steps = 1
    while steps < n:
        anc = np.take_along_axis(anc, anc, axis=1)
        steps *= 2
    trees = cand[(anc[:, 1:] == 0).all(axis=1)]
    words = np.arange(1, n + 1)
    h = trees[:, 1:]
    single = (h == 0).sum(axis=1) == 1
    lo = np.minimum(h, words)
    hi = np.maximum(h, words)
    crossing = (
        (lo[:, :, None] < lo[:, None, :])
        & (lo[:, None, :] < hi[:, :, None])
        & (hi[:, :, None] < hi[:, None, :])
    ).any(axis=(1, 2))
    arcs = h * (n + 1) + words  # flat index of arc heads[c] -> c
    return trees, single, ~crossing, arcs


def tree_score(scores, heads):
    heads = np.asarray(heads)
    n = len(heads) - 1
    return float(np.asarray(scores, dtype=np.float64)[heads[1:], np.arange(1, n + 1)].sum())


def random_scores(rs, n, kind):
    if kind == 0:
        s = rs.randn(n + 1, n + 1)
    elif kind == 1:  # small integers: many ties
        s = rs.randint(-2, 3, size=(n + 1, n + 1))
    elif kind == 2:  # large offset and range
        s = rs.randn(n + 1, n + 1) * 50.0 + 1000.0
    else:  # very few distinct values
        s = rs.randint(0, 2, size=(n + 1, n + 1))
    return s.astype(np.float32)


def check_tree(heads, n, single_root, projective):
    assert isinstance(heads, np.ndarray) and heads.dtype == np.int32
    assert heads.shape == (n + 1,) and heads[0] == -1
    assert is_valid_tree(heads, single_root=single_root), heads
    if single_root and n > 0:
        assert (heads[1:] == 0).sum() == 1, heads
    if projective:
        assert is_projective(heads), heads


# ---------------------------------------------------------------------------
# the enumeration itself, and the pure-Python helpers against it


@pytest.mark.parametrize("n", range(1, MAX_N + 1))
def test_enumeration_counts(n):
    trees, single, proj, _ = enumerate_trees(n)
    assert len(trees) == (n + 1) ** (n - 1)  # Cayley: rooted labelled trees
    assert single.sum() == n ** (n - 1)
    # non-crossing trees on n+1 points rooted at the first one
    assert proj.sum() == comb(3 * n, n) // (2 * n + 1)


@pytest.mark.parametrize("n", range(1, 6))
def test_helpers_match_enumeration(n):
    trees, single, proj, _ = enumerate_trees(n)
    tree_set = {tuple(t[1:]) for t in trees}
    single_set = {tuple(t[1:]) for t in trees[single]}
    proj_set = {tuple(t[1:]) for t in trees[proj]}
    for cand in candidates(n):
        heads = [-1] + [int(x) for x in cand[1:]]
        key = tuple(heads[1:])
        assert is_valid_tree(heads, single_root=False) == (key in tree_set)
        assert is_valid_tree(heads, single_root=True) == (key in single_set)
        if key in tree_set:
            assert is_projective(heads) == (key in proj_set)


def test_helpers_edge_cases():
    assert is_valid_tree([-1])
    assert is_valid_tree(np.array([-1], dtype=np.int32), single_root=False)
    assert not is_valid_tree([])
    assert not is_valid_tree([0, 0])  # heads[0] must be -1
    assert not is_valid_tree([-1, 1])  # self loop
    assert not is_valid_tree([-1, 2])  # out of range
    assert not is_valid_tree([-1, -1, 0])  # out of range
    assert not is_valid_tree([-1, 2, 1])  # cycle
    assert not is_valid_tree([-1, 0, 3, 2])  # cycle not through the first word
    assert not is_valid_tree([-1, 0, 0])
    assert is_valid_tree([-1, 0, 0], single_root=False)
    assert is_projective([-1])
    assert is_projective([-1, 0, 1, 2, 3])
    assert is_projective([-1, 2, 0, 2])
    assert not is_projective([-1, 3, 0, 2])  # 3 -> 1 crosses 0 -> 2
    assert not is_projective([-1, 0, 4, 1, 1])  # 1 -> 3 crosses 4 -> 2


# ---------------------------------------------------------------------------
# decoders against brute force

N_MATRICES = {1: 200, 2: 500, 3: 1000, 4: 1000, 5: 1000, 6: 800, 7: 400}


@pytest.mark.parametrize("n", range(1, MAX_N + 1))
def test_decoders_match_brute_force(n):
    trees, single, proj, arcs = enumerate_trees(n)
    masks = {
        ("eisner", True): single & proj,
        ("eisner", False): proj,
        ("cle", True): single,
        ("cle", False): np.ones(len(trees), dtype=bool),
    }
    decoders = {"eisner": eisner, "cle": chu_liu_edmonds}
    rs = np.random.RandomState(1000 + n)
    for i in range(N_MATRICES[n]):
        scores = random_scores(rs, n, i % 4)
        all_scores = scores.astype(np.float64).ravel()[arcs].sum(axis=1)
        for (name, single_root), mask in masks.items():
            heads = decoders[name](scores, single_root=single_root)
            check_tree(heads, n, single_root, projective=(name == "eisner"))
            best = all_scores[mask].max()
            got = tree_score(scores, heads)
            assert abs(got - best) <= TOL, (name, single_root, scores, heads, got, best)


# ---------------------------------------------------------------------------
# larger n: independent (slow, pure Python/numpy) reference decoders


def reference_cle(scores):
    """Textbook recursive Chu-Liu-Edmonds (multiple root children allowed)."""
    W = np.array(scores, dtype=np.float64)
    N = len(W)
    W[:, 0] = -np.inf
    np.fill_diagonal(W, -np.inf)
    par = W.argmax(axis=0)
    par[0] = -1
    cycle = None
    for start in range(1, N):
        seen = []
        v = start
        while v > 0 and v not in seen:
            seen.append(v)
            v = par[v]
        if v > 0:
            cycle = seen[seen.index(v):]
            break
    if cycle is None:
        return par
    cyc = np.array(cycle)
    rest = [v for v in range(N) if v not in cycle]  # rest[0] == 0
    M = len(rest) + 1
    W2 = np.full((M, M), -np.inf)
    W2[: M - 1, : M - 1] = W[np.ix_(rest, rest)]
    enter = {}
    leave = {}
    for i, u in enumerate(rest):
        gain = W[u, cyc] - W[par[cyc], cyc]
        W2[i, M - 1] = gain.max()
        enter[i] = cyc[gain.argmax()]
        if i > 0:
            W2[M - 1, i] = W[cyc, u].max()
            leave[i] = cyc[W[cyc, u].argmax()]
    par2 = reference_cle(W2)
    heads = par.copy()
    for j, v in enumerate(rest[1:], start=1):
        heads[v] = leave[j] if par2[j] == M - 1 else rest[par2[j]]
    heads[enter[par2[M - 1]]] = rest[par2[M - 1]]
    return heads


def reference_eisner_scores(scores):
    """Best projective tree scores (multi-root, single-root) by a numpy chart."""
    S = np.asarray(scores, dtype=np.float64)
    N = len(S)
    n = N - 1
    cr = np.full((N, N), -np.inf)
    cl = np.full((N, N), -np.inf)
    ir = np.full((N, N), -np.inf)
    il = np.full((N, N), -np.inf)
    np.fill_diagonal(cr, 0.0)
    np.fill_diagonal(cl, 0.0)
    for w in range(1, N):
        for s in range(N - w):
            t = s + w
            split = (cr[s, s:t] + cl[s + 1 : t + 1, t]).max()
            ir[s, t] = split + S[s, t]
            if s > 0:
                il[s, t] = split + S[t, s]
            cr[s, t] = (ir[s, s + 1 : t + 1] + cr[s + 1 : t + 1, t]).max()
            if s > 0:
                cl[s, t] = (cl[s, s:t] + il[s:t, t]).max()
    single = max(S[0, r] + cl[1, r] + cr[r, n] for r in range(1, N))
    return cr[0, n], single


@pytest.mark.parametrize("n", [10, 20, 40])
def test_larger_against_reference(n):
    rs = np.random.RandomState(2000 + n)
    for i in range(12):
        scores = random_scores(rs, n, i % 4)
        # CLE, several root children: reference tree's score
        ref = reference_cle(scores)
        assert is_valid_tree(ref, single_root=False)
        multi = chu_liu_edmonds(scores, single_root=False)
        check_tree(multi, n, False, projective=False)
        assert abs(tree_score(scores, multi) - tree_score(scores, ref)) <= TOL
        # CLE, one root child: best over the choice of that child
        best_single = -np.inf
        for r in range(1, n + 1):
            restricted = scores.astype(np.float64)
            restricted[0, 1:] = -np.inf
            restricted[0, r] = scores[0, r]
            best_single = max(best_single, tree_score(scores, reference_cle(restricted)))
        single = chu_liu_edmonds(scores, single_root=True)
        check_tree(single, n, True, projective=False)
        assert abs(tree_score(scores, single) - best_single) <= TOL
        # Eisner, both variants
        ref_multi, ref_single = reference_eisner_scores(scores)
        for single_root, expected in ((False, ref_multi), (True, ref_single)):
            heads = eisner(scores, single_root=single_root)
            check_tree(heads, n, single_root, projective=True)
            assert abs(tree_score(scores, heads) - expected) <= TOL


# ---------------------------------------------------------------------------
# special cases


@pytest.mark.parametrize("decode", [eisner, chu_liu_edmonds])
@pytest.mark.parametrize("single_root", [True, False])
def test_tiny(decode, single_root):
    heads = decode(np.zeros((1, 1), dtype=np.float32), single_root=single_root)
    assert heads.dtype == np.int32 and heads.tolist() == [-1]
    heads = decode(np.array([[0.0, -3.0], [5.0, 0.0]], dtype=np.float32), single_root=single_root)
    assert heads.dtype == np.int32 and heads.tolist() == [-1, 0]


def test_non_projective_beats_projective():
    # Best tree 0 -> 2, 2 -> 3, 3 -> 1: arc 3 -> 1 crosses 0 -> 2.
    scores = np.zeros((4, 4), dtype=np.float32)
    scores[0, 2] = scores[2, 3] = scores[3, 1] = 10.0
    for single_root in (True, False):
        cle = chu_liu_edmonds(scores, single_root=single_root)
        assert cle.tolist() == [-1, 3, 0, 2]
        assert not is_projective(cle)
        eis = eisner(scores, single_root=single_root)
        check_tree(eis, 3, single_root, projective=True)
        assert tree_score(scores, eis) == pytest.approx(20.0)
        assert tree_score(scores, eis) < tree_score(scores, cle)


def test_single_root_forbids_two_root_children():
    scores = np.zeros((4, 4), dtype=np.float32)
    scores[0, 1] = scores[0, 3] = 10.0
    scores[1, 2] = 5.0
    scores[3, 2] = 4.0
    scores[1, 3] = 1.0
    for decode in (eisner, chu_liu_edmonds):
        assert decode(scores, single_root=False).tolist() == [-1, 0, 1, 0]
        assert decode(scores, single_root=True).tolist() == [-1, 0, 1, 1]


def test_single_root_with_dominant_root_arcs():
    # Root arcs far above everything else: plain MST takes all words as root
    # children, single_root keeps exactly one.
    rs = np.random.RandomState(7)
    n = 12
    scores = rs.randn(n + 1, n + 1).astype(np.float32)
    scores[0, 1:] += 1000.0
    for decode, projective in ((eisner, True), (chu_liu_edmonds, False)):
        multi = decode(scores, single_root=False)
        assert (multi[1:] == 0).all()
        check_tree(decode(scores, single_root=True), n, True, projective)


def test_unused_cells_are_ignored():
    rs = np.random.RandomState(3)
    n = 6
    for _ in range(50):
        scores = rs.randn(n + 1, n + 1).astype(np.float32)
        noisy = scores.copy()
        noisy[:, 0] = np.nan
        noisy[np.arange(n + 1), np.arange(n + 1)] = np.inf
        for decode in (eisner, chu_liu_edmonds):
            for single_root in (True, False):
                a = decode(scores, single_root=single_root)
                b = decode(noisy, single_root=single_root)
                assert a.tolist() == b.tolist()


@pytest.mark.parametrize("single_root", [True, False])
def test_long_sentence(single_root):
    n = 300
    rs = np.random.RandomState(300)
    scores = rs.randn(n + 1, n + 1).astype(np.float32)
    t0 = time.perf_counter()
    eis = eisner(scores, single_root=single_root)
    t1 = time.perf_counter()
    cle = chu_liu_edmonds(scores, single_root=single_root)
    t2 = time.perf_counter()
    check_tree(eis, n, single_root, projective=True)
    check_tree(cle, n, single_root, projective=False)
    assert t1 - t0 < 2.0 and t2 - t1 < 2.0
    # the non-projective optimum is at least as good as the projective one
    assert tree_score(scores, cle) >= tree_score(scores, eis) - TOL
    if single_root:
        assert tree_score(scores, cle) <= tree_score(
            scores, chu_liu_edmonds(scores, single_root=False)
        ) + TOL


def test_chain_of_cycles():
    # Every word's best head is its right neighbour (last word -> first):
    # one big cycle to contract.
    n = 8
    scores = np.zeros((n + 1, n + 1), dtype=np.float32)
    for c in range(1, n + 1):
        scores[c % n + 1, c] = 5.0
    scores[0, 4] = 1.0
    for single_root in (True, False):
        heads = chu_liu_edmonds(scores, single_root=single_root)
        check_tree(heads, n, single_root, projective=False)
        assert tree_score(scores, heads) == pytest.approx(5.0 * (n - 1) + 1.0)


@pytest.mark.parametrize("decode", [eisner, chu_liu_edmonds])
def test_input_conversion_and_validation(decode):
    rs = np.random.RandomState(11)
    scores = rs.randn(6, 6).astype(np.float32)
    expected = decode(scores).tolist()
    assert decode(scores.astype(np.float64)).tolist() == expected
    assert decode(scores.tolist()).tolist() == expected
    assert decode(np.asfortranarray(scores)).tolist() == expected
    readonly = scores.copy()
    readonly.setflags(write=False)
    assert decode(readonly).tolist() == expected
    for bad in (np.zeros(4), np.zeros((3, 4)), np.zeros((2, 2, 2)), np.zeros((0, 0))):
        with pytest.raises(ValueError, match="square"):
            decode(bad)
