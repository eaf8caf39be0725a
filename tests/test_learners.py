"""The Cython learners against direct dense numpy computations of the same rules."""
import math
import pickle

import numpy as np
import pytest

from spacy_mstparse.learners import (
    MIRA,
    PassiveAggressive,
    Pegasos,
    Perceptron,
    WeightTable,
    pa_tau,
    single_constraint_tau,
    sparse_difference,
)
from spacy_mstparse.learners.weight_table import RENORM_LOW

N = 16


# --------------------------------------------------------------------- helpers


def sparse(pairs):
    """{bucket: value} -> (idx uint64 sorted unique, val float64)."""
    keys = sorted(pairs)
    return (np.array(keys, dtype=np.uint64),
            np.array([pairs[k] for k in keys], dtype=np.float64))


def dense(idx, val, n=N):
    x = np.zeros(n)
    x[idx.astype(np.int64)] = val
    return x


def random_batch(rng, n_sent, n=N, p_zero=0.15):
    """Sentences as (idx, val, n_wrong); some correct ones (x = 0, n_wrong = 0)."""
    out = []
    for _ in range(n_sent):
        if rng.random() < p_zero:
            out.append((np.zeros(0, dtype=np.uint64), np.zeros(0), 0))
            continue
        size = rng.integers(2, 7)
        idx = np.sort(rng.choice(n, size=size, replace=False)).astype(np.uint64)
        val = rng.choice([-2.0, -1.0, 1.0, 2.0], size=size)
        out.append((idx, val, int(rng.integers(1, 6))))
    return out


class DenseRef:
    """w as a dense float64 vector; the average is the mean of w after every tick."""

    def __init__(self, n=N):
        self.w = np.zeros(n)
        self.history = []

    def tick(self):
        self.history.append(self.w.copy())

    def averaged(self):
        return np.mean(self.history, axis=0) if self.history else self.w


def assert_close(table, ref, rtol=1e-5):
    for got, want in ((table.current(), ref.w), (table.averaged(), ref.averaged())):
        assert got.dtype == np.float32
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)
    assert table.n_ticks == len(ref.history)
    assert math.isclose(table.sq_norm(), float(ref.w @ ref.w), rel_tol=1e-5, abs_tol=1e-9)


def perceptron_ref(ref, batch):
    for idx, val, n_wrong in batch:
        if n_wrong > 0:
            ref.w += dense(idx, val)
        ref.tick()


def mira_ref(ref, batch, C=math.inf):
    taus = []
    for idx, val, n_wrong in batch:
        x = dense(idx, val)
        sq = x @ x
        tau = 0.0
        if sq > 0:
            tau = min(C, max(0.0, (n_wrong - ref.w @ x) / sq))
            ref.w += tau * x
        taus.append(tau)
        ref.tick()
    return taus


def pa_ref(ref, batch, variant, C):
    taus = []
    for idx, val, n_wrong in batch:
        x = dense(idx, val)
        sq = x @ x
        tau = 0.0
        if sq > 0:
            loss = max(0.0, math.sqrt(n_wrong) - ref.w @ x)
            if variant == "PA":
                tau = loss / sq
            elif variant == "PA-I":
                tau = min(C, loss / sq)
            else:
                tau = loss / (sq + 1.0 / (2.0 * C))
            ref.w += tau * x
        taus.append(tau)
        ref.tick()
    return taus


def pegasos_ref(ref, batch, lam, t, radius=None):
    """One step of Lee et al. (2010), Algorithm 2, on the sentences whose
    hinge n_wrong - w.x is positive; returns True if projected."""
    radius = 1.0 / math.sqrt(lam) if radius is None else radius
    eta = 1.0 / (lam * t)
    total = sum(dense(idx, val) for idx, val, n_wrong in batch
                if n_wrong - ref.w @ dense(idx, val) > 0)
    ref.w = (1.0 - eta * lam) * ref.w + (eta / len(batch)) * total
    norm = np.linalg.norm(ref.w)
    projected = norm > radius
    if projected:
        ref.w *= radius / norm
    ref.tick()
    return projected


