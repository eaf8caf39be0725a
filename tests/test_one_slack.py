"""1-slack structural SVM (Joachims et al. 2009): the dual QP solver against
brute-force checks, the primal objective against Pegasos run to
convergence, the duality gap, and training inside mst_parser."""
import itertools

import numpy as np
import pytest
import spacy

from spacy_mstparse.decoders.trees import is_projective
from spacy_mstparse.features.config import FeatureConfig
from spacy_mstparse.features.doc_arrays import SentenceEncoder
from spacy_mstparse.graph import (
    GraphModel,
    loss_augmented_difference,
    primal_objective,
    train_one_slack,
)
from spacy_mstparse.learners import Pegasos, WeightTable
from spacy_mstparse.learners.one_slack import OneSlackSSVM
from spacy_mstparse.learners.one_slack_qp import project_capped_simplex, solve_dual


def test_projection_onto_capped_simplex():
    rng = np.random.default_rng(0)
    for _ in range(200):
        v = rng.normal(size=int(rng.integers(1, 6))) * 2
        p = project_capped_simplex(v)
        assert np.all(p >= 0) and p.sum() <= 1 + 1e-12
        # No feasible point is closer (random feasible points and vertices).
        others = [np.zeros_like(v), *np.eye(len(v))]
        for _ in range(200):
            x = rng.random(len(v))
            others.append(x / max(1.0, x.sum()) * rng.random())
        best = np.linalg.norm(v - p)
        assert all(np.linalg.norm(v - x) >= best - 1e-12 for x in others)


def test_dual_solver_matches_active_set_enumeration():
    """Exact optimum by enumerating the support and the sum constraint:
    solve the KKT system of every face, keep the best feasible point."""
    rng = np.random.default_rng(1)
    for trial in range(30):
        m = int(rng.integers(1, 6))
        G = rng.normal(size=(m, 7))
        H = G @ G.T
        a = rng.random(m) * 3
        lam = float(rng.choice([0.1, 1.0, 5.0]))
        best = 0.0
        for support in itertools.chain.from_iterable(
                itertools.combinations(range(m), k) for k in range(1, m + 1)):
            s = list(support)
            Hs = H[np.ix_(s, s)] / lam
            # face sum < 1: grad = 0 on the support
            for tight in (False, True):
                if tight:
                    K = np.block([[Hs, np.ones((len(s), 1))], [np.ones((1, len(s))), 0]])
                    rhs = np.r_[a[s], 1.0]
                else:
                    K, rhs = Hs, a[s]
                sol = np.linalg.lstsq(K, rhs, rcond=None)[0][: len(s)]
                x = np.zeros(m)
                x[s] = sol
                if np.all(x >= -1e-12) and x.sum() <= 1 + 1e-9:
                    x = np.maximum(x, 0)
                    best = max(best, a @ x - x @ H @ x / (2 * lam))
        alpha, value, gap, _ = solve_dual(H, a, lam, tol=1e-8)
        assert np.all(alpha >= 0) and alpha.sum() <= 1 + 1e-12
        assert gap <= 1e-8
        # the Frank-Wolfe gap bounds the distance to the optimum
        assert best - 1e-8 <= value + 1e-12 and value <= best + 1e-9, trial


@pytest.fixture(scope="module")
def tiny(sample_train):
    """Ten short projective sentences of the sample, a small weight table."""
    from spacy_mstparse.corpus.conll import read_conllu

    nlp = spacy.blank("en")
    enc = SentenceEncoder(nlp.vocab, "upos", False)
    data = []
    for doc in read_conllu(sample_train, nlp.vocab):
        heads = np.array([-1] + [0 if t.head.i == t.i else t.head.i + 1 for t in doc], "int32")
        if len(doc) <= 8 and is_projective(heads):
            data.append((enc.encode(doc, [(0, len(doc))])[0], heads))
        if len(data) == 10:
            break
    return GraphModel(FeatureConfig("upos", False, 2**12), decoder="eisner"), data


