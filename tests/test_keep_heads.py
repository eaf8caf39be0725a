"""Arc pruning as a setting (``keep_heads``): its check, that keeping every
head changes no parse, and that the sibling and stop factors skipped under
pruning are exactly those no tree can use (second-order Eisner on the
skipped scores = brute force over all projective trees on the full ones)."""
import itertools

import numpy as np
import pytest
import spacy
from spacy.training import Example

from spacy_mstparse.components.mst_parser import MSTParser
from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.corpus.readers import gold_annotated_doc
from spacy_mstparse.decoders.dispatch import Factors, decode
from spacy_mstparse.decoders.pruning import prune
from spacy_mstparse.decoders.trees import is_projective, is_valid_tree
from spacy_mstparse.features.config import FeatureConfig
from spacy_mstparse.features.doc_arrays import SentenceEncoder
from spacy_mstparse.graph import GraphModel
from spacy_mstparse.pipeline_input import make_input_docs
from test_batch_parse import sentences  # noqa: F401  (fixture: encoded dev sentences)

N_BUCKETS = 2**14


@pytest.fixture(scope="module")
def short_sentences(sample_dev):
    """The first 3 to 5 words of sample sentences, as sentences of their own."""
    nlp = spacy.blank("en")
    encoder = SentenceEncoder(nlp.vocab, "both", False)
    out = []
    for i, ref in enumerate(read_conllu(sample_dev, nlp.vocab)):
        doc = gold_annotated_doc(Example(ref.copy(), ref))
        if len(doc) >= 5:
            out.append(encoder.encode(doc, [(0, 3 + i % 3)])[0])
        if len(out) == 6:
            break
    return out


def stop_model(seed=0):
    """Order 2 with stop factors, sparse random weights (as a trained table)."""
    rng = np.random.default_rng(seed)
    features = FeatureConfig("both", False, N_BUCKETS, True, sibling_stops=True)
    model = GraphModel(features, order=2, decoder="eisner", labels=["root", "dep", "punct"],
                       root_label="root", label_buckets=2**8)
    arc = rng.normal(size=N_BUCKETS).astype("float32") * (rng.random(N_BUCKETS) < 0.3)
    model.set_weights(arc, rng.normal(size=model.n_label_weights).astype("float32"))
    return model


@pytest.mark.parametrize("bad", [-1, 2.5, True, "3"])
def test_keep_heads_must_be_a_count(bad):
    with pytest.raises(ValueError, match=r"\[mst_parser\] keep_heads = .* is not an integer >= 0"):
        MSTParser(spacy.blank("en").vocab, keep_heads=bad)


def test_keep_heads_is_a_factory_setting_checked_at_add_pipe():
    with pytest.raises(ValueError, match="keep_heads"):
        spacy.blank("en").add_pipe("mst_parser", config={"keep_heads": -2})


@pytest.mark.parametrize("quantized", [False, True])
def test_keeping_every_head_changes_no_parse(sentences, quantized):
    model = stop_model()
    model.quantize_weights = quantized
    unpruned = model.parse_batch(sentences)
    longest = max(s.n for s in sentences)
    for keep in (longest, longest + 7):
        model.keep_heads = keep
        for (h0, l0), (h1, l1) in zip(unpruned, model.parse_batch(sentences, 2)):
            np.testing.assert_array_equal(h0, h1)
            np.testing.assert_array_equal(l0, l1)


def test_pruned_parses_are_trees_that_use_kept_arcs_only(sentences):
    model = stop_model(1)
    model.keep_heads = 2
    for s, (heads, _) in zip(sentences, model.parse_batch(sentences)):
        arc = model.scores(s).arc
        assert is_valid_tree(heads)
        assert all(np.isfinite(arc[heads[c], c]) for c in range(1, s.n + 1))


def test_skipped_sibling_factors_are_those_no_tree_uses(short_sentences):
    """Second-order Eisner over pruned arcs with the sibling / stop scores the
    pruning skips finds the best projective tree under the full scores."""
    model = stop_model(2)
    w = model.arc_weights
    checked = 0
    for s in short_sentences:
        arc = prune(model.first_order.score(s, w), 2)
        full = Factors(arc, model.sibling.score(s, w))
        skipped = Factors(arc, model.sibling.score(s, w, 1.0, arc))
        # cells of factors with a pruned arc h -> c or h -> sib are left 0
        n1 = s.n + 1
        for h, sib, c in itertools.product(range(n1), range(n1), range(1, n1)):
            if c != h and min(h, c) < sib < max(h, c) and not np.isfinite(arc[h, sib]):
                assert skipped.sib[h, sib, c] == 0.0
        best = max(
            (full.tree_score(np.array([-1, *heads], dtype="int32")), [-1, *heads])
            for heads in itertools.product(range(n1), repeat=s.n)
            if is_valid_tree([-1, *heads]) and is_projective([-1, *heads])
            and all(np.isfinite(arc[h, c]) for c, h in enumerate(heads, 1)))
        got = decode("eisner", skipped)[0]
        assert full.tree_score(got) == pytest.approx(best[0], rel=1e-5, abs=1e-4)
        checked += 1
    assert checked == 6


def test_the_component_predicts_with_its_keep_heads(trained_pipeline, sample_dev):
    base = spacy.load(trained_pipeline)
    gold = list(read_conllu(sample_dev, base.vocab))[:20]
    parses = {}
    for keep in (0, 1000, 1):
        nlp = spacy.load(trained_pipeline,
                         config={"components": {"mst_parser": {"keep_heads": keep}}})
        parser = nlp.get_pipe("mst_parser")
        docs = list(parser.pipe(make_input_docs(gold, nlp.vocab, gold_tags=True)))
        assert parser.graph.keep_heads == keep
        parses[keep] = [[t.head.i for t in d] for d in docs]
    assert parses[1000] == parses[0]
    assert parses[1] != parses[0]


def test_pruning_leaves_probabilities_and_n_best_lists_alone(sentences):
    from spacy_mstparse.graph.analysis import analyse

    model = stop_model(3)
    unpruned = [analyse(model, s, n_best=2, probabilities=True) for s in sentences[:8]]
    model.keep_heads = 1
    for s, want in zip(sentences[:8], unpruned):
        got = analyse(model, s, n_best=2, probabilities=True)
        assert len(got.trees) == len(want.trees)
        for tree, wanted in zip(got.trees, want.trees):
            np.testing.assert_array_equal(tree.heads, wanted.heads)
        np.testing.assert_allclose(got.head_probs, want.head_probs)
