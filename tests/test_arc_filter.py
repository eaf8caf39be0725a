"""The arc filter (``features/arc_filter.pyx``): the limits it learns
against a hand count of the training trees, that every training arc stays
allowed, that filtered scoring equals full scoring on the allowed arcs (and
-inf elsewhere), that every filtered matrix still holds a tree, and the
pipe's setting, saving and damaged-file error."""
import pickle

import numpy as np
import pytest
import spacy
import srsly
from spacy.tokens import Doc
from spacy.training import Example

from conftest import encode_sentences
from spacy_mstparse.components.serialization import ModelDataError, dump_arrays
from spacy_mstparse.decoders.dispatch import Factors, decode
from spacy_mstparse.decoders.trees import is_valid_tree
from spacy_mstparse.features.arc_filter import SLACK, ArcFilter
from spacy_mstparse.features.config import FeatureConfig
from spacy_mstparse.graph import GraphModel

N_BUCKETS = 2**14


def distance_bin(h, c):
    d = abs(h - c)
    return d - 1 if d <= 5 else (5 if d <= 10 else 6)


def expected_allowed(train, s):
    """The filter's rule, written out: the longest bin of each (head tag,
    child tag, direction) in ``train``, plus SLACK; the left neighbour always."""
    longest = {}
    for t, heads, _ in train:
        tags = t.tag_values(0)
        for c in range(1, t.n + 1):
            key = (int(tags[heads[c]]), int(tags[c]), c > heads[c])
            longest[key] = max(longest.get(key, -1), distance_bin(heads[c], c))
    seen = {int(tag) for t, _, _ in train for tag in t.tag_values(0)}
    tags = s.tag_values(0)
    out = np.zeros((s.n + 1, s.n + 1), dtype=bool)
    for h in range(s.n + 1):
        for c in range(1, s.n + 1):
            if h == c:
                continue
            key = (int(tags[h]), int(tags[c]), c > h)
            unknown = key[0] not in seen or key[1] not in seen
            out[h, c] = (h == c - 1 or unknown
                         or distance_bin(h, c) <= longest.get(key, -1) + SLACK)
    return out


@pytest.fixture(scope="module")
def data(sample_train):
    return encode_sentences(sample_train, 120)[0]


def test_limits_match_a_hand_count_of_the_training_trees(data):
    train, held_out = data[:80], data[80:]
    f = ArcFilter.fit((s, heads) for s, heads, _ in train)
    assert 0 < f.n_tags <= 20          # UPOS and the root's tag
    for s, _, _ in train[:10] + held_out:
        np.testing.assert_array_equal(f.allowed(s), expected_allowed(train, s))
    # every training arc allowed, and the filter does rule arcs out
    assert all(f.allowed(s)[heads[1:], np.arange(1, s.n + 1)].all() for s, heads, _ in train)
    assert sum((~f.allowed(s)).sum() - s.n - 1 for s, _, _ in held_out) > 0


def test_unknown_heads_are_skipped_and_an_empty_filter_allows_everything(data):
    s, heads, _ = data[0]
    unknown = np.full_like(heads, -1)
    f = ArcFilter.fit([(s, unknown)])
    off_diagonal = ~np.eye(s.n + 1, dtype=bool)
    off_diagonal[:, 0] = False
    np.testing.assert_array_equal(f.allowed(s)[off_diagonal] | (f.n_tags > 0), True)
    np.testing.assert_array_equal(ArcFilter.unlimited().allowed(s), off_diagonal)


def test_damaged_arrays_are_refused():
    with pytest.raises(ValueError, match="do not match"):
        ArcFilter(np.array([1, 2], "uint64"), np.zeros((2, 2, 2), "uint8"))
    with pytest.raises(ValueError, match="sorted and unique"):
        ArcFilter(np.array([2, 1], "uint64"), np.zeros((3, 3, 2), "uint8"))


@pytest.mark.parametrize("order,keep,quantized", [(1, 0, False), (1, 3, True), (2, 0, False),
                                                   (2, 4, True)])
def test_filtered_scores_are_the_full_scores_of_the_allowed_arcs(data, order, keep, quantized):
    rng = np.random.default_rng(order + keep)
    model = GraphModel(FeatureConfig("both", False, N_BUCKETS, True), order=order)
    arc = rng.normal(size=N_BUCKETS).astype("float32")
    model.set_weights(arc, np.zeros(0, "float32"))
    model.quantize_weights, model.keep_heads = quantized, keep
    train, held_out = data[:60], data[60:90]
    full = [model.scores(s) for s, _, _ in held_out]
    training = [model.scores(s, arc).arc for s, _, _ in held_out]   # weights given
    model.fit_arc_filter(train)
    copy = pickle.loads(pickle.dumps(model))
    n_ruled_out = 0
    for (s, _, _), before, trained in zip(held_out, full, training):
        allowed = model.arc_filter.allowed(s)
        for m in (model, copy):
            after = m.scores(s)
            if keep == 0:   # the same scores where allowed, -inf elsewhere
                np.testing.assert_array_equal(after.arc[allowed], before.arc[allowed])
            ruled_out = ~allowed & ~np.eye(s.n + 1, dtype=bool)
            ruled_out[:, 0] = False      # the root has no head
            n_ruled_out += ruled_out.sum()
            assert np.isneginf(after.arc[ruled_out]).all()
            # training (weights given) scores every arc
            np.testing.assert_array_equal(m.scores(s, arc).arc, trained)
            heads = decode(model.decoder, Factors(after.arc, after.sib))[0]
            assert is_valid_tree(heads)
            assert allowed[heads[1:], np.arange(1, s.n + 1)].all()
    assert n_ruled_out > 0
    # the batch parser (C, threads) gives the same trees as scores + decode
    for (s, _, _), (heads, _) in zip(held_out, model.parse_batch([s for s, _, _ in held_out], 2)):
        np.testing.assert_array_equal(heads, decode(model.decoder, model.scores(s))[0])