def test_primal_matches_pegasos_and_gap_below_eps(tiny):
    model, data = tiny
    lam, eps = 0.5, 2e-4
    learner, table = train_one_slack(model, data, lam=lam, eps=eps)
    assert learner.converged
    last = learner.history[-1]
    assert 0.0 <= last["gap"] <= eps
    p_ssvm = primal_objective(model, data, table.current(), lam)
    assert p_ssvm == pytest.approx(last["primal"], rel=1e-5)
    # w is rewritten on the constraints' supports only: its norm is kept.
    w = table.current().astype(np.float64)
    assert table.sq_norm() == pytest.approx(w @ w, rel=1e-6)
    assert last["gap"] == pytest.approx(p_ssvm - learner.dual, abs=1e-6)
    # Pegasos (full batch, last iterate) run long enough to converge.
    pegasos = Pegasos(lam=lam, k=len(data), averaged=False)
    ptable = WeightTable(model.n_arc_weights)
    for _ in range(4000):
        pegasos.step(ptable, [loss_augmented_difference(model, s, h, ptable.values,
                                                        ptable.scale) for s, h in data])
    p_pegasos = primal_objective(model, data, ptable.current(), lam)
    # Weak duality: no w beats the SSVM's dual bound; both reach the optimum.
    assert learner.dual <= p_pegasos + 1e-9
    assert p_ssvm == pytest.approx(p_pegasos, rel=5e-3)


def test_pass_keeps_w_fixed_and_needs_begin(tiny):
    model, data = tiny
    learner = OneSlackSSVM(lam=0.1, eps=1e-3)
    table = WeightTable(model.n_arc_weights)
    with pytest.raises(ValueError, match="begin_training"):
        learner.step(table, [])
    learner.begin(model.n_arc_weights, len(data))
    for it in range(3):
        before = table.current()
        for s, h in data[:-1]:
            learner.step(table, [loss_augmented_difference(model, s, h, table.values)])
            assert np.array_equal(table.current(), before)
        s, h = data[-1]
        learner.step(table, [loss_augmented_difference(model, s, h, table.values)])
        assert len(learner.history) == it + 1
        assert not np.array_equal(table.current(), before)
    with pytest.raises(ValueError, match="lam"):
        OneSlackSSVM(lam=0.0)


def test_trains_inside_the_component(sample_train, sample_dev):
    from spacy.training import Example
    from spacy.util import minibatch

    from spacy_mstparse.components import mst_parser  # noqa: F401
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.corpus.readers import gold_annotated_doc

    nlp = spacy.blank("en")
    nlp.add_pipe("mst_parser", config={"learner": {
        "@mst_learners": "spacy_mstparse.OneSlackSSVM.v1", "lam": 0.01, "eps": 0.01}})

    def examples(path, n):
        out = []
        for ref in read_conllu(path, nlp.vocab):
            out.append(Example(gold_annotated_doc(Example(ref.copy(), ref)), ref))
            if len(out) == n:
                break
        return out

    train = examples(sample_train, 120)
    nlp.initialize(lambda: train)
    parser = nlp.get_pipe("mst_parser")
    assert parser.learner.n_train == 120
    for _ in range(4):
        for batch in minibatch(train, 16):
            parser.update(batch)
    history = parser.learner.history
    assert len(history) == 4
    # The objective of the current w (with the 4th pass's decodes) agrees
    # with an independent computation.
    data = [(s, h) for s, h, _ in parser.training_sentences(train)]
    p = primal_objective(parser.graph, data, parser.trainer.arc_table.current(), 0.01)
    assert history[-1]["primal"] >= history[-1]["dual"] - 1e-9
    assert p <= history[0]["primal"]
    assert nlp.evaluate(examples(sample_dev, 60))["dep_uas"] > 0.5


