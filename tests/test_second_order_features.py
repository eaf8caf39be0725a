"""Second-order sibling features: hand-computed ids of one factor, the fast
scorer against explicit feature sums, tree features against the factors."""
import numpy
import pytest
import spacy
from spacy.strings import get_string_id
from spacy.tokens import Doc

from spacy_mstparse.decoders import second_order_tree_score
from spacy_mstparse.features.doc_arrays import SentenceEncoder
from spacy_mstparse.features.hashing import py_mix as mix
from spacy_mstparse.features.second_order import START_MARK, SiblingFeatures

N_BUCKETS = 2**20
# Template ids as documented in second_order.pyx.
TRIP, PP, WP, PW = 201, 202, 203, 204
WW = 250
STOP_HP, STOP_P, STOP_WP, STOP_WW = 205, 206, 207, 251


def mix3(a, b, c):
    return mix(mix(a, b), c)


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def encode(nlp, words, pos, tag_columns="upos"):
    doc = Doc(nlp.vocab, words=words, pos=pos, tags=[p.lower() for p in pos])
    return SentenceEncoder(nlp.vocab, tag_columns, False).encode(doc, [(0, len(doc))])[0]


def sample_sentence(nlp, tag_columns):
    """A 13-word sentence with a relative clause (and its words)."""
    words = "The quick brown foxes , which were jumping , saw the lazy dogs".split()
    pos = ["DET", "ADJ", "ADJ", "NOUN", "PUNCT", "PRON", "AUX", "VERB", "PUNCT", "VERB", "DET",
           "ADJ", "NOUN"]
    return encode(nlp, words, pos, tag_columns), words


def test_hand_computed_sibling_features(nlp):
    # "She gave him books": gave (2) has right dependents him (3), books (4).
    s = encode(nlp, ["She", "gave", "him", "books"], ["PRON", "VERB", "PRON", "NOUN"])
    feats = SiblingFeatures(N_BUCKETS, 1)
    VERB, PRON, NOUN = (nlp.vocab.strings[x] for x in ("VERB", "PRON", "NOUN"))
    him, books = get_string_id("him"), get_string_id("books")
    right = 1
    # factor (gave, him, books): distance him..books = 1 -> bin 0, right: 3 + 0 + 7
    dd = 3 + 0 + 7
    bases = [
        mix3(PP, PRON, NOUN), mix3(WP, him, NOUN), mix3(PW, PRON, books),
        mix3(WW, him, books), mix(mix3(TRIP, VERB, PRON), NOUN),
    ]
    expected = sorted(
        [mix(b, right) % N_BUCKETS for b in bases] + [mix(b, dd) % N_BUCKETS for b in bases]
    )
    assert sorted(feats.factor_features(s, 2, 3, 4).tolist()) == expected
    # first dependent (gave, -, him): the start marker, distance gave..him = 1
    start = [
        mix3(PP, START_MARK, PRON), mix3(WP, START_MARK, PRON), mix3(PW, START_MARK, him),
        mix3(WW, START_MARK, him), mix(mix3(TRIP, VERB, START_MARK), PRON),
    ]
    expected = sorted(
        [mix(b, right) % N_BUCKETS for b in start] + [mix(b, dd) % N_BUCKETS for b in start]
    )
    assert sorted(feats.factor_features(s, 2, 2, 3).tolist()) == expected
    # left side: (gave, -, She): direction left = 2, distance 1 -> 3 + 0
    got = feats.factor_features(s, 2, 2, 1).tolist()
    assert mix(mix3(PP, START_MARK, PRON), 2) % N_BUCKETS in got
    assert mix(mix3(PP, START_MARK, PRON), 3) % N_BUCKETS in got


@pytest.mark.parametrize("tag_columns", ["upos", "both"])
def test_sibling_scores_equal_sum_of_feature_weights(nlp, tag_columns):
    s, words = sample_sentence(nlp, tag_columns)
    feats = SiblingFeatures(N_BUCKETS, 2 if tag_columns == "both" else 1)
    w = numpy.random.RandomState(2).randn(N_BUCKETS).astype("float32")
    sib = feats.score(s, w, 0.5)
    n = len(words)
    checked = 0
    for h in range(n + 1):
        for c in range(1, n + 1):
            if c == h:
                continue
            for p in [h] + list(range(min(h, c) + 1, max(h, c))):
                ids = feats.factor_features(s, h, p, c).astype("int64")
                expected = 0.5 * w[ids].astype("float64").sum()
                assert sib[h, p, c] == pytest.approx(expected, rel=1e-4, abs=1e-3)
                checked += 1
    assert checked > n * n
    # tree features = the factors of the tree, and their weight sum is the
    # decoders' second-order tree score with zero arc scores
    heads = numpy.array([-1, 4, 4, 4, 10, 8, 8, 8, 4, 4, 0, 13, 13, 10], dtype="int32")
    tree = feats.tree_features(s, heads)
    total = 0.5 * w[tree.astype("int64")].astype("float64").sum()
    zero_arcs = numpy.zeros((n + 1, n + 1), dtype="float32")
    assert second_order_tree_score(zero_arcs, sib, heads) == pytest.approx(total, rel=1e-4, abs=1e-2)
    # 13 arcs -> 13 factors, each 2 * (3 * tagsets + 1 + tagsets) ids
    n_tagsets = 2 if tag_columns == "both" else 1
    assert len(tree) == 13 * 2 * (4 * n_tagsets + 1)


