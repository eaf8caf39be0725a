"""Constrained decoding (graph.constraints, graph.analysis.best_trees)
against brute force: on random score matrices with random fixed and
forbidden heads, the decoded tree is the best among all trees (projective
ones for Eisner) satisfying the constraints; impossible constraints raise
ValueError naming the words. Then the mst_parser component honours
``token._.fixed_head`` / ``token._.forbidden_heads`` on real sentences."""
import numpy as np
import pytest
from test_decoders import enumerate_trees
from test_second_order_decoders import all_scores

from spacy_mstparse.decoders import NoTreeError
from spacy_mstparse.graph.constraints import Constraints
from spacy_mstparse.decoders.dispatch import Factors
from spacy_mstparse.graph.analysis import best_trees
from spacy_mstparse.graph.marginals import arc_marginals

CASES = [("eisner", True), ("chu_liu_edmonds", False)]


def satisfying(trees, constraints):
    keep = np.ones(len(trees), dtype=bool)
    for c, h in constraints.fixed.items():
        keep &= trees[:, c] == h
    for h, c in constraints.forbidden:
        keep &= trees[:, c] != h
    return keep


def random_constraints(rs, n):
    fixed = {}
    for c in rs.choice(np.arange(1, n + 1), size=rs.randint(0, 3), replace=False):
        fixed[int(c)] = int(rs.choice([h for h in range(n + 1) if h != c]))
    forbidden = [(int(h), int(c)) for h in range(n + 1) for c in range(1, n + 1)
                 if h != c and rs.rand() < 0.15]
    return Constraints(n, fixed, forbidden)


@pytest.mark.parametrize("decoder,projective", CASES)
@pytest.mark.parametrize("order", [1, 2])
def test_constrained_best_tree_equals_brute_force(decoder, projective, order):
    if order == 2 and not projective:
        pytest.skip("the second-order non-projective decoder is approximate")
    rs = np.random.RandomState(7 + order)
    checked = impossible = 0
    for trial in range(150):
        n = rs.randint(2, 7 if order == 1 else 6)
        arc = rs.randn(n + 1, n + 1).astype(np.float32)
        sib = rs.randn(n + 1, n + 1, n + 1).astype(np.float32) if order == 2 else None
        cons = random_constraints(rs, n)
        trees, total = all_scores(arc, sib, n, projective)
        keep = satisfying(trees, cons)
        if not keep.any():
            with pytest.raises(ValueError, match="no (projective )?tree satisfies|cannot"):
                best_trees(decoder, Factors(arc, sib), 1, cons)
            impossible += 1
            continue
        heads = best_trees(decoder, Factors(arc, sib), 1, cons)[0]
        best = total[keep].max()
        got = total[np.flatnonzero((trees[:, 1:] == heads[1:]).all(axis=1))[0]]
        assert not cons.violations(heads)
        assert got == pytest.approx(best, abs=1e-4)
        checked += 1
    assert checked > 50 and impossible > 0


def test_k_best_under_constraints_are_the_best_satisfying_trees():
    rs = np.random.RandomState(3)
    for _ in range(40):
        n = rs.randint(3, 6)
        arc = rs.randn(n + 1, n + 1).astype(np.float32)
        cons = Constraints(n, {int(rs.randint(1, n + 1)): 0})
        trees, total = all_scores(arc, None, n, True)
        keep = satisfying(trees, cons)
        expected = np.sort(total[keep])[::-1][:4]
        got = best_trees("eisner", Factors(arc), 4, cons)
        assert len(got) == min(4, keep.sum())
        scores = [float(arc[h[1:], np.arange(1, n + 1)].astype(np.float64).sum()) for h in got]
        np.testing.assert_allclose(scores, expected[:len(got)], atol=1e-4)
        assert all(h[list(cons.fixed)[0]] == 0 for h in got)