def test_sentences_whose_decoded_tree_violates_less_than_gold_count_as_gold():
    """max_y [Delta - w.x_i(y)] >= 0 (y = gold gives 0). A decoder that cannot
    return the gold tree (Eisner, non-projective gold) may find a tree with a
    negative violation: the pass must count 0 for that sentence, so P(w) is
    the mean of per-sentence max(0, .), as in primal_objective."""
    lam = 0.5
    learner = OneSlackSSVM(lam=lam, eps=1e-6)
    table = WeightTable(16)
    table.add(np.array([1, 2, 3], np.uint64), np.array([1.0, 2.0, -1.0]), 1.0)
    learner.begin(16, 2)
    a = (np.array([1, 2], np.uint64), np.array([1.0, 1.0]), 1)    # margin 3, loss 1
    b = (np.array([3, 5], np.uint64), np.array([-0.5, 1.0]), 2)   # margin 0.5, loss 2
    learner.step(table, [a])
    learner.step(table, [b])
    h = learner.history[-1]
    expected_hinge = (max(0.0, 1 - 3.0) + max(0.0, 2 - 0.5)) / 2
    assert h["hinge"] == pytest.approx(expected_hinge)
    assert h["primal"] == pytest.approx(0.5 * lam * 6.0 + expected_hinge)
    # The constraint holds sentence b only: a = 2 / 2, g = x_b / 2, so w
    # = alpha g / lam with alpha in (0, 1].
    assert h["loss"] == pytest.approx(1.0)
    w = table.current()
    assert np.count_nonzero(w) == 2 and w[3] < 0 < w[5] and w[5] == pytest.approx(-2 * w[3])


def test_bounded_working_set_and_best_iterate(tiny):
    """max_constraints caps the working set (merging the smallest-alpha
    constraints keeps w and the dual, so the run still converges to the same
    optimum); keep_best predicts with the w of the lowest primal seen."""
    model, data = tiny
    lam, eps = 0.05, 1e-3
    bounded, table = train_one_slack(model, data, lam=lam, eps=eps, max_constraints=3,
                                     max_iter=3000)
    assert max(h["n_constraints"] for h in bounded.history) <= 3
    assert bounded.converged and bounded.history[-1]["gap"] <= eps
    # merging keeps the dual value, so it never falls from pass to pass
    duals = [h["dual"] for h in bounded.history]
    assert all(b >= a - 1e-9 for a, b in zip(duals, duals[1:]))
    p = primal_objective(model, data, table.current(), lam)
    for h in bounded.history:   # weak duality for every dual seen
        assert h["dual"] <= p + 1e-9
    free, _ = train_one_slack(model, data, lam=lam, eps=eps)
    assert max(h["n_constraints"] for h in free.history) > 2
    assert bounded.history[-1]["primal"] == pytest.approx(free.history[-1]["primal"], abs=2 * eps)
    # the prediction weights: the lowest-primal pass's w
    best = min(bounded.history, key=lambda h: h["primal"])
    assert bounded.best_iteration == best["iteration"]
    w = bounded.finalize_weights(table.current())
    assert primal_objective(model, data, w, lam) == pytest.approx(best["primal"], rel=1e-5)
    last = OneSlackSSVM(lam=lam, keep_best=False)
    assert last.finalize_weights(table.current()) is not None
    assert np.array_equal(last.finalize_weights(table.current()), table.current())
    with pytest.raises(ValueError, match="max_constraints"):
        OneSlackSSVM(lam=lam, max_constraints=-1)


def _decoded_tree(model, sentence, heads, w32):
    """The loss-augmented tree under float32 weights w32."""
    from spacy_mstparse.decoders.dispatch import add_hamming_loss

    factors = model.scores(sentence, w32)
    add_hamming_loss(factors.arc, heads)
    return np.asarray(model.decode(factors)[0], dtype=np.int32)


def test_cache_memory_report_matches_what_the_trees_take(tiny):
    """``TreeCache.nbytes`` (the training output's cache MB) counts the
    Python objects of the cached trees: its growth when trees join sentences
    already cached is within 15% of what tracemalloc sees allocated."""
    import tracemalloc

    from spacy_mstparse.learners.one_slack_cache import TreeCache

    model, data = tiny
    rng = np.random.default_rng(5)
    cache = TreeCache(10_000, model.first_order)

    def random_trees(count):
        for i, (sentence, heads) in enumerate(data):
            for _ in range(count):
                tree = heads.copy()
                tree[1:] = rng.integers(0, len(heads), size=len(heads) - 1)
                cache.add(i, sentence, heads, tree, 1.0)

    random_trees(2)
    before, entries = cache.nbytes, cache.n_entries
    tracemalloc.start()
    random_trees(1000)
    traced, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert cache.n_entries > entries + 1000
    assert cache.nbytes - before == pytest.approx(traced, rel=0.15)


