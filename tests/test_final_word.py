"""The final-word rule (``graph/final_word.pyx``): the tags it learns
against a hand count of training trees, what it does to every tree of up to
six words (against the rule written out in Python), that the batch parse,
``GraphModel.parse`` and ``analyse`` agree, and the pipe's setting, saving
and runtime switch."""
import itertools

import numpy as np
import pytest
import spacy
import srsly

from conftest import encode_sentences
from spacy_mstparse.components.serialization import ModelDataError
from spacy_mstparse.decoders.trees import is_projective, is_valid_tree
from spacy_mstparse.features.sentence import Sentence
from spacy_mstparse.graph.analysis import analyse
from spacy_mstparse.graph.final_word import MIN_SENTENCES, MIN_SHARE, attach_final, fit_final_tags

PUNCT, VERB, NOUN = 7, 8, 9


def sentence(tags):
    """A Sentence of len(tags) words with these tag ids (root tag 1)."""
    n = len(tags)
    return Sentence(np.arange(n + 1, dtype="uint64"), np.zeros(n + 1, "uint64"),
                    np.zeros(n + 1, "int8"), np.array([[1] + list(tags)], dtype="uint64"),
                    np.zeros(n + 2, "int32"), np.zeros(0, "uint64"))


def trees(n):
    """Every head array (entry 0 = -1) of a single-rooted tree over n words."""
    for heads in itertools.product(range(n + 1), repeat=n):
        h = [-1, *heads]
        if all(h[c] != c for c in range(1, n + 1)) and is_valid_tree(h):
            yield np.array(h, dtype="int32")


def expected(heads, tags, rule, arc=None):
    """The rule written out: the final word moves to the root word when its
    tag is a rule tag, it heads no word, is not the root word itself and the
    arc from the root word is not -inf."""
    n = len(heads) - 1
    out = heads.copy()
    root = int(np.flatnonzero(heads[1:] == 0)[0]) + 1
    allowed = arc is None or arc[root, n] > -np.inf
    if n >= 2 and tags[n - 1] in rule and n not in heads[1:] and root != n and allowed:
        out[n] = root
    return out


def test_rule_tags_match_a_hand_count():
    # PUNCT ends 25 sentences, 24 of them attached to the root word (96%);
    # NOUN ends 30, 27 attached to the root word (90%); VERB ends 5 (too few)
    items = []
    for k in range(25):
        items.append((sentence([NOUN, VERB, PUNCT]), [-1, 2, 0, 2 if k else 1]))
    for k in range(30):
        items.append((sentence([VERB, NOUN, NOUN]), [-1, 0, 1, 1 if k >= 3 else 2]))
    items += [(sentence([NOUN, VERB, VERB]), [-1, 2, 0, 2])] * 5
    assert 24 / 25 >= MIN_SHARE > 27 / 30 and 5 < MIN_SENTENCES <= 25
    np.testing.assert_array_equal(fit_final_tags(items), [PUNCT])
    np.testing.assert_array_equal(fit_final_tags(items, min_share=0.9), [PUNCT, NOUN])
    np.testing.assert_array_equal(fit_final_tags(items, min_sentences=5, min_share=0.9),
                                  [PUNCT, VERB, NOUN])
    # unknown final heads, several roots and one-word sentences are not counted
    skipped = [(sentence([NOUN, PUNCT]), [-1, 0, -1]), (sentence([NOUN, PUNCT]), [-1, 0, 0]),
               (sentence([PUNCT]), [-1, 0])] * 30
    assert len(fit_final_tags(skipped)) == 0


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_every_tree_gets_the_rule_and_stays_a_tree(n):
    rule = np.array([PUNCT], dtype="uint64")
    for tags in ([NOUN] * (n - 1) + [PUNCT], [PUNCT] * n, [NOUN] * n):
        s = sentence(tags)
        for heads in trees(n):
            got = attach_final(s, heads, rule)
            np.testing.assert_array_equal(got, expected(heads, tags, rule))
            assert is_valid_tree(got)
            if is_projective(heads):
                assert is_projective(got)
            # no rule tags: nothing changes
            np.testing.assert_array_equal(attach_final(s, heads, rule[:0]), heads)
            # an arc from the root word ruled out (-inf): nothing changes
            root = int(np.flatnonzero(heads[1:] == 0)[0]) + 1
            arc = np.zeros((n + 1, n + 1), dtype="float32")
            arc[root, n] = -np.inf
            np.testing.assert_array_equal(attach_final(s, heads, rule, arc), heads)


@pytest.fixture(scope="module")
def model_and_sentences(trained_pipeline, sample_dev):
    nlp = spacy.load(trained_pipeline)
    graph = nlp.get_pipe("mst_parser").graph
    return graph, [s for s, _, _ in encode_sentences(sample_dev, 80)[0]]


def test_batch_parse_parse_and_analyse_agree_under_the_rule(model_and_sentences):
    graph, sentences = model_and_sentences
    assert len(graph.final_tags)   # the sample's final punctuation attaches to the root word
    punct = graph.final_tags
    moved = 0
    for s, (heads, labels) in zip(sentences, graph.parse_batch(sentences)):
        one_heads, one_labels = graph.parse(s)
        np.testing.assert_array_equal(heads, one_heads)
        np.testing.assert_array_equal(labels, one_labels)
        np.testing.assert_array_equal(heads, analyse(graph, s).trees[0].heads)
        factors = graph.scores(s)
        plain = graph.decode(factors)[0]
        np.testing.assert_array_equal(
            heads, expected(plain, list(s.tag_values(0)[1:]), punct, factors.arc))
        moved += int((heads != plain).any())
    assert moved > 0
    graph.final_to_root = False
    try:
        for s, (heads, _) in zip(sentences, graph.parse_batch(sentences)):
            np.testing.assert_array_equal(heads, graph.decode(graph.scores(s))[0])
    finally:
        graph.final_to_root = True


def test_the_pipe_saves_the_rule_and_switches_it_off_at_load_time(trained_pipeline):
    nlp = spacy.load(trained_pipeline)
    parser = nlp.get_pipe("mst_parser")
    assert parser.cfg["final_to_root"] and parser.cfg["final_tags"]
    again = spacy.blank("en").add_pipe("mst_parser").from_bytes(parser.to_bytes())
    np.testing.assert_array_equal(again.graph.final_tags, parser.graph.final_tags)
    off = spacy.load(trained_pipeline, config={"components": {"mst_parser": {
        "final_to_root": False}}})
    off_parser = off.get_pipe("mst_parser")
    off_parser.prediction_weights()
    assert not off_parser.graph.final_to_root
    assert len(off_parser.graph.prediction_final_tags) == 0
    np.testing.assert_array_equal(off_parser.graph.final_tags, parser.graph.final_tags)


def test_a_damaged_rule_in_the_saved_cfg_is_refused(trained_pipeline):
    parser = spacy.load(trained_pipeline).get_pipe("mst_parser")
    parts = srsly.msgpack_loads(parser.to_bytes())
    cfg = srsly.json_loads(parts["cfg"])
    cfg["final_tags"] = ["PUNCT"]
    parts["cfg"] = srsly.json_dumps(cfg).encode("utf8")
    with pytest.raises(ModelDataError, match=r"cfg.*final_tags must be a list of tag ids"):
        spacy.blank("en").add_pipe("mst_parser").from_bytes(srsly.msgpack_dumps(parts))