def test_impossible_constraints_name_the_words():
    names = ["the root", "'a'", "'b'", "'c'", "'d'"]
    arc = np.zeros((5, 5), dtype=np.float32)
    with pytest.raises(ValueError, match="cycle .*'a'.*'b'"):
        best_trees("chu_liu_edmonds", Factors(arc), 1, Constraints(4, {1: 2, 2: 1}, names=names))
    with pytest.raises(ValueError, match="more than one word is fixed as the root .*'a', 'c'"):
        best_trees("eisner", Factors(arc), 1, Constraints(4, {1: 0, 3: 0}, names=names))
    with pytest.raises(ValueError, match="'a' -> 'c' and 'b' -> 'd' cross"):
        best_trees("eisner", Factors(arc), 1, Constraints(4, {3: 1, 4: 2}, names=names))
    # the same arcs are fine for Chu-Liu-Edmonds
    heads = best_trees("chu_liu_edmonds", Factors(arc), 1, Constraints(4, {3: 1, 4: 2}, names=names))[0]
    assert heads[3] == 1 and heads[4] == 2
    with pytest.raises(ValueError, match="fixed to 'b' and forbidden"):
        best_trees("eisner", Factors(arc), 1, Constraints(4, {1: 2}, [(2, 1)], names=names))
    with pytest.raises(ValueError, match="cannot be its own head"):
        Constraints(4, {2: 2})
    # every head of word 2 but word 1 is forbidden, and word 1's head is word 2
    # (not visible in the constraints alone: the decoder's NoTreeError, naming the words)
    cons = Constraints(4, {1: 2}, [(0, 2), (3, 2), (4, 2)], names=names)
    for decoder in ("chu_liu_edmonds", "eisner"):
        with pytest.raises(NoTreeError, match="no (projective )?tree satisfies the constraints "
                                              "on 'a', 'b'"):
            best_trees(decoder, Factors(arc), 1, cons)


def test_constrained_marginals_honour_the_constraints():
    rs = np.random.RandomState(5)
    n = 5
    arc = rs.randn(n + 1, n + 1).astype(np.float32)
    cons = Constraints(n, {2: 4}, [(0, 3), (1, 5)])
    for projective in (True, False):
        probs = arc_marginals(cons.masked(arc), 1.0, projective).probs
        assert probs[4, 2] == pytest.approx(1.0)
        assert probs[0, 3] == 0.0 and probs[1, 5] == 0.0
        np.testing.assert_allclose(probs[:, 1:].sum(axis=0), 1.0, atol=1e-9)


# -- the component --------------------------------------------------------------------
@pytest.fixture(scope="module")
def nlp_and_docs(trained_pipeline, sample_dev):
    import spacy

    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import make_input_docs

    nlp = spacy.load(trained_pipeline)
    gold = list(read_conllu(sample_dev, nlp.vocab))[:60]
    return nlp, gold, make_input_docs(gold, nlp.vocab, gold_tags=True)


def test_component_honours_fixed_and_forbidden_heads(nlp_and_docs):
    """Fix 30% of the words to their gold heads and forbid, for the others,
    the head the free parse gave them when it is wrong: the gold tree (when
    projective) satisfies the constraints, so they must all be honoured."""
    from spacy.tokens import Doc

    from spacy_mstparse.decoders import is_projective

    nlp, gold, docs = nlp_and_docs
    parser = nlp.get_pipe("mst_parser")
    rs = np.random.RandomState(0)
    n_fixed = n_forbidden = n_changed = 0
    for g, doc in zip(gold, docs):
        gold_heads = np.array([-1] + [0 if t.head.i == t.i else t.head.i + 1 for t in g])
        if not is_projective(gold_heads):
            continue
        free = parser(Doc(doc.vocab).from_bytes(doc.to_bytes()))
        doc = Doc(doc.vocab).from_bytes(doc.to_bytes())
        fixed = {i for i in range(len(doc)) if rs.rand() < 0.3}
        forbidden = {}
        for i in range(len(doc)):
            if i in fixed:
                doc[i]._.fixed_head = doc[g[i].head.i]
            elif free[i].head.i != g[i].head.i:
                forbidden[i] = free[i].head.i
                doc[i]._.forbidden_heads = [doc[forbidden[i]]]
        parsed = parser(doc)
        for i in fixed:
            assert parsed[i].head.i == g[i].head.i
        for i, h in forbidden.items():
            assert parsed[i].head.i != h
        n_fixed += len(fixed)
        n_forbidden += len(forbidden)
        n_changed += any(parsed[i].head.i != free[i].head.i for i in range(len(doc)))
    assert n_fixed > 100 and n_forbidden > 20 and n_changed > 5


def test_component_reports_impossible_constraints(nlp_and_docs):
    """constraints = "strict" raises, naming the words; the default drops one
    of the cycle's fixed heads with a warning naming its word."""
    from spacy.tokens import Doc

    from spacy_mstparse.graph.constraints import ConstraintWarning

    nlp, _, docs = nlp_and_docs
    doc = next(Doc(d.vocab).from_bytes(d.to_bytes()) for d in docs if len(d) >= 4)
    doc[1]._.fixed_head = doc[2]
    doc[2]._.fixed_head = doc[1]
    parser = nlp.get_pipe("mst_parser")
    parser.constraint_policy = "strict"
    try:
        with pytest.raises(ValueError, match=rf"cycle \('{doc[1].text}' \(token 1\)"):
            parser(doc)
    finally:
        parser.constraint_policy = "nonprojective"
    with pytest.warns(ConstraintWarning, match=r"dropped 1 constraint.*the fixed head"):
        parser(doc)
    assert (doc[1].head.i == 2) != (doc[2].head.i == 1)
