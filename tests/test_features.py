"""First-order features: hand-computed feature ids for a small sentence, and
the fast scoring path agreeing with explicit feature extraction."""
import numpy
import pytest
import spacy
from spacy.parts_of_speech import IDS as POS_IDS
from spacy.strings import get_string_id
from spacy.tokens import Doc

from spacy_mstparse.features.doc_arrays import SentenceEncoder
from spacy_mstparse.features.first_order import FirstOrderFeatures
from spacy_mstparse.features.hashing import py_mix as mix
from spacy_mstparse.features.sentence import BOS_TAG, EOS_TAG, ROOT_TAG, ROOT_WORD

# Template numbers, in the order of the enum in first_order.pyx.
NAMES = """HWP HW HP HXP HX CWP CW CP CXP CX WPWP PWP WWP WPP WPW WW PP XPXP PXP XXP XPP
XPX XX BETWEEN CTX_HR_CL CTX_HL_CL CTX_HR_CR CTX_HL_CR TRI_CL TRI_HR TRI_HL TRI_CR
MORPH_H MORPH_C MORPH_HC MORPH_HP_CM MORPH_HM_CP""".split()
T = {name: i + 1 for i, name in enumerate(NAMES)}
N_BUCKETS = 2**20


def mix3(a, b, c):
    return mix(mix(a, b), c)


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def encode(nlp, words, pos, tag_columns="upos", morphs=None, use_morph=False):
    doc = Doc(nlp.vocab, words=words, pos=pos, tags=["X"] * len(words), morphs=morphs)
    return SentenceEncoder(nlp.vocab, tag_columns, use_morph).encode(doc, [(0, len(doc))])[0]


def test_hand_computed_arc_features(nlp):
    # "John saw Mary", arc saw (2) -> John (1): child left of head, distance 1.
    s = encode(nlp, ["John", "saw", "Mary"], ["PROPN", "VERB", "PROPN"])
    feats = FirstOrderFeatures(N_BUCKETS, 1, False)
    john, saw = get_string_id("john"), get_string_id("saw")
    PROPN, VERB = nlp.vocab.strings["PROPN"], nlp.vocab.strings["VERB"]
    hW, hP, cW, cP = saw, VERB, john, PROPN
    hPl, hPr = PROPN, PROPN  # tags left / right of the head
    cPl, cPr = ROOT_TAG, VERB  # left of the child is the root
    bases = [
        # head and child unigrams (Table 1a)
        mix3(T["HWP"], hW, hP), mix(T["HP"], hP), mix(T["HW"], hW),
        mix3(T["CWP"], cW, cP), mix(T["CP"], cP), mix(T["CW"], cW),
        # bigrams (Table 1b)
        mix(mix3(T["WPWP"], hW, hP), mix(cW, cP)),
        mix(mix3(T["PWP"], hP, cW), cP),
        mix(mix3(T["WWP"], hW, cW), cP),
        mix(mix3(T["WPP"], hW, hP), cP),
        mix(mix3(T["WPW"], hW, hP), cW),
        mix3(T["PP"], hP, cP),
        mix3(T["WW"], hW, cW),
        # no word in between; surrounding POS 4-grams and back-offs (Table 1c)
        mix(mix3(T["CTX_HR_CL"], hP, hPr), mix(cPl, cP)),
        mix(mix3(T["CTX_HL_CL"], hPl, hP), mix(cPl, cP)),
        mix(mix3(T["CTX_HR_CR"], hP, hPr), mix(cP, cPr)),
        mix(mix3(T["CTX_HL_CR"], hPl, hP), mix(cP, cPr)),
        mix(mix3(T["TRI_CL"], hP, cPl), cP),
        mix(mix3(T["TRI_HR"], hP, hPr), cP),
        mix(mix3(T["TRI_HL"], hPl, hP), cP),
        mix(mix3(T["TRI_CR"], hP, cP), cPr),
    ]
    dd = 1  # left attachment, distance 1
    expected = sorted([b % N_BUCKETS for b in bases] + [mix(b, dd) % N_BUCKETS for b in bases])
    got = sorted(int(x) for x in feats.arc_features(s, 2, 1))
    assert got == expected
    # direction_backoff adds each base conjoined with the direction alone:
    # 16 = child left of its head, 17 = right.
    backoff = FirstOrderFeatures(N_BUCKETS, 1, False, True)
    left = sorted(expected + [mix(b, 16) % N_BUCKETS for b in bases])
    assert sorted(int(x) for x in backoff.arc_features(s, 2, 1)) == left
    # the same templates for John <- saw's mirror image: saw (2) -> Mary (3)
    # is a right attachment at distance 1 (direction/distance code 8)
    right = backoff.arc_features(s, 2, 3)
    assert mix(mix3(T["HWP"], hW, hP), 17) % N_BUCKETS in right
    assert mix(mix3(T["HWP"], hW, hP), 8) % N_BUCKETS in right
    assert mix(mix3(T["HWP"], hW, hP), 16) % N_BUCKETS not in right


