"""Hildreth's algorithm and k-best MIRA against brute force.

The dual QP max b.a - a'Ga/2, 0 <= a <= C is solved exactly by enumerating
which coordinates sit at 0, at C or are free (solving the linear system for
the free ones) and keeping the best feasible KKT point.
"""
import itertools

import numpy as np
import pytest

from spacy_mstparse.learners import MIRA, WeightTable, hildreth
from spacy_mstparse.learners.sparse import dot as sparse_dot


def dual(G, b, a):
    return float(b @ a - 0.5 * a @ G @ a)


def brute_force_dual(G, b, C):
    k = len(b)
    best, best_a = -np.inf, None
    for state in itertools.product((0, 1, 2), repeat=k):  # 0: at 0, 1: free, 2: at C
        a = np.array([0.0 if s == 0 else (C if s == 2 else np.nan) for s in state])
        free = [i for i, s in enumerate(state) if s == 1]
        fixed = [i for i, s in enumerate(state) if s != 1]
        if np.isinf(C) and 2 in state:
            continue
        if free:
            rhs = b[free] - G[np.ix_(free, fixed)] @ a[fixed] if fixed else b[free]
            try:
                a[free] = np.linalg.solve(G[np.ix_(free, free)], rhs)
            except np.linalg.LinAlgError:
                continue
        if (a < -1e-9).any() or (a > C + 1e-9).any():
            continue
        value = dual(G, b, a)
        if value > best:
            best, best_a = value, a
    return best, best_a


@pytest.mark.parametrize("C", [np.inf, 0.5, 0.05])
def test_hildreth_matches_brute_force(C):
    rs = np.random.RandomState(0)
    for _ in range(200):
        k = rs.randint(1, 5)
        X = rs.randn(k, 6)
        G = X @ X.T + 1e-3 * np.eye(k)
        b = rs.randn(k) * 2
        alpha = hildreth(G, b, C)
        expected, _ = brute_force_dual(G, b, C)
        assert (alpha >= 0).all() and (alpha <= C + 1e-12).all()
        assert dual(G, b, alpha) == pytest.approx(expected, rel=1e-6, abs=1e-6)


def test_hildreth_single_constraint_is_closed_form():
    alpha = hildreth(np.array([[4.0]]), np.array([3.0]))
    assert alpha[0] == pytest.approx(0.75)
    assert hildreth(np.array([[4.0]]), np.array([-3.0]))[0] == 0.0
    assert hildreth(np.array([[4.0]]), np.array([3.0]), C=0.1)[0] == pytest.approx(0.1)


def test_hildreth_validation():
    with pytest.raises(ValueError, match="G must be"):
        hildreth(np.eye(2), np.ones(3))
    with pytest.raises(ValueError, match="C must be"):
        hildreth(np.eye(2), np.ones(2), C=0.0)


def random_sparse(rs, n_buckets, nnz):
    idx = np.sort(rs.choice(n_buckets, size=nnz, replace=False)).astype(np.uint64)
    return idx, rs.randint(-2, 3, size=nnz).astype(np.float64)


def test_k_best_mira_satisfies_every_margin():
    """After one unclipped k-best step, w.x_i >= L_i for each constraint
    (they are jointly feasible for random sparse vectors), and the change of
    w is the minimum-norm one: its dual equals the brute-force optimum."""
    rs = np.random.RandomState(1)
    n = 64
    for _ in range(50):
        table = WeightTable(n)
        table.add(*random_sparse(rs, n, 20), 0.3)
        before = table.current().astype(np.float64)
        cons = []
        for _ in range(rs.randint(2, 5)):
            idx, val = random_sparse(rs, n, 12)
            val[val == 0] = 1.0
            cons.append((idx, val, int(rs.randint(1, 6))))
        MIRA(k=5).step(table, [cons])
        after = table.current().astype(np.float64)
        for idx, val, loss in cons:
            assert after[idx.astype(np.int64)] @ val >= loss - 1e-3
        k = len(cons)
        G = np.array([[sparse_dot(a[0], a[1], c[0], c[1]) for c in cons] for a in cons])
        b = np.array([c[2] - before[c[0].astype(np.int64)] @ c[1] for c in cons])
        best, _ = brute_force_dual(G, b, np.inf)
        change = after - before
        # the primal objective of the QP equals the dual optimum
        assert 0.5 * change @ change == pytest.approx(best, rel=1e-3, abs=1e-3)
        assert table.n_ticks == 1 and k >= 2


def test_mira_k_validation_and_pickle():
    import pickle

    with pytest.raises(ValueError, match="k must be"):
        MIRA(k=0)
    m = pickle.loads(pickle.dumps(MIRA(C=0.5, k=3)))
    assert (m.C, m.k) == (0.5, 3)
