"""The constraint policies (graph.constraints.resolve, graph.analysis's
best_trees / analyse, the mst_parser setting ``constraints``) against brute
force over every single-root tree of n <= 6 words.

For random arc scores and random fixed / forbidden heads (often impossible:
cycles, two roots, crossing arcs, arcs both fixed and forbidden, words cut
off), the fewest constraints any tree of a search space breaks is the
minimum number a policy must drop; the tree returned must be the best of
the space it chose among the trees satisfying the constraints it kept:

- ``strict``: the decoder's space, all constraints, or ValueError;
- ``drop``: the decoder's space, a minimum set dropped;
- ``nonprojective``: the decoder's space when it holds a satisfying tree,
  else all trees; when no tree at all satisfies the constraints, a minimum
  set (over all trees) dropped.

k-best lists and marginals follow the same trees. Then the pipe: a batch
with one impossible doc comes back whole, with one warning.
"""
import warnings

import numpy as np
import pytest
from test_decoders import enumerate_trees
from test_second_order_decoders import all_scores

from spacy_mstparse.decoders import NoTreeError, is_valid_tree
from spacy_mstparse.decoders.dispatch import Factors
from spacy_mstparse.graph import constraints as constraints_module
from spacy_mstparse.graph.analysis import analyse, best_trees
from spacy_mstparse.graph.constraints import (
    POLICIES,
    ConstraintWarning,
    Constraints,
    check_policy,
    resolve,
)

DECODERS = [("eisner", True), ("chu_liu_edmonds", False)]