# ----------------------------------------------------------------- WeightTable


def test_weight_table_basic_ops_match_dense():
    rng = np.random.default_rng(0)
    table, ref = WeightTable(N), DenseRef()
    for step in range(40):
        idx, val, _ = random_batch(rng, 1, p_zero=0.0)[0]
        alpha = float(rng.normal())
        table.add(idx, val, alpha)
        ref.w += alpha * dense(idx, val)
        if step % 3 == 0:
            factor = float(rng.uniform(0.5, 1.2))
            table.scale_by(factor)
            ref.w *= factor
        assert math.isclose(table.dot(idx, val), ref.w @ dense(idx, val),
                            rel_tol=1e-5, abs_tol=1e-6)
        table.tick()
        ref.tick()
    assert_close(table, ref)


def test_long_updates_of_a_large_table_match_dense():
    """Updates of hundreds of far-apart buckets (as training's update
    vectors are) keep the current and averaged weights of a dense
    reference, with some buckets hit by consecutive updates."""
    n = 2**14
    rng = np.random.default_rng(3)
    table, ref = WeightTable(n), DenseRef(n)
    shared = rng.choice(n, 200, replace=False)
    for step in range(30):
        ids = np.unique(np.concatenate([shared[rng.random(200) < 0.5],
                                        rng.integers(0, n, int(rng.integers(1, 600)))]))
        idx, val = ids.astype(np.uint64), rng.normal(size=len(ids))
        alpha = float(rng.normal())
        table.add(idx, val, alpha)
        ref.w += alpha * dense(idx, val, n)
        table.tick()
        ref.tick()
    assert_close(table, ref)


def test_sparse_dot_matches_dense():
    """x_a . x_b of sorted sparse vectors: overlapping, disjoint, identical,
    empty, one inside the other."""
    from spacy_mstparse.learners.sparse import dot

    n = 5000
    rng = np.random.default_rng(4)
    base = np.unique(rng.integers(0, n, 800))
    a = np.unique(np.concatenate([base[rng.random(len(base)) < 0.8], rng.integers(0, n, 100)]))
    b = np.unique(np.concatenate([base[rng.random(len(base)) < 0.8], rng.integers(0, n, 100)]))
    va, vb = rng.normal(size=len(a)), rng.normal(size=len(b))
    evens, odds = np.arange(0, 40, 2), np.arange(1, 40, 2)
    empty = np.zeros(0, dtype=np.int64)
    cases = [(a, va, b, vb), (evens, va[:20], odds, vb[:20]), (a, va, a, va),
             (empty, va[:0], b, vb), (a, va, a[::3], va[::3] * 2.0)]
    for ia, xa, ib, xb in cases:
        want = float(dense(ia.astype(np.uint64), xa, n) @ dense(ib.astype(np.uint64), xb, n))
        got = dot(ia.astype(np.uint64), np.ascontiguousarray(xa),
                  ib.astype(np.uint64), np.ascontiguousarray(xb))
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert dot(evens.astype(np.uint64), va[:20].copy(), odds.astype(np.uint64), vb[:20].copy()) == 0.0


def test_weight_table_copies_span_slices():
    """``current`` and ``averaged`` of a table longer than the slice they are
    computed in (``_CHUNK`` buckets) match the dense reference on both sides
    of every slice boundary."""
    from spacy_mstparse.learners import weight_table

    n = 2 * weight_table._CHUNK + 5
    edges = [0, weight_table._CHUNK - 1, weight_table._CHUNK, 2 * weight_table._CHUNK, n - 1]
    table = WeightTable(n)
    w = np.zeros(len(edges))
    total = np.zeros(len(edges))
    idx = np.array(edges, dtype=np.uint64)
    rng = np.random.default_rng(3)
    for step in range(6):
        val = rng.normal(size=len(edges))
        table.add(idx, val, 0.5)
        w += 0.5 * val
        if step % 2:
            table.scale_by(0.8)
            w *= 0.8
        table.tick()
        total += w
    current, averaged = table.current(), table.averaged()
    np.testing.assert_allclose(current[edges], w, rtol=1e-5)
    np.testing.assert_allclose(averaged[edges], total / 6, rtol=1e-5)
    others = np.ones(n, dtype=bool)
    others[edges] = False
    assert not current[others].any() and not averaged[others].any()


