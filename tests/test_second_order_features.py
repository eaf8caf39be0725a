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


def mix3(a, b, c):
    return mix(mix(a, b), c)


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def encode(nlp, words, pos, tag_columns="upos"):
    doc = Doc(nlp.vocab, words=words, pos=pos, tags=[p.lower() for p in pos])
    return SentenceEncoder(nlp.vocab, tag_columns, False).encode(doc, [(0, len(doc))])[0]


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
    words = "The quick brown foxes , which were jumping , saw the lazy dogs".split()
    pos = ["DET", "ADJ", "ADJ", "NOUN", "PUNCT", "PRON", "AUX", "VERB", "PUNCT", "VERB", "DET",
           "ADJ", "NOUN"]
    s = encode(nlp, words, pos, tag_columns)
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