def random_constraints(rs, n):
    """Fixed heads on up to half the words (plus one), forbidden arcs with a
    random density, sometimes a fixed arc forbidden too."""
    fixed = {}
    for c in rs.choice(np.arange(1, n + 1), size=rs.randint(0, n // 2 + 2), replace=False):
        fixed[int(c)] = int(rs.choice([h for h in range(n + 1) if h != c]))
    p = rs.choice([0.0, 0.15, 0.4, 0.7])
    forbidden = {(h, c) for h in range(n + 1) for c in range(1, n + 1)
                 if h != c and rs.rand() < p}
    if fixed and rs.rand() < 0.3:
        c = int(rs.choice(list(fixed)))
        forbidden.add((fixed[c], c))
    return Constraints(n, fixed, forbidden)


def broken(trees, cons):
    """How many of the constraints each tree breaks."""
    count = np.zeros(len(trees), dtype=int)
    for c, h in cons.fixed.items():
        count += trees[:, c] != h
    for h, c in cons.forbidden:
        count += trees[:, c] == h
    return count


class Space:
    """Every single-root tree of n words, its scores, which are projective."""

    def __init__(self, arc, sib=None):
        n = arc.shape[0] - 1
        trees, single, projective, _ = enumerate_trees(n)
        self.trees = trees[single]
        self.projective = projective[single]
        _, self.total = all_scores(arc, sib, n, False)
        assert (all_scores(arc, sib, n, False)[0] == self.trees).all()

    def index(self, heads):
        return int(np.flatnonzero((self.trees[:, 1:] == np.asarray(heads)[1:]).all(axis=1))[0])


def expected_outcome(space, cons, policy, projective):
    """(minimum drops, search space projective?) as the policy should decide."""
    count = broken(space.trees, cons)
    in_space = space.projective if projective else np.ones(len(count), bool)
    if policy == "drop" or (policy == "strict") or (count[in_space] == 0).any():
        return int(count[in_space].min()), projective
    return int(count.min()), None   # projective decided by what is kept


@pytest.mark.parametrize("decoder,projective", DECODERS)
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("order", [1, 2])
def test_policy_tree_is_the_best_satisfying_the_kept_constraints(decoder, projective,
                                                                  policy, order):
    rs = np.random.RandomState(11 + 3 * order + projective + 5 * POLICIES.index(policy))
    seen = {"dropped": 0, "fallback": 0, "kept": 0, "raised": 0, "greedy": 0}
    for trial in range(120):
        n = rs.randint(2, 7)
        arc = rs.randn(n + 1, n + 1).astype(np.float32)
        sib = rs.randn(n + 1, n + 1, n + 1).astype(np.float32) if order == 2 else None
        cons = random_constraints(rs, n)
        space = Space(arc, sib)
        fewest, want_projective = expected_outcome(space, cons, policy, projective)
        if policy == "strict":
            if fewest:
                with pytest.raises(ValueError, match="no (projective )?tree satisfies|cannot"):
                    best_trees(decoder, Factors(arc, sib), 1, cons, policy)
                seen["raised"] += 1
                continue
        res = resolve(cons, policy, projective, arc)
        # the search is exact up to EXACT_DROPS drops (and a bounded enumeration)
        assert len(res.dropped) == fewest if res.exact else len(res.dropped) >= fewest > 2
        seen["greedy"] += not res.exact
        assert sorted(res.dropped + tuple(res.constraints.units())) == sorted(cons.units())
        kept_count = broken(space.trees, res.constraints)
        if want_projective is None:
            want_projective = projective and bool((kept_count[space.projective] == 0).any())
        assert res.projective == want_projective
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            heads = best_trees(decoder, Factors(arc, sib), 1, cons, policy)[0]
        assert [w.category for w in caught] == [ConstraintWarning] * bool(fewest)
        assert is_valid_tree(heads, single_root=True)
        assert not res.constraints.violations(heads)
        allowed = (kept_count == 0) & (space.projective if want_projective else True)
        seen["dropped" if fewest else "fallback" if want_projective != projective
             else "kept"] += 1
        if order == 2 and not want_projective:
            continue   # the second-order non-projective decoder is approximate
        assert space.total[space.index(heads)] == pytest.approx(
            space.total[allowed].max(), abs=1e-4)
    assert seen["kept"] > 10 and seen["greedy"] <= 6
    if policy == "strict":
        assert seen["raised"] > 10
    else:
        assert seen["dropped"] > 10
    if policy == "nonprojective" and projective:
        assert seen["fallback"] > 3


@pytest.mark.parametrize("policy", ["nonprojective", "drop"])
def test_k_best_follow_the_policy(policy):
    rs = np.random.RandomState(4)
    checked = 0
    for _ in range(60):
        n = rs.randint(3, 7)
        arc = rs.randn(n + 1, n + 1).astype(np.float32)
        cons = random_constraints(rs, n)
        space = Space(arc)
        res = resolve(cons, policy, True, arc)
        allowed = (broken(space.trees, res.constraints) == 0) & (
            space.projective if res.projective else True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConstraintWarning)
            got = best_trees("eisner", Factors(arc), 4, cons, policy)
        expected = np.sort(space.total[allowed])[::-1][:4]
        assert len(got) == len(expected)
        np.testing.assert_allclose([space.total[space.index(h)] for h in got], expected,
                                   atol=1e-4)
        checked += len(got) > 1
    assert checked > 30


class ArcModel:
    """A first-order model with given arc scores and no labeler (what
    ``analyse`` asks of a ``GraphModel``)."""
    labeler = None

    def __init__(self, arc, decoder):
        self.arc, self.decoder = arc, decoder

    def scores(self, sentence):
        return Factors(self.arc)


@pytest.mark.parametrize("decoder,projective", DECODERS)
@pytest.mark.parametrize("policy", ["nonprojective", "drop"])
def test_probabilities_are_the_marginals_over_the_kept_constraints(decoder, projective, policy):
    rs = np.random.RandomState(21 + projective)
    temperature = 1.5
    dropped = 0
    for _ in range(40):
        n = rs.randint(2, 6)
        arc = rs.randn(n + 1, n + 1).astype(np.float32)
        cons = random_constraints(rs, n)
        space = Space(arc)
        res = resolve(cons, policy, projective, arc)
        allowed = (broken(space.trees, res.constraints) == 0) & (
            space.projective if res.projective else True)
        weight = np.where(allowed, np.exp(space.total / temperature), 0.0)
        weight /= weight.sum()
        expected = np.zeros((n + 1, n + 1))
        for c in range(1, n + 1):
            np.add.at(expected[:, c], space.trees[:, c], weight)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConstraintWarning)
            parse = analyse(ArcModel(arc, decoder), None, probabilities=True,
                            temperature=temperature, constraints=cons, policy=policy)
        np.testing.assert_allclose(parse.marginals.probs[:, 1:], expected[:, 1:], atol=1e-6)
        heads = parse.heads
        assert parse.trees[0].prob == pytest.approx(weight[space.index(heads)], rel=1e-5)
        for c, h in res.constraints.fixed.items():
            assert parse.head_probs[c] == pytest.approx(1.0)
        dropped += bool(res.dropped)
    assert dropped > 5


def test_conflicts_beyond_the_exact_search_are_dropped_greedily(monkeypatch):
    """Six 2-cycles of fixed heads need six drops: more than EXACT_DROPS, so
    the greedy search decides; each cycle loses one fixed head and the rest
    is satisfiable (checked through the decoders, exact)."""
    n = 12
    fixed = {c: c + 1 if c % 2 else c - 1 for c in range(1, n + 1)}
    cons = Constraints(n, fixed)
    assert constraints_module.EXACT_DROPS < 6
    res = resolve(cons, "drop", False)
    assert not res.exact and len(res.dropped) == 6
    assert {(c + 1) // 2 for _, _, c in res.dropped} == set(range(1, 7))
    assert res.constraints.feasible(None, False)
    # with the exact search allowed that far, the same number, found exactly
    monkeypatch.setattr(constraints_module, "EXACT_DROPS", 6)
    exact = resolve(cons, "drop", False)
    assert exact.exact and len(exact.dropped) == 6


def test_warning_names_the_words():
    names = ["the root", "'a' (token 0)", "'b' (token 1)", "'c' (token 2)", "'d' (token 3)"]
    arc = np.zeros((5, 5), dtype=np.float32)
    cons = Constraints(4, {1: 2, 2: 1, 3: 0, 4: 1}, names=names)
    with pytest.warns(ConstraintWarning) as caught:
        heads = best_trees("eisner", Factors(arc), 1, cons, "nonprojective")[0]
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "no tree satisfies" in message and "dropped 1 constraint" in message
    dropped_word = 1 if heads[1] != 2 else 2
    assert names[dropped_word] in message
    assert heads[3] == 0 and heads[4] == 1
    # crossing fixed arcs: kept (over all trees) under nonprojective, one dropped under drop
    crossing = Constraints(4, {3: 1, 4: 2}, names=names)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConstraintWarning)
        heads = best_trees("eisner", Factors(arc), 1, crossing, "nonprojective")[0]
    assert heads[3] == 1 and heads[4] == 2
    with pytest.warns(ConstraintWarning, match="no projective tree satisfies .*'c' \\(token 2\\)"
                      "|no projective tree satisfies .*'d' \\(token 3\\)"):
        best_trees("eisner", Factors(arc), 1, crossing, "drop")
    with pytest.raises(ValueError, match="cross"):
        best_trees("eisner", Factors(arc), 1, crossing, "strict")


def test_pruned_fixed_arcs_stay_usable():
    """A fixed arc the scores exclude (-inf, as arc pruning leaves it) is not
    a broken constraint: every policy keeps it."""
    arc = np.random.RandomState(0).randn(5, 5).astype(np.float32)
    arc[3, 1] = -np.inf
    cons = Constraints(4, {1: 3})
    for policy in POLICIES:
        assert best_trees("eisner", Factors(arc), 1, cons, policy)[0][1] == 3


def test_policy_values_are_checked():
    assert check_policy("drop") == "drop"
    with pytest.raises(ValueError, match='constraints must be one of "nonprojective", '
                                         '"drop", "strict", got \'lenient\''):
        check_policy("lenient")
    with pytest.raises(NoTreeError):   # no tree at all, whatever is dropped
        arc = np.full((3, 3), -np.inf, dtype=np.float32)
        resolve(Constraints(2, {1: 0}), "drop", True, arc)


# -- the pipe -------------------------------------------------------------------------
def test_setting_is_checked():
    import spacy

    nlp = spacy.blank("en")
    with pytest.raises(Exception, match=r"(?s)constraints.*nonprojective"):
        nlp.add_pipe("mst_parser", config={"constraints": "lenient"})
    assert nlp.add_pipe("mst_parser").constraint_policy == "nonprojective"


@pytest.fixture(scope="module")
def gold_and_docs(trained_pipeline, sample_dev):
    import spacy

    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import make_input_docs

    vocab = spacy.load(trained_pipeline).vocab
    gold = [g for g in read_conllu(sample_dev, vocab) if len(g) >= 5][:40]
    return gold, make_input_docs(gold, vocab, gold_tags=True)


def constrained_batch(gold, docs):
    """Copies of the docs with 40% of the gold heads fixed (non-projective
    sentences included) and doc 3 made impossible (a cycle and two roots)."""
    from spacy.tokens import Doc

    rs = np.random.RandomState(1)
    out, fixed = [], []
    for g, d in zip(gold, docs):
        doc = Doc(d.vocab).from_bytes(d.to_bytes())
        chosen = [i for i in range(len(doc)) if rs.rand() < 0.4]
        for i in chosen:
            doc[i]._.fixed_head = doc[g[i].head.i]
        out.append(doc)
        fixed.append({i: g[i].head.i for i in chosen})
    bad = out[3]
    for i in range(len(bad)):
        bad[i]._.fixed_head = None
    bad[0]._.fixed_head, bad[1]._.fixed_head = bad[1], bad[0]
    bad[2]._.fixed_head, bad[3]._.fixed_head = bad[2], bad[3]
    fixed[3] = {}
    return out, fixed


@pytest.mark.parametrize("options", [{}, {"probabilities": True, "n_best": 3}])
def test_pipe_returns_every_doc_of_a_batch_with_an_impossible_doc(trained_pipeline,
                                                                  gold_and_docs, options):
    import spacy

    from spacy_mstparse.decoders import is_projective

    gold, docs = gold_and_docs
    nlp = spacy.load(trained_pipeline, config={"components": {"mst_parser": options}})
    batch, fixed = constrained_batch(gold, docs)
    nonprojective = sum(not is_projective([-1] + [0 if t.head.i == t.i else t.head.i + 1
                                                  for t in g]) for g in gold)
    assert nonprojective >= 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parsed = list(nlp.pipe(batch, batch_size=8))
    ours = [w for w in caught if issubclass(w.category, ConstraintWarning)]
    assert len(parsed) == len(batch)
    assert len(ours) == 1
    message = str(ours[0].message)
    assert "(token 0)" in message or "(token 1)" in message
    assert "(token 2)" in message or "(token 3)" in message
    for doc, heads in zip(parsed, fixed):
        assert all(doc[i].head.i == h for i, h in heads.items())
        if options:
            assert all(doc[i]._.head_prob == pytest.approx(1.0) for i in heads)
            assert all(p["heads"][i] == h for p in doc._.parses[0] for i, h in heads.items())
    bad = parsed[3]
    assert (bad[0].head.i == 1) != (bad[1].head.i == 0)   # one of the cycle's heads kept
    assert (bad[2].head.i == 2) != (bad[3].head.i == 3)   # one of the two roots kept


def test_strict_pipe_raises(trained_pipeline, gold_and_docs):
    import spacy

    gold, docs = gold_and_docs
    nlp = spacy.load(trained_pipeline, config={"components": {"mst_parser": {
        "constraints": "strict"}}})
    batch, _ = constrained_batch(gold, docs)
    with pytest.raises(ValueError, match="no (projective )?tree satisfies"):
        list(nlp.pipe(batch))


def test_on_ties_a_forbidden_arc_is_dropped_before_a_fixed_head():
    cons = Constraints(3, {1: 2, 3: 0}, [(2, 1), (0, 2)])
    for policy in ("drop", "nonprojective"):
        res = resolve(cons, policy, True)
        assert res.dropped == (("forbidden", 2, 1),)
        assert res.constraints.fixed == {1: 2, 3: 0} and res.constraints.forbidden == {(0, 2)}


@pytest.mark.parametrize("k", [1, 3])
def test_order_3_falls_back_to_second_order_chu_liu_edmonds(k):
    """No non-projective decoder has grandparent factors: the fallback
    decodes arcs and siblings (approximate), keeping every constraint."""
    rs = np.random.RandomState(8)
    n = 5
    for _ in range(10):
        arc = rs.randn(n + 1, n + 1).astype(np.float32)
        sib, grand = (rs.randn(n + 1, n + 1, n + 1).astype(np.float32) for _ in range(2))
        cons = Constraints(n, {3: 1, 4: 2})   # crossing
        trees = best_trees("eisner", Factors(arc, sib, grand), k, cons, "nonprojective")
        assert 1 <= len(trees) <= k
        for heads in trees:
            assert is_valid_tree(heads, single_root=True) and not cons.violations(heads)