def test_weight_table_before_first_tick():
    table = WeightTable(N)
    table.add(*sparse({3: 2.0}), 1.5)
    assert table.n_ticks == 0
    np.testing.assert_array_equal(table.averaged(), table.current())
    assert table.current()[3] == pytest.approx(3.0)


def test_weight_table_scale_by_zero_keeps_average_history():
    table, ref = WeightTable(N), DenseRef()
    table.add(*sparse({1: 1.0, 2: -2.0}), 1.0)
    ref.w += dense(*sparse({1: 1.0, 2: -2.0}))
    table.tick(), ref.tick()
    table.scale_by(0.0)
    ref.w *= 0.0
    assert table.scale == 1.0 and table.sq_norm() == 0.0
    table.tick(), ref.tick()
    table.add(*sparse({2: 1.0, 9: 1.0}), 2.0)
    ref.w += 2.0 * dense(*sparse({2: 1.0, 9: 1.0}))
    table.tick(), ref.tick()
    assert_close(table, ref)


@pytest.mark.parametrize("mode", ["one_tiny_factor", "many_small_factors", "forced"])
def test_weight_table_renormalisation_matches_dense(mode):
    rng = np.random.default_rng(1)
    table, ref = WeightTable(N), DenseRef()
    n_renorm = 0
    for step in range(30):
        idx, val, _ = random_batch(rng, 1, p_zero=0.0)[0]
        alpha = float(rng.normal())
        table.add(idx, val, alpha)
        ref.w += alpha * dense(idx, val)
        if mode == "one_tiny_factor" and step == 10:
            table.scale_by(1e-7)   # below the RENORM_LOW threshold at once
            ref.w *= 1e-7
            assert table.scale == 1.0
            n_renorm += 1
        elif mode == "many_small_factors":
            before = table.scale
            table.scale_by(0.3)    # crosses the threshold every ~12 steps
            ref.w *= 0.3
            assert RENORM_LOW <= table.scale <= 1.0
            n_renorm += table.scale > before
        elif mode == "forced" and step % 7 == 0:
            table.scale_by(0.5)
            ref.w *= 0.5
            table.renormalize()
            assert table.scale == 1.0
            n_renorm += 1
        table.tick()
        ref.tick()
    assert n_renorm >= 1
    assert_close(table, ref)
    v = table.values.astype(np.float64)
    assert math.isclose(table.sq_norm_v, float(v @ v), rel_tol=1e-9)


def test_weight_table_updates_touch_only_touched_buckets():
    table = WeightTable(N)
    learner = Pegasos(lam=0.5, k=2)   # shrink, adds and projection all happen
    touched = [1, 4, 7]
    batch = [(*sparse({1: 1.0, 4: -1.0}), 2), (*sparse({4: 2.0, 7: 1.0}), 1)]
    stats = [learner.step(table, batch) for _ in range(5)]
    assert any(s["projected"] for s in stats)
    for other in (Perceptron(), MIRA(), PassiveAggressive("PA-II", C=1.0)):
        other.step(table, batch)
    assert np.flatnonzero(table.touched_buckets()).tolist() == touched
    assert np.all(table.current()[touched] != 0.0)