def test_in_between_prefix_and_root_features(nlp):
    # root (0) -> "considered" (3): two words in between with distinct tags,
    # the child is longer than five characters, so prefix templates fire.
    s = encode(nlp, ["It", "was", "considered"], ["PRON", "AUX", "VERB"])
    feats = FirstOrderFeatures(N_BUCKETS, 1, False)
    PRON, AUX, VERB = (nlp.vocab.strings[t] for t in ("PRON", "AUX", "VERB"))
    got = set(int(x) for x in feats.arc_features(s, 0, 3))
    hPcP = mix3(T["PP"], ROOT_TAG, VERB)
    for between in (PRON, AUX):
        assert mix3(T["BETWEEN"], hPcP, between) % N_BUCKETS in got
    # the root's left context is BOS; the child's right context is EOS
    assert mix(mix3(T["CTX_HL_CR"], BOS_TAG, ROOT_TAG), mix(VERB, EOS_TAG)) % N_BUCKETS in got
    prefix = get_string_id("<pre>consi")
    assert mix(T["CX"], prefix) % N_BUCKETS in got
    assert mix3(T["XX"], ROOT_WORD, prefix) % N_BUCKETS in got
    # distance 3, child to the right: dd = 1 + bin 2 + 7
    assert mix(mix(T["HP"], ROOT_TAG), 10) % N_BUCKETS in got
    # a short word has no prefix features
    short = set(int(x) for x in feats.arc_features(s, 3, 2))
    assert mix(T["CX"], get_string_id("<pre>was")) % N_BUCKETS not in short


def test_lemma_stands_in_for_the_prefix_where_it_differs(nlp):
    # "Dogs considered cats": the lemmas of "Dogs" and "considered" differ from
    # the words; "cats" is given its own form as lemma, so it keeps the rule of
    # the 5-character prefix (none: a short word).
    doc = Doc(nlp.vocab, words=["Dogs", "considered", "cats"], pos=["NOUN", "VERB", "NOUN"],
              tags=["X"] * 3, lemmas=["dog", "consider", "cats"])
    s = SentenceEncoder(nlp.vocab, "upos", lemma=True).encode(doc, [(0, 3)])[0]
    plain = SentenceEncoder(nlp.vocab, "upos").encode(doc, [(0, 3)])[0]
    feats = FirstOrderFeatures(N_BUCKETS, 1, False)
    got = set(int(x) for x in feats.arc_features(s, 2, 1))        # considered -> Dogs
    assert mix(T["CX"], get_string_id("<lem>dog")) % N_BUCKETS in got
    assert mix(T["HX"], get_string_id("<lem>consider")) % N_BUCKETS in got
    assert mix(T["HX"], get_string_id("<pre>consi")) % N_BUCKETS not in got
    before = set(int(x) for x in feats.arc_features(plain, 2, 1))
    assert mix(T["HX"], get_string_id("<pre>consi")) % N_BUCKETS in before
    assert mix(T["CX"], get_string_id("<lem>dog")) % N_BUCKETS not in before
    # a word whose lemma is itself gets no prefix feature, as without lemmas
    cats = set(int(x) for x in feats.arc_features(s, 2, 3))
    for prefixed in ("<lem>cats", "<pre>cats"):
        assert mix(T["CX"], get_string_id(prefixed)) % N_BUCKETS not in cats