def test_cache_gives_the_decoded_constraint_when_it_holds_the_most_violated_tree(tiny):
    """With each sentence's loss-augmented tree among its cached trees (next
    to trees decoded under other weights), the cache's joint constraint is
    the one fresh decoding gives: the same losses, margins and x vector."""
    from spacy_mstparse.learners.one_slack_cache import TreeCache

    model, data = tiny
    rng = np.random.default_rng(3)
    n_buckets = model.n_arc_weights
    w32 = (rng.normal(size=n_buckets) * 0.3).astype(np.float32)
    w = w32.astype(np.float64)
    cache = TreeCache(4, model.first_order)
    fresh_loss = fresh_margin = 0.0
    fresh_x = np.zeros(n_buckets)
    for i, (sentence, heads) in enumerate(data):
        for other in range(2):   # trees of other weights first (older)
            w_other = (rng.normal(size=n_buckets) * 0.3).astype(np.float32)
            tree = _decoded_tree(model, sentence, heads, w_other)
            loss = int(np.count_nonzero(tree[1:] != heads[1:]))
            if loss:
                cache.add(i, sentence, heads, tree, loss)
        tree = _decoded_tree(model, sentence, heads, w32)
        idx, val, loss = loss_augmented_difference(model, sentence, heads, w32)
        if loss:
            cache.add(i, sentence, heads, tree, loss)
            margin = float(w[idx.astype(np.intp)] @ val)
            if loss - margin > 0:
                fresh_loss += loss
                fresh_margin += margin
                np.add.at(fresh_x, idx.astype(np.intp), val)
    acc = np.zeros(n_buckets)
    loss_sum, margin_sum, n_violated = cache.aggregate(w, acc)
    assert n_violated > 0
    assert loss_sum == pytest.approx(fresh_loss)
    assert margin_sum == pytest.approx(fresh_margin, abs=1e-9)
    assert np.allclose(acc, fresh_x)
    # bounded: at most 4 distinct trees per sentence; a repeated tree is not new
    assert all(len(cache.trees(i)) <= 4 for i in range(len(data)))
    s, h = data[0]
    if cache.trees(0):
        gold, tree = cache.trees(0)[-1][:2]
        assert not cache.add(0, s, gold, tree, 1.0)


def test_cached_ssvm_certifies_its_gap_against_the_reference_optimum(tiny):
    """The cache path (block-coordinate steps over the cached trees between
    decoding passes) minimises the same objective as the plain cutting-plane
    solver run to convergence (the dense reference): every dual it reports
    is below the reference optimum (weak duality), its primal is the
    objective recomputed independently, and the objective approaches the
    optimum."""
    model, data = tiny
    lam, eps = 0.5, 2e-4
    plain, ptable = train_one_slack(model, data, lam=lam, eps=eps)
    assert plain.converged
    optimum = primal_objective(model, data, ptable.current(), lam)
    cached, table = train_one_slack(model, data, lam=lam, eps=eps, cache_size=5,
                                    max_cache_rounds=20, max_iter=12)
    for h in cached.history:
        assert h["dual"] <= optimum + 1e-9 and h["dual_after"] <= optimum + 1e-9
        assert h["primal"] >= optimum - 1e-9
        assert h["gap"] == pytest.approx(h["primal"] - h["dual"])
    last = cached.history[-1]
    current = primal_objective(model, data, table.current(), lam)
    # the table holds the learner's w; the last pass's primal is of that w
    # before the last sweeps, so recompute it from the weights it used
    assert np.allclose(table.current(), cached.weights, atol=1e-6)
    assert current >= optimum - 1e-9
    assert last["primal"] - optimum < 0.5 * (cached.history[0]["primal"] - optimum)
    # bounded: at most twice cache_size trees per sentence
    assert all(len(cached.cache.trees(s.key())) <= 10 for s, _ in data)


