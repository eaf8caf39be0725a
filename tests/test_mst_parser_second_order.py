"""mst_parser with ``order = 2`` (sibling features, second-order decoding)
and with k-best MIRA: training, decoding, serialization."""
import numpy
import pytest
from spacy.tokens import Doc
from spacy.training import Example
from test_mst_parser import SAMPLE, examples_from, new_parser, train

from spacy_mstparse.decoders.trees import is_projective, is_valid_tree


@pytest.fixture(scope="module")
def data():
    import spacy

    nlp = spacy.blank("en")
    return (
        examples_from(SAMPLE / "train.conllu", nlp, 400),
        examples_from(SAMPLE / "dev.conllu", nlp, 200),
    )


def dev_scores(nlp, parser, dev):
    docs = [Doc(nlp.vocab).from_bytes(eg.predicted.to_bytes()) for eg in dev]
    docs = list(parser.pipe(docs))
    refs = [Doc(nlp.vocab).from_bytes(eg.reference.to_bytes()) for eg in dev]
    return docs, parser.score([Example(d, r) for d, r in zip(docs, refs)])


def heads_of(doc):
    heads = numpy.full(len(doc) + 1, -1, dtype="int32")
    for t in doc:
        heads[t.i + 1] = 0 if t.head.i == t.i else t.head.i + 1
    return heads


@pytest.mark.parametrize("decoder", ["eisner", "chu_liu_edmonds"])
def test_second_order_trains_and_parses(data, decoder, tmp_path):
    train_eg, dev = data
    nlp, parser, examples = new_parser({"order": 2, "decoder": decoder}, train_eg)
    assert parser.order == 2
    history = train(parser, examples, 3)
    assert history[0] > history[2], history
    docs, scores = dev_scores(nlp, parser, dev)
    assert scores["dep_uas"] > 0.7, scores["dep_uas"]
    for doc in docs:
        for sent in doc.sents:
            heads = heads_of(sent.as_doc())
            assert is_valid_tree(heads, single_root=True)
            if decoder == "eisner":
                assert is_projective(heads)
    # save / load: same parses, order kept
    nlp.to_disk(tmp_path / "o2")
    import spacy

    loaded = spacy.load(tmp_path / "o2")
    assert loaded.get_pipe("mst_parser").order == 2
    again, _ = dev_scores(loaded, loaded.get_pipe("mst_parser"), dev[:50])
    for a, b in zip(docs[:50], again):
        assert [t.head.i for t in a] == [t.head.i for t in b]
        assert [t.dep_ for t in a] == [t.dep_ for t in b]


def test_second_order_features_change_the_model(data):
    """Order 2 is not order 1 in disguise: the trained weights differ and the
    sibling scores of a sentence are not all zero."""
    train_eg, _ = data
    _, p1, ex1 = new_parser({"order": 1}, train_eg[:100])
    _, p2, ex2 = new_parser({"order": 2}, train_eg[:100])
    train(p1, ex1, 1)
    train(p2, ex2, 1)
    w1, _ = p1.prediction_weights()
    w2, _ = p2.prediction_weights()
    assert not numpy.array_equal(w1, w2)
    sentence = p2.encoder.encode(ex2[0].predicted, [(0, len(ex2[0].predicted))])[0]
    sib = p2.graph.scores(sentence, w2).sib
    assert sib is not None and numpy.abs(sib).sum() > 0


def test_k_best_mira_uses_k_trees(data, monkeypatch):
    train_eg, dev = data
    nlp, parser, examples = new_parser(
        {"learner": {"@mst_learners": "spacy_mstparse.MIRA.v1", "k": 5}}, train_eg
    )
    from spacy_mstparse.graph import training as graph_training

    seen = []
    original = graph_training.decode_for_training

    def spy(sentences, golds, model, weights, scale, k, *args):
        results = original(sentences, golds, model, weights, scale, k, *args)
        seen.extend((k, len(trees)) for trees, _, _ in results)
        return results

    monkeypatch.setattr(graph_training, "decode_for_training", spy)
    history = train(parser, examples, 3)
    assert history[0] > history[2]
    assert seen and all(k == 5 for k, _ in seen)
    assert max(n for _, n in seen) == 5
    monkeypatch.undo()
    _, scores = dev_scores(nlp, parser, dev)
    assert scores["dep_uas"] > 0.7


def test_invalid_order():
    with pytest.raises(ValueError, match="order.*4 is not one of 1, 2, 3"):
        new_parser({"order": 4})
    with pytest.raises(ValueError, match="projectively only"):
        new_parser({"order": 3, "decoder": "chu_liu_edmonds"})


STOP_FEATURES = {"@mst_features": "spacy_mstparse.GraphFeatures.v1",
                 "n_buckets": 2**20, "sibling_stops": True}


@pytest.mark.parametrize("decoder", ["eisner", "chu_liu_edmonds"])
def test_sibling_stops_train_score_and_load(data, decoder, tmp_path):
    """With ``sibling_stops`` the trained model fills the stop cells, a
    decoded tree's score is the weight sum of its features (stops included),
    and the setting is saved with the model."""
    from spacy_mstparse.decoders import second_order_tree_score

    train_eg, dev = data
    nlp, parser, examples = new_parser(
        {"order": 2, "decoder": decoder, "features": STOP_FEATURES}, train_eg)
    history = train(parser, examples, 3)
    assert history[0] > history[2], history
    docs, scores = dev_scores(nlp, parser, dev)
    assert scores["dep_uas"] > 0.7, scores["dep_uas"]
    graph = parser.graph
    assert graph.sibling.stops
    w, _ = parser.prediction_weights()
    for eg in examples[:20]:
        doc = eg.predicted
        sentence = parser.encoder.encode(doc, [(0, len(doc))])[0]
        factors = graph.scores(sentence, w)
        arc, sib = factors.arc, factors.sib
        n = len(doc)
        assert all(sib[h, h, h] != 0 and sib[h, 0, h] != 0 for h in range(1, n + 1))
        heads = graph.decode(factors, 1)[0]
        ids = graph.tree_features(sentence, heads).astype("int64")
        assert second_order_tree_score(arc, sib, heads) == pytest.approx(
            float(w[ids].astype("float64").sum()), rel=1e-4, abs=1e-3)
    nlp.to_disk(tmp_path / "stops")
    import spacy

    loaded = spacy.load(tmp_path / "stops")
    assert loaded.get_pipe("mst_parser").graph.sibling.stops
    again, _ = dev_scores(loaded, loaded.get_pipe("mst_parser"), dev[:50])
    for a, b in zip(docs[:50], again):
        assert [t.head.i for t in a] == [t.head.i for t in b]


def test_sibling_stops_need_the_sibling_model():
    with pytest.raises(ValueError, match="sibling_stops"):
        new_parser({"order": 1, "features": STOP_FEATURES})