def test_a_sentence_of_tags_never_seen_together_still_parses(data):
    """Only the left neighbours left for the arcs between known tags: the
    chain is still a tree."""
    s = max(data, key=lambda item: item[0].n)[0]
    tags = s.tag_values(0)
    f = ArcFilter(np.unique(tags), np.zeros((len(np.unique(tags)) + 1,) * 2 + (2,), "uint8"))
    allowed = f.allowed(s)
    assert allowed.sum() == s.n     # c-1 -> c for every word c
    model = GraphModel(FeatureConfig("both", False, N_BUCKETS, True))
    model.set_weights(np.ones(N_BUCKETS, "float32"), np.zeros(0, "float32"))
    model.set_arc_filter(f)
    np.testing.assert_array_equal(model.parse_batch([s])[0][0], np.arange(-1, s.n))


def test_the_pipe_fits_saves_and_loads_the_filter(trained_pipeline, tmp_path):
    nlp = spacy.load(trained_pipeline)
    parser = nlp.get_pipe("mst_parser")
    assert parser.cfg["filter_arcs"] and parser.graph.arc_filter is not None
    parts = srsly.msgpack_loads(parser.to_bytes())
    again = spacy.blank("en").add_pipe("mst_parser").from_bytes(parser.to_bytes())
    for key, value in parser.graph.arc_filter_arrays().items():
        np.testing.assert_array_equal(again.graph.arc_filter_arrays()[key], value)
    parts["arc_filter.npz"] = dump_arrays(tags=np.array([3, 1], "uint64"),
                                          limits=np.zeros((3, 3, 2), "uint8"))
    with pytest.raises(ModelDataError, match=r"arc_filter\.npz.*: arc filter tags must be sorted"):
        spacy.blank("en").add_pipe("mst_parser").from_bytes(srsly.msgpack_dumps(parts))


def test_filter_arcs_false_trains_without_a_filter():
    nlp = spacy.blank("en")
    config = {"filter_arcs": False, "features": {"n_buckets": 2**12}}
    parser = nlp.add_pipe("mst_parser", config=config)
    words, pos = ["She", "reads", "books"], ["PRON", "VERB", "NOUN"]
    ref = Doc(nlp.vocab, words=words, pos=pos, heads=[1, 1, 1], deps=["nsubj", "root", "obj"])
    nlp.initialize(lambda: [Example(Doc(nlp.vocab, words=words, pos=pos), ref)])
    assert parser.graph.arc_filter is None
    loaded = spacy.blank("en").add_pipe("mst_parser", config=config).from_bytes(parser.to_bytes())
    assert loaded.graph.arc_filter is None


def test_filter_arcs_false_at_load_time_scores_every_arc(trained_pipeline, sample_dev):
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.pipeline_input import make_input_docs

    off = spacy.load(trained_pipeline, config={"components": {"mst_parser": {
        "filter_arcs": False}}})
    on = spacy.load(trained_pipeline)
    unfiltered = spacy.load(trained_pipeline)
    unfiltered.get_pipe("mst_parser").graph.set_arc_filter(None)
    gold = list(read_conllu(sample_dev, on.vocab))[:60]
    heads = {}
    for name, nlp in (("off", off), ("on", on), ("none", unfiltered)):
        docs = nlp.get_pipe("mst_parser").pipe(make_input_docs(gold, nlp.vocab, gold_tags=True))
        heads[name] = [[t.head.i for t in doc] for doc in docs]
    assert heads["off"] == heads["none"]
    assert on.get_pipe("mst_parser").graph.filter_arcs and not off.get_pipe("mst_parser").graph.filter_arcs


def test_untagged_training_docs_get_the_rules_of_the_references_tags(sample_train):
    """In a pipeline whose taggers annotate the docs only in ``update`` (the
    tagged config), ``initialize`` sees untagged docs: the arc filter and the
    final-word rule are then those of the references' gold tags, and the
    labeler learns no label restrictions from tags it will not see."""
    from spacy_mstparse.corpus.conll import read_conllu

    fitted = {}
    for tagged in (True, False):
        nlp = spacy.blank("en")
        parser = nlp.add_pipe("mst_parser", config={"features": {"n_buckets": 2**12}})
        refs = list(read_conllu(sample_train, nlp.vocab))[:150]
        examples = [Example(Doc(nlp.vocab, words=[t.text for t in ref],
                                pos=[t.pos_ for t in ref] if tagged else None,
                                tags=[t.tag_ for t in ref] if tagged else None), ref)
                    for ref in refs]
        nlp.initialize(lambda: examples)
        fitted[tagged] = (parser.graph.arc_filter_arrays(), parser.graph.final_tags.tolist(),
                          parser.graph.restriction_arrays())
    (filter_t, final_t, restrict_t), (filter_u, final_u, restrict_u) = fitted[True], fitted[False]
    assert len(filter_t["tags"]) > 10 and final_t
    for key in filter_t:
        np.testing.assert_array_equal(filter_u[key], filter_t[key])
    assert final_u == final_t
    assert len(restrict_t["keys"]) > 10 and len(restrict_u["keys"]) == 0