def test_warm_start_pass_moves_w_online(tiny):
    model, data = tiny
    learner, table = train_one_slack(model, data, lam=0.5, eps=2e-4, cache_size=5,
                                     warm_start=1, max_iter=6)
    first = learner.history[0]
    assert not first["exact"] and first["primal"] is None
    assert first["dual_after"] > 0.0
    assert all(h["exact"] for h in learner.history[1:])
    with pytest.raises(ValueError, match="warm_start"):
        OneSlackSSVM(warm_start=1)
    with pytest.raises(ValueError, match="order"):
        OneSlackSSVM(cache_size=2).begin_training(model.first_order, data, order=2)


def test_online_passes_converge_and_certify_against_the_reference(tiny):
    """Online passes (block-coordinate Frank-Wolfe: a block step right after
    each decoding) between exact ones: every certified dual is below the
    optimum of the plain solver run to convergence (the dense reference)
    and every certified primal above it; the relative stopping test is
    met, and the predicted weights' objective is within it of the optimum."""
    model, data = tiny
    lam, eps = 0.5, 2e-3
    plain, ptable = train_one_slack(model, data, lam=lam, eps=1e-6)
    optimum = primal_objective(model, data, ptable.current(), lam)
    learner, table = train_one_slack(model, data, lam=lam, eps=eps, cache_size=20,
                                     max_cache_rounds=3, warm_start=1, exact_every=3,
                                     relative_eps=True, max_iter=1000)
    assert learner.converged
    online = [h for h in learner.history if not h["exact"]]
    exact = [h for h in learner.history if h["exact"]]
    assert online and exact and learner.history[0] in online
    assert all(h["primal"] is None and h["online_gap"] >= -1e-12 for h in online)
    assert all(h["online_gap"] is None for h in exact)
    assert_certified(learner, table, model, data, lam, eps, optimum)
    with pytest.raises(ValueError, match="exact_every"):
        OneSlackSSVM(exact_every=2)
    with pytest.raises(ValueError, match="exact_every"):
        OneSlackSSVM(exact_every=0, cache_size=1)


def assert_certified(learner, table, model, data, lam, eps, optimum):
    """Every dual at most the optimum, every exact primal at least it, the
    last pass exact with gap <= eps * primal, and the final weights'
    primal within that of the optimum."""
    for h in learner.history:
        assert h["dual"] <= optimum + 1e-9 and h["dual_after"] <= optimum + 1e-9
        if h["exact"]:
            assert h["primal"] >= optimum - 1e-9
    last = learner.history[-1]
    assert last["exact"] and last["gap"] <= eps * last["primal"]
    w = learner.finalize_weights(table.current())
    assert primal_objective(model, data, w, lam) <= optimum * (1 + eps) + 1e-9


def _filled_cache(model, data, size, seed):
    """A cache holding up to ``size`` loss-augmented trees per sentence,
    decoded under random weights."""
    from spacy_mstparse.learners.one_slack_cache import TreeCache

    rng = np.random.default_rng(seed)
    cache = TreeCache(size, model.first_order)
    for i, (sentence, heads) in enumerate(data):
        for _ in range(size):
            w_other = (rng.normal(size=model.n_arc_weights) * 0.5).astype(np.float32)
            tree = _decoded_tree(model, sentence, heads, w_other)
            loss = int(np.count_nonzero(tree[1:] != heads[1:]))
            if loss:
                cache.add(i, sentence, heads, tree, loss)
    return cache


