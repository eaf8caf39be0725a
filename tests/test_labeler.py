"""The arc labeler, version 2 (McDonald, Lerman & Pereira 2006): hand-computed
feature ids of the sibling / head-context templates, the tree context they
read, the per-head Viterbi over label chains against brute force over every
labelling, the label restriction, and the structured perceptron update."""
import itertools

import numpy
import pytest
import spacy
from spacy.strings import get_string_id
from spacy.tokens import Doc

from spacy_mstparse.features.doc_arrays import SentenceEncoder
from spacy_mstparse.features.hashing import py_mix as mix
from spacy_mstparse.features.sentence import BOS_TAG, EOS_TAG
from spacy_mstparse.labeler.arc_labeler import (
    CHAIN, CONTEXT, DEP_BAGS, DEP_WORDS, RESTRICT, VERSION_FLAGS, ArcLabeler)

# Template numbers of the version-2 arc features and the transitions
# (the enums of arc_labeler.pyx).
L_SIB_IN, L_SIB_OUT, L_RANK, L_HCTX, L_SIB_IN_CW = 22, 23, 24, 25, 26
L_LDEP_W, L_RDEP_W, L_HWCP_DR, L_DEP_BAG, L_SIB_BAG = range(27, 32)
T_PREV, T_PREV_HP, T_PREV_CP = 101, 102, 103


def mix3(a, b, c):
    return mix(mix(a, b), c)


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def encode(nlp, words, pos):
    doc = Doc(nlp.vocab, words=words, pos=pos, tags=["X"] * len(words))
    return SentenceEncoder(nlp.vocab, "upos", False).encode(doc, [(0, len(doc))])[0]


# "the big dog barked loudly": dog <- the, big; barked <- dog, loudly; root barked
WORDS = ["the", "big", "dog", "barked", "loudly"]
POS = ["DET", "ADJ", "NOUN", "VERB", "ADV"]
HEADS = numpy.array([-1, 3, 3, 4, 0, 4], dtype="int32")


def test_tree_context_by_hand(nlp):
    s = encode(nlp, WORDS, POS)
    ctx = ArcLabeler(64, 3, False, 2).context(s, HEADS)
    # dog (3) has the left dependents the (1), big (2); barked (4) dog and loudly (5)
    assert list(ctx["n_left"]) == [0, 0, 0, 2, 1, 0]
    assert list(ctx["n_right"]) == [1, 0, 0, 0, 1, 0]
    assert list(ctx["inner"]) == [-1, 2, -1, -1, -1, -1]   # big is nearer dog than the
    assert list(ctx["outer"]) == [-1, -1, 1, -1, -1, -1]
    assert list(ctx["rank"]) == [0, 2, 1, 1, 1, 1]
    assert list(ctx["prev"]) == [-1, -1, 1, -1, -1, 3]    # loudly follows dog under barked
    assert list(ctx["last"]) == [4, -1, -1, 2, 5, -1]


def test_hand_computed_context_feature_ids(nlp):
    s = encode(nlp, WORDS, POS)
    n_rows, n_labels = 2**10, 3
    labeler = ArcLabeler(n_rows, n_labels, False, 2)
    offsets, names = labeler.arc_feature_rows(s, HEADS, 1)   # dog -> the
    got = dict(zip(names, (int(o) for o in offsets)))
    p = {t: get_string_id(t) for t in POS}
    row = lambda key: (key & (n_rows - 1)) * n_labels  # noqa: E731
    the = get_string_id("the")
    assert got["c-pos+inner-sib-pos+h-pos"] == row(mix(mix3(L_SIB_IN, p["DET"], p["ADJ"]), p["NOUN"]))
    assert got["c-pos+outer-sib-pos+h-pos"] == row(mix(mix3(L_SIB_OUT, p["DET"], 0), p["NOUN"]))
    # left of the head (direction 0), rank 2
    assert got["h-pos+c-pos+dir+rank"] == row(mix(mix3(L_RANK, p["NOUN"], p["DET"]), 2))
    # tags around the head dog: big, barked
    assert got["h-pos-1+h-pos+h-pos+1+c-pos"] == row(
        mix(mix3(L_HCTX, p["ADJ"], p["NOUN"]), mix(p["VERB"], p["DET"])))
    assert got["c-word+inner-sib-pos"] == row(mix3(L_SIB_IN_CW, the, p["ADJ"]))
    # loudly (5): right of barked, rank 1, inner sibling none, after the root
    offsets, names = labeler.arc_feature_rows(s, HEADS, 5)
    got = dict(zip(names, (int(o) for o in offsets)))
    assert got["h-pos+c-pos+dir+rank"] == row(mix(mix3(L_RANK, p["VERB"], p["ADV"]), 4 + 1))
    assert got["h-pos-1+h-pos+h-pos+1+c-pos"] == row(
        mix(mix3(L_HCTX, p["NOUN"], p["VERB"]), mix(p["ADV"], p["ADV"])))
    # the head at the end of the sentence sees the end marker
    offsets, names = labeler.arc_feature_rows(s, numpy.array([-1, 5, 5, 5, 5, 0], dtype="int32"), 1)
    got = dict(zip(names, (int(o) for o in offsets)))
    assert got["h-pos-1+h-pos+h-pos+1+c-pos"] == row(
        mix(mix3(L_HCTX, p["VERB"], p["ADV"]), mix(EOS_TAG, p["DET"])))
    # version 1 emits none of them
    names1 = ArcLabeler(n_rows, n_labels, False, 1).arc_feature_rows(s, HEADS, 1)[1]
    assert not set(names1) & {"c-pos+inner-sib-pos+h-pos", "h-pos+c-pos+dir+rank"}
    assert set(names1) < set(names)
    assert BOS_TAG != EOS_TAG