def test_morph_features(nlp):
    s = encode(
        nlp, ["She", "runs"], ["PRON", "VERB"], morphs=["Case=Nom|Number=Sing", "Number=Sing"],
        use_morph=True,
    )
    feats = FirstOrderFeatures(N_BUCKETS, 1, True)
    plain = FirstOrderFeatures(N_BUCKETS, 1, False)
    got = set(int(x) for x in feats.arc_features(s, 2, 1))
    nom, sing = get_string_id("Case=Nom"), get_string_id("Number=Sing")
    assert mix3(T["MORPH_HC"], sing, nom) % N_BUCKETS in got
    assert mix3(T["MORPH_HC"], sing, sing) % N_BUCKETS in got
    assert mix(T["MORPH_C"], nom) % N_BUCKETS in got
    # each FEATS value with the other end's (first) tag
    assert mix3(T["MORPH_HP_CM"], POS_IDS["VERB"], nom) % N_BUCKETS in got
    assert mix3(T["MORPH_HM_CP"], sing, POS_IDS["PRON"]) % N_BUCKETS in got
    # head 1 feat, child 2 feats, 2 pairs, 2 + 1 with the other tag; each also
    # with direction/distance
    assert (len(feats.arc_features(s, 2, 1)) - len(plain.arc_features(s, 2, 1))
            == 2 * (1 + 2 + 2 + 3))


@pytest.mark.parametrize("tag_columns,use_morph,backoff",
                         [("upos", False, False), ("both", True, False), ("both", False, True)])
def test_score_matrix_equals_sum_of_feature_weights(nlp, tag_columns, use_morph, backoff):
    words = "The quick brown foxes , which were jumping , saw the extraordinarily lazy dogs".split()
    pos = ["DET", "ADJ", "ADJ", "NOUN", "PUNCT", "PRON", "AUX", "VERB", "PUNCT", "VERB", "DET",
           "ADV", "ADJ", "NOUN"]
    morphs = ["Number=Plur" if p == "NOUN" else "" for p in pos]
    s = encode(nlp, words, pos, tag_columns, morphs, use_morph)
    feats = FirstOrderFeatures(N_BUCKETS, 2 if tag_columns == "both" else 1, use_morph, backoff)
    assert feats.n_conjunctions == (3 if backoff else 2)
    w = numpy.random.RandomState(1).randn(N_BUCKETS).astype("float32")
    scores = feats.score(s, w, 0.5)
    n = len(words)
    for h in range(n + 1):
        for c in range(1, n + 1):
            if h == c:
                continue
            expected = 0.5 * w[feats.arc_features(s, h, c).astype("int64")].astype("float64").sum()
            assert scores[h, c] == pytest.approx(expected, rel=1e-4, abs=1e-3)
    heads = numpy.array([-1, 4, 4, 4, 10, 8, 8, 8, 4, 4, 0, 14, 13, 14, 10], dtype="int32")
    tree = feats.tree_features(s, heads)
    per_arc = numpy.concatenate([feats.arc_features(s, int(heads[c]), c) for c in range(1, n + 1)])
    assert sorted(tree.tolist()) == sorted(per_arc.tolist())


def test_invalid_settings_and_inputs(nlp):
    with pytest.raises(ValueError, match="power of two"):
        FirstOrderFeatures(1000, 1, False)
    with pytest.raises(ValueError, match="tag_columns"):
        SentenceEncoder(nlp.vocab, "cpos")
    s = encode(nlp, ["a", "b"], ["DET", "NOUN"])
    feats = FirstOrderFeatures(N_BUCKETS, 1, False)
    with pytest.raises(ValueError, match="weights"):
        feats.score(s, numpy.zeros(10, dtype="float32"))
    with pytest.raises(ValueError, match="invalid head"):
        feats.tree_features(s, numpy.array([-1, 1, 0], dtype="int32"))
    with pytest.raises(ValueError, match="tag rows"):
        FirstOrderFeatures(N_BUCKETS, 2, False).score(s, numpy.zeros(N_BUCKETS, dtype="float32"))