def test_block_steps_equal_repeated_single_steps(tiny):
    """k pairwise steps in one block update (the trees' margins moved by
    gathers from the step's direction) give the w, the dual weights and the
    linear term of k single-step updates (margins recomputed from the
    features each time)."""
    model, data = tiny
    lam, n = 0.5, float(len(data))
    one = _filled_cache(model, data, 5, seed=7)
    many = _filled_cache(model, data, 5, seed=7)
    w1 = np.zeros(model.n_arc_weights)
    wk = np.zeros(model.n_arc_weights)
    mark = np.zeros(model.n_arc_weights, dtype=np.uint8)
    keys = [i for i in range(len(data)) if i in one]
    assert keys
    for _ in range(2):   # two sweeps: the second starts from dual weights in use
        for key in keys:
            gaps = [one.block_update(key, w1, lam, n, mark)[0] for _ in range(6)]
            gap, ids = many.block_update(key, wk, lam, n, mark, 6)
            assert gap == pytest.approx(gaps[0], abs=1e-9)
            assert np.allclose(w1, wk, atol=1e-9)
            assert set(ids.tolist()) <= set(np.flatnonzero(wk != w1 + 0 * wk).tolist()) | set(
                np.flatnonzero(wk).tolist()) | set(ids.tolist())
            assert [t[3] for t in one.trees(key)] == pytest.approx(
                [t[3] for t in many.trees(key)], abs=1e-9)
    assert mark.sum() == 0
    assert one.dual_linear() == pytest.approx(many.dual_linear(), abs=1e-12)
    assert wk.any()


def test_block_steps_reach_the_block_optimum(tiny):
    """Many pairwise steps on one block (the others empty) solve its QP over
    the cached trees and the gold tree: the dual value of the dense solver
    (``solve_dual`` on the trees' x vectors), and w = (1/(lam n)) sum beta x."""
    from spacy_mstparse.learners import sparse_difference

    model, data = tiny
    lam, n = 0.05, float(len(data))
    cache = _filled_cache(model, data, 6, seed=11)
    key = max((i for i in range(len(data)) if i in cache), key=lambda i: len(cache.trees(i)))
    sentence, heads = data[key]
    trees = cache.trees(key)
    assert len(trees) >= 3
    X = np.zeros((len(trees), model.n_arc_weights))
    for t, (gold, tree, _, _) in enumerate(trees):
        idx, val = sparse_difference(model.tree_features(sentence, gold),
                                     model.tree_features(sentence, tree))
        np.add.at(X[t], idx.astype(np.intp), val)
    a = np.array([t[2] for t in trees])
    # block dual: (1/n) [beta . a - 1/(2 lam n) ||X^T beta||^2], beta >= 0, sum <= 1
    _, best, _, _ = solve_dual(X @ X.T, a, lam * n, tol=1e-12)
    w = np.zeros(model.n_arc_weights)
    mark = np.zeros(model.n_arc_weights, dtype=np.uint8)
    cache.block_update(key, w, lam, n, mark, 2000)
    beta = np.array([t[3] for t in cache.trees(key)])
    assert np.all(beta >= 0) and beta.sum() <= 1 + 1e-12
    assert np.allclose(w, X.T @ beta / (lam * n), atol=1e-9)
    dual = sum(cache.dual_linear() for _ in [0]) - 0.5 * lam * float(w @ w)
    assert dual == pytest.approx(best / n, rel=1e-6, abs=1e-9)
    # the block's gap after convergence is ~0
    gap, _ = cache.block_update(key, w, lam, n, mark, 1)
    assert gap <= 1e-6