def test_hand_computed_dependent_word_and_bag_ids(nlp):
    s = encode(nlp, WORDS, POS)
    n_rows, n_labels = 2**10, 3
    labeler = ArcLabeler(n_rows, n_labels, False, 2, DEP_WORDS | DEP_BAGS)
    row = lambda key: (key & (n_rows - 1)) * n_labels  # noqa: E731
    w = {t: get_string_id(t) for t in WORDS}
    p = {t: get_string_id(t) for t in POS}
    offsets, names = labeler.arc_feature_rows(s, HEADS, 3)   # barked -> dog, left, rank 1
    got = {}
    for name, offset in zip(names, offsets):
        got.setdefault(name, []).append(int(offset))
    assert got["c-pos+leftmost-dep-word"] == [row(mix3(L_LDEP_W, p["NOUN"], w["the"]))]
    assert got["c-pos+rightmost-dep-word"] == [row(mix3(L_RDEP_W, p["NOUN"], 0))]
    assert got["h-word+c-pos+dir+rank"] == [row(mix(mix3(L_HWCP_DR, w["barked"], p["NOUN"]), 1))]
    # dog's dependents right to left, its sibling loudly (right of the head)
    assert got["c-pos+dep-word"] == [row(mix3(L_DEP_BAG, p["NOUN"], w[x])) for x in ("big", "the")]
    assert got["c-pos+dir+sib-word"] == [row(mix(mix3(L_SIB_BAG, p["NOUN"], w["loudly"]), 1))]
    offsets, names = labeler.arc_feature_rows(s, HEADS, 1)   # dog -> the: sibling big
    got = dict(zip(names, (int(o) for o in offsets)))
    assert got["c-pos+dir+sib-word"] == row(mix(mix3(L_SIB_BAG, p["DET"], w["big"]), 0))
    assert "c-pos+dep-word" not in got


def test_hand_computed_transition_ids(nlp):
    s = encode(nlp, WORDS, POS)
    n_rows, n_labels = 2**10, 3
    labeler = ArcLabeler(n_rows, n_labels, False, 2)
    row = lambda key: (key & (n_rows - 1)) * n_labels  # noqa: E731
    # loudly (5) after dog (3) under barked (4): previous on the left (0), this on the right (1)
    offsets, names = labeler.transition_feature_rows(s, HEADS, 5, 2)
    key = mix3(T_PREV, 2, 3 * 0 + 1)
    assert names == ["prev-label+sides", "prev-label+sides+h-pos", "prev-label+sides+c-pos"]
    assert list(offsets) == [row(key), row(mix(mix(T_PREV_HP, key), get_string_id("VERB"))),
                             row(mix(mix(T_PREV_CP, key), get_string_id("ADV")))]
    # the first dependent: previous label "none" (= n_labels), side code 3 * 2 + 0
    offsets, _ = labeler.transition_feature_rows(s, HEADS, 1, -1)
    assert int(offsets[0]) == row(mix3(T_PREV, n_labels, 6))
    assert len(ArcLabeler(n_rows, n_labels, False, 1).transition_feature_rows(s, HEADS, 5, 2)[0]) == 0