def test_weight_table_pickle_round_trip():
    rng = np.random.default_rng(2)
    table = WeightTable(N)
    learner = Pegasos(lam=0.05, k=2)
    for _ in range(6):
        learner.step(table, random_batch(rng, 2))
    table.scale_by(0.5)
    copy = pickle.loads(pickle.dumps(table))
    assert copy.n_buckets == N
    for name in ("scale", "cum_scale", "n_ticks", "sq_norm_v"):
        assert getattr(copy, name) == getattr(table, name)
    np.testing.assert_array_equal(copy.current(), table.current())
    np.testing.assert_array_equal(copy.averaged(), table.averaged())
    assert not np.shares_memory(copy.values, table.values)
    # both continue identically
    batch = random_batch(rng, 2, p_zero=0.0)
    learner_copy = pickle.loads(pickle.dumps(learner))
    learner.step(table, batch)
    learner_copy.step(copy, batch)
    np.testing.assert_array_equal(copy.current(), table.current())
    np.testing.assert_array_equal(copy.averaged(), table.averaged())


def test_weight_table_values_are_a_read_only_view():
    table = WeightTable(N)
    values = table.values
    assert values.dtype == np.float32 and values.shape == (N,)
    with pytest.raises(ValueError):
        values[3] = 1.0
    with pytest.raises(ValueError):
        values.flags.writeable = True
    with pytest.raises(ValueError):
        np.add(values, 1.0, out=values)
    # a view, not a copy: it follows the table (w = scale * values)
    table.add(*sparse({3: 2.0}), 1.0)
    table.scale_by(0.5)
    assert values[3] == pytest.approx(2.0) and table.scale * values[3] == pytest.approx(1.0)
    assert np.all(table.current() == table.scale * table.values)


@pytest.mark.parametrize("scale_mode", ["plain", "shrinking"])
def test_mixed_table_keeps_the_averaging_invariant(scale_mode):
    """set_mixed(w, totals, n): current w, average totals / n, and after
    further steps the mean of every w over the n past and the new ticks,
    against a dense list of w after each tick."""
    rng = np.random.default_rng(11)
    past = [rng.normal(size=N) for _ in range(7)]      # w over 7 earlier ticks
    w0 = rng.normal(size=N).astype(np.float32)
    table = WeightTable(N)
    for _ in range(3):                                  # a table with a history of its own
        table.add(*random_batch(rng, 1, p_zero=0.0)[0][:2], 0.7)
        table.scale_by(0.4)
        table.tick()
    table.set_mixed(w0, np.sum(past, axis=0), len(past))
    assert table.n_ticks == len(past) and table.scale == 1.0
    np.testing.assert_array_equal(table.current(), w0)
    np.testing.assert_allclose(table.averaged(), np.mean(past, axis=0), rtol=1e-6)
    ref = DenseRef()
    ref.w = w0.astype(np.float64)
    ref.history = list(past)
    for step in range(40):
        idx, val, _ = random_batch(rng, 1, p_zero=0.0)[0]
        if step % 3 == 0:
            table.assign(idx, val)
            ref.w[idx.astype(np.int64)] = val
        else:
            table.add(idx, val, 0.3)
            ref.w += 0.3 * dense(idx, val)
        if scale_mode == "shrinking":
            table.scale_by(0.2)    # renormalises every ~9 steps
            ref.w *= 0.2
        table.tick()
        ref.tick()
    assert_close(table, ref)
    with pytest.raises(ValueError):
        table.set_mixed(np.zeros(N + 1), np.zeros(N + 1), 0)
    with pytest.raises(ValueError):
        table.set_mixed(np.zeros(N), np.zeros(N), -1)
    with pytest.raises(ValueError):
        table.set_mixed(np.zeros(N), np.zeros(N - 1), 2)
    assert table.n_ticks == len(ref.history)       # a refused state changes nothing


def test_weight_table_is_plain_until_scaled_or_ticked():
    table = WeightTable(N)
    assert table.is_plain()
    table.assign(*sparse({2: 1.5}))
    assert table.is_plain()
    table.scale_by(0.5)
    assert not table.is_plain()
    table.restart_average()
    assert table.is_plain() and table.current()[2] == pytest.approx(0.75)
    table.tick()
    assert not table.is_plain()