def test_n_best_caches_the_runners_up_and_certifies_against_the_reference(tiny):
    """n_best = 3: every decoding caches the sentence's loss-augmented
    runners-up too (more trees than with n_best = 1 after one pass); the
    certified duals and primals bracket the reference optimum, and the
    relative stopping test is met."""
    model, data = tiny
    lam, eps = 0.5, 2e-3
    plain, ptable = train_one_slack(model, data, lam=lam, eps=1e-6)
    optimum = primal_objective(model, data, ptable.current(), lam)
    one, _ = train_one_slack(model, data, lam=lam, eps=eps, cache_size=20, warm_start=1,
                             max_iter=1)
    three, _ = train_one_slack(model, data, lam=lam, eps=eps, cache_size=20, warm_start=1,
                               max_iter=1, n_best=3)
    assert three.k_best == 3
    assert three.cache.n_entries > one.cache.n_entries
    learner, table = train_one_slack(model, data, lam=lam, eps=eps, cache_size=20,
                                     max_cache_rounds=3, warm_start=1, exact_every=3,
                                     relative_eps=True, max_iter=1000, n_best=3)
    assert learner.converged
    assert_certified(learner, table, model, data, lam, eps, optimum)
    with pytest.raises(ValueError, match="n_best"):
        OneSlackSSVM(n_best=2)
    with pytest.raises(ValueError, match="block_steps"):
        OneSlackSSVM(block_steps=0, cache_size=1)


def test_cache_sweeps_run_until_a_tenth_of_the_threshold(tiny):
    """The sweeps over the cache after each pass stop once their gap is at
    most a tenth of the stopping threshold (sweep_stop = 0: no other rule),
    or after max_cache_rounds: a pass that stopped early has its cache gap
    below eps * dual / 10, and stopping earlier (at half the threshold)
    would have left passes whose cache gap is above that."""
    model, data = tiny
    lam, eps, rounds = 0.5, 0.05, 50
    learner, _ = train_one_slack(model, data, lam=lam, eps=eps, cache_size=20,
                                 max_cache_rounds=rounds, warm_start=1, exact_every=3,
                                 relative_eps=True, sweep_stop=0.0, max_iter=30)
    swept = [h for h in learner.history if h["cache_gap"] is not None]
    assert swept
    for h in swept:
        assert h["cache_sweeps"] <= rounds
        if h["cache_sweeps"] < rounds:
            assert h["cache_gap"] <= 0.1 * eps * h["dual"] + 1e-12
    assert any(h["cache_sweeps"] > 1 for h in swept)


def test_sweep_skips_blocks_of_small_gap_until_they_get_a_new_tree(tiny):
    """``sweep(skip_below=...)`` steps only on the sentences whose gap at
    their last step was at least ``skip_below`` (or that got a tree since),
    counting the others' last gaps: with every block below it, nothing
    moves and the sweep reports the gaps of the sweep before; a sentence
    given a new tree is stepped on again."""
    model, data = tiny
    lam, n = 0.05, float(len(data))
    cache = _filled_cache(model, data, 4, seed=5)
    size = model.n_arc_weights
    w = np.zeros(size)
    mark = np.zeros(size, dtype=np.uint8)
    changed = np.zeros(size, dtype=bool)
    first = cache.sweep(w, lam, n, mark, changed)
    assert first > 0 and changed.any()
    w_before, changed[:] = w.copy(), False
    skipped = cache.sweep(w, lam, n, mark, changed, 1, 1e30)
    assert skipped == pytest.approx(first, rel=1e-12)
    assert not changed.any() and np.array_equal(w, w_before)
    # a full sweep at the same w visits every block again: its gaps differ
    # from the first sweep's (w moved during that one)
    full = cache.sweep(w.copy(), lam, n, mark, changed.copy())
    assert full != pytest.approx(first, rel=1e-9)
    stale = cache.sweep(w_before.copy(), lam, n, mark, np.zeros(size, dtype=bool), 1, 1e30)
    assert stale == pytest.approx(full, rel=1e-12)   # the full sweep's gaps, nothing visited
    # a new tree makes its sentence due again, whatever skip_below says
    key = next(i for i in range(len(data)) if i in cache)
    sentence, heads = data[key]
    rng = np.random.default_rng(17)
    while True:
        w_other = (rng.normal(size=size) * 0.5).astype(np.float32)
        tree = _decoded_tree(model, sentence, heads, w_other)
        loss = int(np.count_nonzero(tree[1:] != heads[1:]))
        if loss and cache.add(key, sentence, heads, tree, loss):
            break
    again = cache.sweep(w_before.copy(), lam, n, mark, np.zeros(size, dtype=bool), 1, 1e30)
    assert again != pytest.approx(stale, rel=1e-9)