def random_tree(rng, n):
    heads = numpy.full(n + 1, -1, dtype="int32")
    order = rng.permutation(numpy.arange(1, n + 1))
    heads[order[0]] = 0
    for i, c in enumerate(order[1:], 1):
        heads[c] = order[rng.randint(i)]
    return heads


def brute_force(labeler, s, heads, weights, root_label):
    n = len(heads) - 1
    best, best_score = None, -numpy.inf
    for combo in itertools.product(range(labeler.n_labels), repeat=n):
        labels = numpy.array([-1, *combo], dtype="int32")
        score = labeler.sequence_score(s, heads, labels, weights, root_label)
        if score > best_score:
            best, best_score = labels, score
    return best, best_score


@pytest.mark.parametrize("flags", [CHAIN, CHAIN | CONTEXT, CHAIN | RESTRICT, VERSION_FLAGS[2]])
def test_viterbi_equals_brute_force(nlp, flags):
    rng = numpy.random.RandomState(flags)
    tags = ["DET", "NOUN", "VERB", "ADJ", "ADP", "PRON"]
    n_labels, root = 3, 0
    for trial in range(25):
        n = rng.randint(1, 7)
        s = encode(nlp, [f"w{i}" for i in range(n)], list(rng.choice(tags, n)))
        heads = random_tree(rng, n)
        labeler = ArcLabeler(2**6, n_labels, False, 2, flags)
        if flags & RESTRICT:   # restrictions from a random labelling of this tree
            gold = numpy.array([-1] + list(rng.randint(n_labels, size=n)), dtype="int32")
            labeler.fit_restrictions([(s, heads, gold)])
        weights = rng.normal(size=labeler.n_weights).astype("float32")
        rl = root if trial % 2 else -1
        pred = labeler.predict(s, heads, weights, rl)
        best, best_score = brute_force(labeler, s, heads, weights, rl)
        assert labeler.sequence_score(s, heads, pred, weights, rl) == pytest.approx(best_score)
        assert numpy.isfinite(best_score)
        if rl >= 0:
            assert all((pred[c] == rl) == (heads[c] == 0) for c in range(1, n + 1))


def test_label_restriction_honoured(nlp):
    rng = numpy.random.RandomState(7)
    n_labels = 5
    s = encode(nlp, WORDS, POS)
    gold = numpy.array([-1, 1, 2, 3, 0, 4], dtype="int32")
    labeler = ArcLabeler(2**8, n_labels, False, 2)
    labeler.fit_restrictions([(s, HEADS, gold)])
    keys, allowed = labeler.restrictions()
    assert len(keys) == 5 and allowed.sum() == 5
    assert labeler.restriction_key(s, 3, 1) in set(keys.tolist())
    for _ in range(20):   # whatever the weights, seen triples keep their one label
        weights = rng.normal(size=labeler.n_weights).astype("float32")
        assert list(labeler.predict(s, HEADS, weights, 0)) == list(gold)
        scores = labeler.label_scores(s, HEADS, weights, 0)
        assert numpy.isneginf(scores[1, [0, 2, 3, 4]]).all() and numpy.isfinite(scores[1, 1])
    # an unseen (head tag, child tag, direction) may take any label but the root's
    other = numpy.array([-1, 2, 3, 4, 0, 4], dtype="int32")   # the -> big: (ADJ, DET, left)
    seen = set()
    for _ in range(30):
        weights = rng.normal(size=labeler.n_weights).astype("float32")
        seen.add(int(labeler.predict(s, other, weights, 0)[1]))
    assert seen == {1, 2, 3, 4}
    # without the restriction bit the table is ignored
    free = ArcLabeler(2**8, n_labels, False, 2, CHAIN | CONTEXT)
    free.set_restrictions(keys, allowed)
    outs = {tuple(free.predict(s, HEADS, rng.normal(size=free.n_weights).astype("float32"), 0))
            for _ in range(10)}
    assert len(outs) > 1