def test_hand_computed_stop_features(nlp):
    # "She gave him books": gave (2) has She on its left, him and books on its right.
    s = encode(nlp, ["She", "gave", "him", "books"], ["PRON", "VERB", "PRON", "NOUN"])
    feats = SiblingFeatures(N_BUCKETS, 1, stops=True)
    VERB, PRON, NOUN = (nlp.vocab.strings[x] for x in ("VERB", "PRON", "NOUN"))
    gave, books, him = get_string_id("gave"), get_string_id("books"), get_string_id("him")

    def expected(bases, side, side_dist):
        return sorted([mix(b, side) % N_BUCKETS for b in bases]
                      + [mix(b, side_dist) % N_BUCKETS for b in bases])

    # outermost right dependent of gave: books, distance 2 -> bin 1, right: 3 + 1 + 7
    bases = [mix3(STOP_HP, VERB, NOUN), mix(STOP_P, NOUN), mix3(STOP_WP, gave, NOUN),
             mix3(STOP_WW, gave, books)]
    assert sorted(feats.stop_features(s, 2, 4).tolist()) == expected(bases, 1, 11)
    # him has no left dependent (last = 0): left side 2, "none on the left" 19
    bases = [mix3(STOP_HP, PRON, START_MARK), mix(STOP_P, START_MARK),
             mix3(STOP_WP, him, START_MARK), mix3(STOP_WW, him, START_MARK)]
    assert sorted(feats.stop_features(s, 3, 0).tolist()) == expected(bases, 2, 19)
    # ... nor a right one (last = h): right side 1, "none on the right" 18
    assert sorted(feats.stop_features(s, 3, 3).tolist()) == expected(bases, 1, 18)
    with pytest.raises(ValueError, match="no stop factor"):
        feats.stop_features(s, 0, 1)


@pytest.mark.parametrize("tag_columns", ["upos", "both"])
def test_stop_scores_and_tree_features(nlp, tag_columns):
    s, words = sample_sentence(nlp, tag_columns)
    n_tagsets = 2 if tag_columns == "both" else 1
    plain = SiblingFeatures(N_BUCKETS, n_tagsets)
    feats = SiblingFeatures(N_BUCKETS, n_tagsets, stops=True)
    w = numpy.random.RandomState(3).randn(N_BUCKETS).astype("float32")
    sib, sib_plain = feats.score(s, w, 0.5), plain.score(s, w, 0.5)
    n = len(words)
    stop_cells = numpy.zeros(sib.shape, dtype=bool)
    for h in range(1, n + 1):
        for last in range(n + 1):
            ids = feats.stop_features(s, h, last).astype("int64")
            expected = 0.5 * w[ids].astype("float64").sum()
            assert sib[h, last, h] == pytest.approx(expected, rel=1e-4, abs=1e-3)
            assert sib_plain[h, last, h] == 0.0
            stop_cells[h, last, h] = True
    # the sibling cells are those of the model without stops
    assert numpy.array_equal(sib[~stop_cells], sib_plain[~stop_cells])
    assert numpy.count_nonzero(sib[stop_cells]) > n * n // 2
    # the tree's features now include every word's two stop factors; their
    # weight sum is still the decoders' tree score, which reads the stops
    heads = numpy.array([-1, 4, 4, 4, 10, 8, 8, 8, 4, 4, 0, 13, 13, 10], dtype="int32")
    tree = feats.tree_features(s, heads)
    assert len(tree) == 13 * 2 * (4 * n_tagsets + 1) + 13 * 2 * 2 * (3 * n_tagsets + 1)
    total = 0.5 * w[tree.astype("int64")].astype("float64").sum()
    zero_arcs = numpy.zeros((n + 1, n + 1), dtype="float32")
    assert second_order_tree_score(zero_arcs, sib, heads) == pytest.approx(total, rel=1e-4, abs=1e-2)
    without = second_order_tree_score(zero_arcs, sib_plain, heads)
    assert abs(second_order_tree_score(zero_arcs, sib, heads) - without) > 1e-3


def test_invalid_inputs(nlp):
    with pytest.raises(ValueError, match="power of two"):
        SiblingFeatures(1000, 1)
    s = encode(nlp, ["a", "b", "c"], ["DET", "NOUN", "VERB"])
    feats = SiblingFeatures(N_BUCKETS, 1)
    with pytest.raises(ValueError, match="not between"):
        feats.factor_features(s, 1, 3, 2)
    with pytest.raises(ValueError, match="weights"):
        feats.score(s, numpy.zeros(4, dtype="float32"))
    with pytest.raises(ValueError, match="tag rows"):
        SiblingFeatures(N_BUCKETS, 2).score(s, numpy.zeros(N_BUCKETS, dtype="float32"))
