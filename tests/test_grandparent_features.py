"""Grandparent features (order 3): hand-computed ids of one factor, the
scorer against explicit feature sums, tree features and tree scores
against the decoder's count, and mst_parser with ``order = 3``."""
import numpy
import pytest
import spacy
from spacy.strings import get_string_id
from test_mst_parser import SAMPLE, examples_from, new_parser, train
from test_mst_parser_second_order import dev_scores, heads_of
from test_second_order_features import encode

from spacy_mstparse.decoders import is_projective, is_valid_tree
from spacy_mstparse.features.config import FeatureConfig
from spacy_mstparse.features.grandparent import GrandparentFeatures
from spacy_mstparse.features.hashing import py_mix as mix
from spacy_mstparse.graph.model import GraphModel
from spacy_mstparse.registry import make_graph_features

N_BUCKETS = 2**20
# Template ids as documented in templates.pxd (tag column 0).
TRIP, GC, GWC, GCW, GHW, HPCW, WW = 301, 302, 303, 304, 305, 306, 350


def mix3(a, b, c):
    return mix(mix(a, b), c)


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def test_hand_computed_grandparent_features(nlp):
    # "She gave him books", the factor (g = She, h = gave, c = books)
    s = encode(nlp, ["She", "gave", "him", "books"], ["PRON", "VERB", "PRON", "NOUN"])
    feats = GrandparentFeatures(N_BUCKETS, 1)
    VERB, PRON, NOUN = (nlp.vocab.strings[x] for x in ("VERB", "PRON", "NOUN"))
    she, gave, books = get_string_id("she"), get_string_id("gave"), get_string_id("books")
    # factor (g=1 She, h=2 gave, c=4 books): g -> h right, h -> c right: pattern 4;
    # distance gave..books = 2 -> bin 1, right: 1 + 7 = 8; 5 + 14 * 3 + 8 = 55
    pattern, pattern_dist = 4, 55
    bases = [
        mix(mix3(TRIP, PRON, VERB), NOUN), mix3(GC, PRON, NOUN), mix3(GWC, she, NOUN),
        mix3(GCW, PRON, books), mix(mix3(GHW, PRON, gave), NOUN),
        mix(mix3(HPCW, PRON, VERB), books), mix3(WW, she, books),
    ]
    expected = sorted([mix(b, pattern) % N_BUCKETS for b in bases]
                      + [mix(b, pattern_dist) % N_BUCKETS for b in bases])
    assert sorted(feats.factor_features(s, 1, 2, 4).tolist()) == expected
    # g = 4 (right of h), c = 1 (left of h): pattern 1 + 0 + 0 = 1
    assert feats.factor_features(s, 4, 2, 1)[0] == mix(mix(mix3(TRIP, NOUN, VERB), PRON), 1) % N_BUCKETS
    with pytest.raises(ValueError):
        feats.factor_features(s, 2, 2, 3)


@pytest.mark.parametrize("columns", ["upos", "both"])
def test_grandparent_scores_are_feature_sums(nlp, columns):
    s = encode(nlp, ["a", "big", "dog", "barked", "at", "cats"],
               ["DET", "ADJ", "NOUN", "VERB", "ADP", "NOUN"], columns)
    feats = GrandparentFeatures(N_BUCKETS, s.n_tagsets)
    w = numpy.random.RandomState(0).randn(N_BUCKETS).astype("float32")
    grand = feats.score(s, w, 0.5)
    N = s.n + 1
    for g in range(N):
        for h in range(1, N):
            for c in range(1, N):
                if len({g, h, c}) < 3:
                    assert grand[g, h, c] == 0
                    continue
                expected = 0.5 * w[feats.factor_features(s, g, h, c)].astype("float64").sum()
                assert grand[g, h, c] == pytest.approx(expected, rel=1e-4, abs=1e-3)
    # with arc scores: triples over a -inf arc are skipped
    arc = numpy.zeros((N, N), dtype="float32")
    arc[2, 3] = -numpy.inf
    masked = feats.score(s, w, 0.5, arc)
    assert (masked[:, 2, 3] == 0).all() and (masked[2, 3, :] == 0).all()
    assert masked[1, 2, 4] == grand[1, 2, 4]


def test_order3_model_tree_score_is_weight_sum(nlp):
    """The score of the decoded tree under model.scores equals the sum of the
    weights of model.tree_features (arcs + siblings + grandparents)."""
    s = encode(nlp, ["a", "big", "dog", "barked", "at", "the", "small", "cats"],
               ["DET", "ADJ", "NOUN", "VERB", "ADP", "DET", "ADJ", "NOUN"], "both")
    features = make_graph_features(tag_columns="both", use_morph=False, n_buckets=N_BUCKETS,
                                   direction_backoff=False, lemma=False)
    model = GraphModel(features, order=3, decoder="eisner")
    w = numpy.random.RandomState(1).randn(N_BUCKETS).astype("float32")
    factors = model.scores(s, w)
    assert factors.order == 3
    heads = model.decode(factors)[0]
    assert is_valid_tree(heads) and is_projective(heads)
    expected = w[model.tree_features(s, heads)].astype("float64").sum()
    assert factors.tree_score(heads) == pytest.approx(expected, rel=1e-4, abs=1e-3)
    trees = model.decode(factors, k=4)
    assert numpy.array_equal(trees[0], heads) and 1 <= len(trees) <= 4
    scores = [factors.tree_score(t) for t in trees]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.slow
def test_third_order_trains_parses_and_saves(tmp_path):
    nlp = spacy.blank("en")
    train_eg = examples_from(SAMPLE / "train.conllu", nlp, 300)
    dev = examples_from(SAMPLE / "dev.conllu", nlp, 100)
    nlp, parser, examples = new_parser({"order": 3, "decoder": "auto"}, train_eg)
    assert parser.order == 3 and parser.decoder == "eisner"
    history = train(parser, examples, 3)
    assert history[0] > history[2], history
    docs, scores = dev_scores(nlp, parser, dev)
    assert scores["dep_uas"] > 0.7, scores["dep_uas"]
    for doc in docs:
        for sent in doc.sents:
            heads = heads_of(sent.as_doc())
            assert is_valid_tree(heads, single_root=True) and is_projective(heads)
    nlp.to_disk(tmp_path / "o3")
    loaded = spacy.load(tmp_path / "o3")
    assert loaded.get_pipe("mst_parser").order == 3
    again, _ = dev_scores(loaded, loaded.get_pipe("mst_parser"), dev[:40])
    for a, b in zip(docs[:40], again):
        assert [t.head.i for t in a] == [t.head.i for t in b]
        assert [t.dep_ for t in a] == [t.dep_ for t in b]