def test_chain_update_is_the_sequence_feature_difference(nlp):
    """The structured perceptron step moves the weights by exactly
    score(gold) - score(predicted) per unit step: w += u gives
    sequence_score(gold) - sequence_score(pred) increased by |u|^2."""
    rng = numpy.random.RandomState(3)
    s = encode(nlp, WORDS, POS)
    labeler = ArcLabeler(2**12, 4, False, 2, CHAIN | CONTEXT)
    weights = rng.normal(size=labeler.n_weights).astype("float32")
    gold = numpy.array([-1, 1, 2, 3, 0, 3], dtype="int32")
    pred = labeler.predict(s, HEADS, weights, 0)
    idx, val, n_wrong = labeler.update_vector(s, HEADS, gold, pred)
    assert n_wrong == int((gold[1:] != pred[1:]).sum()) > 0
    before = (labeler.sequence_score(s, HEADS, gold, weights, 0)
              - labeler.sequence_score(s, HEADS, pred, weights, 0))
    moved = weights.astype("float64")
    moved[idx.astype("intp")] += val
    after = (labeler.sequence_score(s, HEADS, gold, moved.astype("float32"), 0)
             - labeler.sequence_score(s, HEADS, pred, moved.astype("float32"), 0))
    assert after - before == pytest.approx(float(val @ val), rel=1e-4)


@pytest.mark.parametrize("flags", [0, CHAIN, CHAIN | CONTEXT, CHAIN | CONTEXT | DEP_BAGS | DEP_WORDS])
def test_update_vector_is_the_dense_score_difference(nlp, flags):
    """On random trees and labellings: the update's ids are sorted and
    unique with non-zero integer counts, and for any weights w its dot
    product with w is score(gold) - score(predicted), i.e. it is the dense
    difference of the two labellings' feature counts."""
    rng = numpy.random.RandomState(7)
    tags = ["DET", "NOUN", "VERB", "ADJ", "ADP"]
    for trial in range(40):
        n = rng.randint(1, 12)
        s = encode(nlp, [f"w{rng.randint(20)}" for _ in range(n)], list(rng.choice(tags, n)))
        heads = random_tree(rng, n)
        labeler = ArcLabeler(2**10, 5, False, 2, flags)
        gold = rng.randint(1, 5, n + 1).astype("int32")
        gold[0] = -1
        gold[heads == 0] = 0   # the root word's label is the root label (0 here)
        pred = numpy.asarray(labeler.predict(s, heads, rng.normal(size=labeler.n_weights)
                                             .astype("float32"), 0), dtype="int32")
        if trial % 5 == 0:
            pred = gold.copy()
        idx, val, n_wrong = labeler.update_vector(s, heads, gold, pred)
        assert n_wrong == int((gold[1:] != pred[1:]).sum())
        assert idx.dtype == numpy.uint64 and val.dtype == numpy.float64
        assert (numpy.diff(idx.astype("float64")) > 0).all()
        assert (val != 0).all() and (val == numpy.round(val)).all()
        assert (len(idx) == 0) == (n_wrong == 0)
        for _ in range(3):
            w = rng.normal(size=labeler.n_weights).astype("float32")
            difference = (labeler.sequence_score(s, heads, gold, w, 0)
                          - labeler.sequence_score(s, heads, pred, w, 0))
            assert float(val @ w[idx.astype("intp")].astype("float64")) == \
                pytest.approx(difference, rel=1e-4, abs=1e-4)


def test_conditional_label_scores_argmax_is_the_prediction(nlp):
    rng = numpy.random.RandomState(11)
    tags = ["DET", "NOUN", "VERB", "ADJ"]
    for _ in range(10):
        n = rng.randint(2, 8)
        s = encode(nlp, [f"w{i}" for i in range(n)], list(rng.choice(tags, n)))
        heads = random_tree(rng, n)
        labeler = ArcLabeler(2**6, 4, False, 2)
        weights = rng.normal(size=labeler.n_weights).astype("float32")
        pred = labeler.predict(s, heads, weights, 0)
        scores = labeler.label_scores(s, heads, weights, 0)
        for c in range(1, n + 1):
            if heads[c] != 0:
                assert pred[c] == 1 + int(numpy.argmax(scores[c, 1:]))


def test_version_one_ignores_the_new_parts(nlp):
    rng = numpy.random.RandomState(5)
    s = encode(nlp, WORDS, POS)
    v1 = ArcLabeler(2**8, 4, False, 1)
    assert v1.flags == 0 and not v1.uses_restrictions
    weights = rng.normal(size=v1.n_weights).astype("float32")
    scores = v1.label_scores(s, HEADS, weights)
    pred = v1.predict(s, HEADS, weights, 0)
    for c in range(1, 6):   # independent per arc: the argmax of its own scores
        if HEADS[c] != 0:
            assert pred[c] == 1 + int(numpy.argmax(scores[c, 1:]))
    with pytest.raises(ValueError, match="labeler version"):
        ArcLabeler(2**8, 4, False, 9)