def test_weight_table_invalid_input():
    with pytest.raises(ValueError):
        WeightTable(0)
    table = WeightTable(N)
    with pytest.raises(IndexError):
        table.add(np.array([N], dtype=np.uint64), np.array([1.0]), 1.0)
    with pytest.raises(IndexError):
        table.dot(np.array([N + 3], dtype=np.uint64), np.array([1.0]))
    with pytest.raises(ValueError):
        table.add(np.array([1, 2], dtype=np.uint64), np.array([1.0]), 1.0)
    with pytest.raises(ValueError):
        table.scale_by(float("nan"))
    with pytest.raises(ValueError):
        table.restart_average(np.zeros(N + 1))
    assert table.n_ticks == 0 and not np.any(table.values)


# ------------------------------------------------------------------ learners


def test_perceptron_matches_dense():
    rng = np.random.default_rng(3)
    learner, table, ref = Perceptron(), WeightTable(N), DenseRef()
    assert (learner.batch_size, learner.loss_augmented, learner.averaged) == (1, False, True)
    assert learner.predicts_with_average() and not Perceptron(averaged=False).predicts_with_average()
    for _ in range(5):
        batch = random_batch(rng, 3)
        stats = learner.step(table, batch)
        perceptron_ref(ref, batch)
        assert stats["n_sentences"] == 3
    assert_close(table, ref)
    assert table.n_ticks == 15   # every sentence ticks, also correct ones


def test_mira_hand_example():
    x = sparse({2: 1.0, 5: -1.0})        # ||x||^2 = 2
    table = WeightTable(N)
    stats = MIRA().step(table, [(*x, 2)])  # tau = (2 - 0) / 2 = 1
    assert stats["tau"] == pytest.approx(1.0)
    np.testing.assert_allclose(table.current(), dense(*x))
    # margin w.x = 2 >= loss 1: no update, but a tick
    stats = MIRA().step(table, [(*x, 1)])
    assert stats["n_updates"] == 0 and stats["tau"] == 0.0
    np.testing.assert_allclose(table.current(), dense(*x))
    np.testing.assert_allclose(table.averaged(), dense(*x))
    assert table.n_ticks == 2
    # clipping by C
    clipped = WeightTable(N)
    stats = MIRA(C=0.25).step(clipped, [(*x, 2)])
    assert stats["tau"] == pytest.approx(0.25)
    np.testing.assert_allclose(clipped.current(), 0.25 * dense(*x))
    assert single_constraint_tau(3.0, 1.0, 4.0, math.inf) == pytest.approx(0.5)
    assert single_constraint_tau(1.0, 3.0, 4.0, math.inf) == 0.0
    assert single_constraint_tau(1.0, 0.0, 0.0, math.inf) == 0.0


@pytest.mark.parametrize("C", [math.inf, 0.3])
def test_mira_matches_dense(C):
    rng = np.random.default_rng(4)
    learner, table, ref = MIRA(C=C), WeightTable(N), DenseRef()
    for _ in range(12):
        batch = random_batch(rng, 1)
        stats = learner.step(table, batch)
        (tau,) = mira_ref(ref, batch, C)
        assert stats["tau"] == pytest.approx(tau, rel=1e-5, abs=1e-9)
    assert_close(table, ref)


def test_passive_aggressive_hand_example():
    x = sparse({0: 1.0, 3: 1.0, 8: -1.0, 9: -1.0})   # ||x||^2 = 4
    batch = [(*x, 4)]                                 # loss = sqrt(4) - 0 = 2
    expected = {"PA": 0.5, "PA-I": 0.05, "PA-II": 2.0 / (4.0 + 1.0 / (2 * 0.05))}
    for variant, tau in expected.items():
        table = WeightTable(N)
        stats = PassiveAggressive(variant, C=0.05).step(table, batch)
        assert stats["tau"] == pytest.approx(tau)
        assert stats["loss"] == pytest.approx(2.0)
        np.testing.assert_allclose(table.current(), tau * dense(*x), rtol=1e-6)
    # after PA, the margin w.x = 2 equals sqrt(4): loss 0, no further update
    table = WeightTable(N)
    learner = PassiveAggressive("PA", C=0.05)
    learner.step(table, batch)
    stats = learner.step(table, batch)
    assert stats["n_updates"] == 0 and stats["tau"] == 0.0
    assert pa_tau(1, 2.0, 4.0, 10.0) == pytest.approx(0.5)
    assert pa_tau(2, 0.0, 4.0, 10.0) == 0.0


@pytest.mark.parametrize("variant", ["PA", "PA-I", "PA-II"])
@pytest.mark.parametrize("C", [0.05, 1.0])
def test_passive_aggressive_matches_dense(variant, C):
    rng = np.random.default_rng(5)
    learner, table, ref = PassiveAggressive(variant, C=C), WeightTable(N), DenseRef()
    assert learner.variant == variant and learner.C == C
    for _ in range(12):
        batch = random_batch(rng, 1)
        stats = learner.step(table, batch)
        (tau,) = pa_ref(ref, batch, variant, C)
        assert stats["tau"] == pytest.approx(tau, rel=1e-5, abs=1e-9)
    assert_close(table, ref)


@pytest.mark.parametrize("k", [1, 2])
# projection at t = 1 iff ||mean x|| > sqrt(lam): small lam always projects early
@pytest.mark.parametrize("lam,expect_projection", [(0.5, True), (1e-3, True), (50.0, False)])
def test_pegasos_matches_dense(k, lam, expect_projection):
    rng = np.random.default_rng(6 + k)
    learner, table, ref = Pegasos(lam=lam, k=k), WeightTable(N), DenseRef()
    assert learner.batch_size == k and learner.loss_augmented and learner.predicts_with_average()
    projections = []
    sizes = [k] * 9 + ([1] if k == 2 else [])   # a short last batch
    for t, size in enumerate(sizes, start=1):
        batch = random_batch(rng, size, p_zero=0.1)
        stats = learner.step(table, batch)
        projected = pegasos_ref(ref, batch, lam, t)
        assert stats["projected"] == projected
        assert stats["eta"] == pytest.approx(1.0 / (lam * t))
        projections.append(projected)
        assert_close(table, ref)
    assert learner.t == len(sizes)
    assert table.n_ticks == len(sizes)   # one tick per step, not per sentence
    assert any(projections) == expect_projection
    assert np.linalg.norm(table.current()) <= 1.0 / math.sqrt(lam) * (1 + 1e-6)


def test_pegasos_radius_and_inactive_sentences():
    """A larger ball projects less often; sentences whose hinge is not
    positive (here: x pointing along w with a large margin) add nothing."""
    rng = np.random.default_rng(11)
    lam, radius = 0.5, 4.0
    learner, table, ref = Pegasos(lam=lam, k=2, radius=radius), WeightTable(N), DenseRef()
    assert learner.radius == radius and Pegasos(lam=0.25).radius == pytest.approx(2.0)
    skipped = 0
    for t in range(1, 13):
        batch = random_batch(rng, 2, p_zero=0.0)
        if t > 1:  # one sentence whose x is w itself: hinge 1 - ||w||^2 / ...
            w = table.current()
            idx = np.flatnonzero(w).astype(np.uint64)
            if idx.shape[0]:
                val = (10.0 * w[idx] / (w[idx] @ w[idx])).astype(np.float64)
                batch[0] = (idx, val, 1)   # margin w.x = 10 > loss 1
                skipped += 1
        stats = learner.step(table, batch)
        projected = pegasos_ref(ref, batch, lam, t, radius)
        assert stats["projected"] == projected
        assert_close(table, ref)
    assert skipped > 5
    assert np.linalg.norm(table.current()) <= radius * (1 + 1e-6)
    with pytest.raises(ValueError, match="radius"):
        Pegasos(lam=0.1, radius=0.0)


def test_pegasos_averaged_flag_and_first_step_shrink():
    rng = np.random.default_rng(8)
    assert Pegasos(averaged=False).averaged is False
    # w_1 != 0 is wiped by the t = 1 shrink factor (1 - eta_1 lam) = 0
    table, ref = WeightTable(N), DenseRef()
    table.add(*sparse({5: 3.0}), 1.0)
    ref.w += dense(*sparse({5: 3.0}))
    learner = Pegasos(lam=0.1, k=2, averaged=False)
    for t in range(1, 6):
        batch = random_batch(rng, 2, p_zero=0.0)
        learner.step(table, batch)
        pegasos_ref(ref, batch, 0.1, t)
    assert_close(table, ref)
    assert not np.allclose(table.current(), table.averaged())


def test_pegasos_many_steps_renormalises():
    # with a small lam the early steps are far outside the ball of radius
    # 1/sqrt(lam): the projections shrink the scale fast, renormalisation kicks in
    rng = np.random.default_rng(9)
    lam = 1e-4
    learner, table, ref = Pegasos(lam=lam, k=1), WeightTable(N), DenseRef()
    min_scale, previous_scale, n_renorm, T = 1.0, 1.0, 0, 3000
    for t in range(1, T + 1):
        batch = random_batch(rng, 1, p_zero=0.1)
        learner.step(table, batch)
        # dense reference keeping the running sum instead of the history
        eta = 1.0 / (lam * t)
        active = [dense(i, v) for i, v, n_wrong in batch if n_wrong - ref.w @ dense(i, v) > 0]
        ref.w = (1.0 - 1.0 / t) * ref.w + eta * sum(active)
        norm = np.linalg.norm(ref.w)
        if norm > 100.0:
            ref.w *= 100.0 / norm
        ref_sum = ref.w.copy() if t == 1 else ref_sum + ref.w
        n_renorm += table.scale > previous_scale   # only renormalising raises it
        previous_scale = table.scale
        min_scale = min(min_scale, table.scale)
    assert n_renorm >= 1 and min_scale >= RENORM_LOW
    np.testing.assert_allclose(table.current(), ref.w, rtol=1e-5,
                               atol=1e-5 * np.abs(ref.w).max())
    avg = ref_sum / T
    np.testing.assert_allclose(table.averaged(), avg, rtol=1e-5, atol=1e-5 * np.abs(avg).max())


def test_learner_pickle_round_trip():
    rng = np.random.default_rng(10)
    learners = [Perceptron(), MIRA(C=0.7), PassiveAggressive("PA-II", C=0.2),
                Pegasos(lam=0.01, k=3, averaged=False)]
    for learner in learners:
        table = WeightTable(N)
        learner.step(table, random_batch(rng, learner.batch_size))
        copy = pickle.loads(pickle.dumps(learner))
        assert type(copy) is type(learner) and repr(copy) == repr(learner)
        for name in ("batch_size", "loss_augmented", "averaged"):
            assert getattr(copy, name) == getattr(learner, name)
        table_copy = pickle.loads(pickle.dumps(table))
        batch = random_batch(rng, learner.batch_size, p_zero=0.0)
        learner.step(table, batch)
        copy.step(table_copy, batch)   # Pegasos' step counter t survives
        np.testing.assert_array_equal(table.current(), table_copy.current())
    assert pickle.loads(pickle.dumps(learners[3])).t == 2


def test_invalid_settings():
    for kwargs in ({"variant": "PA-III"}, {"variant": "pa-i"}, {"C": 0.0}, {"C": -1.0},
                   {"C": math.inf}, {"variant": "PA-II", "C": float("nan")}):
        with pytest.raises(ValueError):
            PassiveAggressive(**kwargs)
    for C in (0.0, -0.5, float("nan")):
        with pytest.raises(ValueError):
            MIRA(C=C)
    for kwargs in ({"lam": 0.0}, {"lam": -1.0}, {"lam": math.inf}, {"k": 0}):
        with pytest.raises(ValueError):
            Pegasos(**kwargs)


# ------------------------------------------------------------------- sparse


def test_sparse_difference_matches_numpy():
    rng = np.random.default_rng(11)
    for trial in range(200):
        hi = int(rng.choice([4, 50, 2**63]))
        gold = rng.integers(0, hi, size=rng.integers(0, 30), dtype=np.uint64)
        pred = rng.integers(0, hi, size=rng.integers(0, 30), dtype=np.uint64)
        if trial % 3 == 0:   # heavy overlap, as for two trees of one sentence
            pred = np.concatenate([gold[: len(gold) // 2], pred[:5]])
        idx, val = sparse_difference(gold, pred)
        counts = {}
        for f in gold.tolist():
            counts[f] = counts.get(f, 0) + 1
        for f in pred.tolist():
            counts[f] = counts.get(f, 0) - 1
        want = sorted((f, c) for f, c in counts.items() if c != 0)
        assert idx.dtype == np.uint64 and val.dtype == np.float64
        assert idx.tolist() == [f for f, _ in want]
        assert val.tolist() == [float(c) for _, c in want]
    idx, val = sparse_difference(np.array([3, 1, 1, 5], dtype=np.uint64),
                                 np.array([1, 5, 5, 7], dtype=np.uint64))
    assert idx.tolist() == [1, 3, 5, 7] and val.tolist() == [1.0, 1.0, -1.0, -1.0]
    idx, val = sparse_difference(np.array([2, 2], dtype=np.uint64),
                                 np.array([2, 2], dtype=np.uint64))
    assert len(idx) == 0 and len(val) == 0


# ------------------------------------------------------------------ registry


def test_registry_resolves_configs():
    spacy = pytest.importorskip("spacy")
    from spacy_mstparse import registry  # noqa: F401  (registers)

    config = {
        "perceptron": {"@mst_learners": "spacy_mstparse.Perceptron.v1"},
        "mira": {"@mst_learners": "spacy_mstparse.MIRA.v1", "C": 0.5},
        "pa": {"@mst_learners": "spacy_mstparse.PassiveAggressive.v1", "variant": "PA-II"},
        "pegasos": {"@mst_learners": "spacy_mstparse.Pegasos.v1", "lam": 0.01, "k": 4,
                    "averaged": False},
    }
    resolved = spacy.registry.resolve(config)
    assert isinstance(resolved["perceptron"], Perceptron)
    assert isinstance(resolved["mira"], MIRA) and resolved["mira"].C == 0.5
    assert resolved["pa"].variant == "PA-II" and resolved["pa"].C == 0.05
    peg = resolved["pegasos"]
    assert (peg.lam, peg.k, peg.batch_size, peg.averaged) == (0.01, 4, 4, False)
    assert math.isinf(spacy.registry.mst_learners.get("spacy_mstparse.MIRA.v1")().C)
    with pytest.raises(ValueError):
        spacy.registry.resolve({"x": {"@mst_learners": "spacy_mstparse.PassiveAggressive.v1",
                                      "variant": "nope"}})


def test_pegasos_default_radius_from_the_training_set():
    """radius None: sqrt(2 L(0) / lam), L(0) = mean words per gold sentence
    (one-word sentences have no wrong tree: 0), set by begin_training."""
    lam = 0.01
    learner = Pegasos(lam=lam)
    assert learner.radius_from_data and learner.radius == pytest.approx(1 / math.sqrt(lam))
    gold = [(None, np.array([-1, 0], "int32")),            # one word: loss 0
            (None, np.array([-1, 2, 0, 2], "int32")),      # three words
            (None, np.array([-1, 0, 1, 1, 3, 3], "int32"))]  # five words
    learner.begin_training(None, gold)
    assert learner.radius == pytest.approx(math.sqrt(2 * (0 + 3 + 5) / 3 / lam))
    fixed = Pegasos(lam=lam, radius=3.0)
    fixed.begin_training(None, gold)
    assert not fixed.radius_from_data and fixed.radius == 3.0
