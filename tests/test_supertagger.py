"""Dependency supertags (``features.supertags``), the ``mst_supertagger``
component that predicts them, and ``mst_parser`` reading them as a tag row
(``features.supertags = true``)."""
import random
import warnings

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_mstparse.components.supertagger import Supertagger, gold_supertags, score_supertags
from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.features.doc_arrays import SUPERTAG_ATTR, SentenceEncoder
from spacy_mstparse.features.supertags import supertags

WORDS = "The cat sat on the mat .".split()
HEADS = [1, 2, 2, 5, 5, 2, 2]
DEPS = ["det", "nsubj", "root", "case", "det", "obl", "punct"]
POS = ["DET", "NOUN", "VERB", "ADP", "DET", "NOUN", "PUNCT"]
SUPER = {"features": {"@mst_features": "spacy_mstparse.GraphFeatures.v1",
                      "tag_columns": "upos", "supertags": True, "n_buckets": 2**16}}


def test_supertags_hand_computed():
    assert supertags(HEADS, DEPS) == [
        "det/R", "nsubj/Rl", "root/ROOTlr", "case/R", "det/R", "obl/Ll", "punct/L"]


def test_unknown_heads_give_none_and_do_not_count_as_dependents():
    heads = [1, 2, 2, None, 5, 2, 2]   # "on" has no head: "mat" keeps its left dependent "the"
    deps = ["det", "nsubj", "root", None, "det", "obl", ""]
    assert supertags(heads, deps) == ["det/R", "nsubj/Rl", "root/ROOTlr", None, "det/R",
                                      "obl/Ll", None]
    heads = [1, 2, 2, 5, None, 2, 2]   # now "mat"'s only left dependent is "on"
    assert supertags(heads, DEPS)[5] == "obl/Ll"
    assert supertags([None, 1], ["x", "root"]) == [None, "root/ROOT"]   # no "l": 0 has no head


def test_supertags_agree_with_spacy_tree_on_treebank_sentences(sample_dev):
    """Direction and valence flags against spaCy's own tree API (head,
    lefts, rights) on every sentence of the sample."""
    for doc in read_conllu(sample_dev, spacy.blank("en").vocab):
        tags = supertags([t.head.i for t in doc], [t.dep_ for t in doc])
        for token, tag in zip(doc, tags):
            label, shape = tag.rsplit("/", 1)
            direction = ("ROOT" if token.head.i == token.i
                         else "L" if token.head.i < token.i else "R")
            flags = "l" * (next(token.lefts, None) is not None) + \
                    "r" * (next(token.rights, None) is not None)
            assert (label, shape) == (token.dep_, direction + flags)


def test_supertag_input_errors():
    with pytest.raises(ValueError, match="differ in length"):
        supertags([0, 0], ["root"])
    with pytest.raises(ValueError, match="head 5 outside"):
        supertags([0, 5], ["root", "x"])


def test_encoder_reads_the_supertag_row_before_the_clusters():
    vocab = spacy.blank("en").vocab
    doc = Doc(vocab, words=WORDS, pos=POS)
    ids = numpy.array([vocab.strings.add(t) for t in supertags(HEADS, DEPS)], dtype="uint64")
    doc._.set(SUPERTAG_ATTR, ids)
    encoder = SentenceEncoder(vocab, "upos", supertags=True)
    assert encoder.n_tagsets == 2
    sentence = encoder.encode(doc, [(1, 6)])[0]
    assert sentence.tag_values(0)[1:].tolist() == [vocab.strings[p] for p in POS[1:6]]
    assert sentence.tag_values(1)[1:].tolist() == ids[1:6].tolist()
    # with clusters the cluster row stays last (the hybrid cluster pairs read the last row)
    from spacy_mstparse.features.clusters import ClusterTable
    clustered = SentenceEncoder(vocab, "upos", cluster_bits=2, supertags=True)
    clustered.clusters = ClusterTable(numpy.array([vocab.strings["cat"]], dtype="uint64"),
                                      numpy.array([0b111], dtype="uint64"))
    sentence = clustered.encode(doc, [(0, 7)])[0]
    assert sentence.n_tagsets == 3
    assert sentence.tag_values(1)[1:].tolist() == ids.tolist()
    assert sentence.tag_values(2)[2] != sentence.tag_values(2)[1]   # "cat" has a cluster
    # a doc without supertags encodes the row as 0
    bare = Doc(vocab, words=WORDS, pos=POS)
    assert encoder.encode(bare, [(0, 7)])[0].tag_values(1)[1:].tolist() == [0] * 7
    doc._.set(SUPERTAG_ATTR, ids[:3])
    with pytest.raises(ValueError, match="3 entries for 7 tokens"):
        encoder.encode(doc, [(0, 7)])


def _examples(nlp, path, n):
    refs = [doc for _, doc in zip(range(n), read_conllu(path, nlp.vocab))]
    return [Example(Doc(nlp.vocab, words=[t.text for t in ref],
                        spaces=[bool(t.whitespace_) for t in ref], pos=[t.pos_ for t in ref]), ref)
            for ref in refs]


@pytest.fixture(scope="module")
def supertagged(sample_train, sample_dev, tmp_path_factory):
    """tok2vec + mst_supertagger + mst_parser (reading UPOS and supertags),
    trained a few epochs with the supertagger annotating, saved (thinc's
    initial weights seeded too: the same run every time)."""
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec")
    nlp.add_pipe("mst_supertagger")
    nlp.add_pipe("mst_parser", config=SUPER)
    train = _examples(nlp, sample_train, 120)
    nlp.initialize(lambda: train)
    history = []
    for _ in range(5):
        losses = {}
        random.shuffle(train)
        for batch in spacy.util.minibatch(train, 8):
            nlp.update(batch, losses=losses, annotates=["tok2vec", "mst_supertagger"])
        history.append(losses["mst_supertagger"])
    path = tmp_path_factory.mktemp("supertagged") / "model"
    nlp.to_disk(path)
    return nlp, path, history, _examples(nlp, sample_dev, 60)


def test_supertagger_learns_the_reference_supertags(supertagged):
    nlp, _, history, dev = supertagged
    tagger = nlp.get_pipe("mst_supertagger")
    assert isinstance(tagger, Supertagger)
    assert history[-1] < 0.5 * history[0]
    train_tags = {tag for eg in dev for tag in gold_supertags(eg) if tag}
    assert set(tagger.labels) & train_tags
    scores = nlp.evaluate(dev)
    assert 0.3 < scores["supertag_acc"] <= 1.0
    assert scores["dep_uas"] > 0.5
    doc = nlp(Doc(nlp.vocab, words=WORDS, pos=POS))
    assert all(t._.supertag in tagger.labels for t in doc)
    assert doc._.get(SUPERTAG_ATTR).dtype == numpy.uint64
    assert doc[0].tag_ == ""   # the supertagger leaves token.tag alone


def test_supertag_scorer_counts_tokens_with_a_gold_supertag(supertagged):
    nlp, _, _, dev = supertagged
    examples = [Example(nlp(eg.predicted.copy()), eg.reference) for eg in dev[:5]]
    right = total = 0
    for eg in examples:
        for token, gold in zip(eg.predicted, gold_supertags(eg)):
            total += gold is not None
            right += gold is not None and token._.supertag == gold
    assert score_supertags(examples)["supertag_acc"] == pytest.approx(right / total)
    assert score_supertags([])["supertag_acc"] is None


def test_supertagged_pipeline_round_trips(supertagged):
    nlp, path, _, dev = supertagged
    loaded = spacy.load(path)
    for eg in dev[:10]:
        a, b = nlp(eg.predicted.copy()), loaded(eg.predicted.copy())
        assert [t._.supertag for t in a] == [t._.supertag for t in b]
        assert [(t.head.i, t.dep_) for t in a] == [(t.head.i, t.dep_) for t in b]
    assert loaded.get_pipe("mst_parser").features.supertags


def test_parser_reads_the_supertags(supertagged):
    """Changing the supertags changes the arc scores the parser decodes."""
    nlp, _, _, _ = supertagged
    parser = nlp.get_pipe("mst_parser")
    doc = nlp(Doc(nlp.vocab, words=WORDS, pos=POS))
    first = parser.encoder.encode(doc, [(0, len(doc))])[0]
    arc = parser.graph.scores(first).arc
    doc._.set(SUPERTAG_ATTR, doc._.get(SUPERTAG_ATTR)[::-1].copy())
    second = parser.encoder.encode(doc, [(0, len(doc))])[0]
    assert not numpy.allclose(arc, parser.graph.scores(second).arc)


def test_parser_warns_without_a_supertagger(supertagged):
    nlp, path, _, _ = supertagged
    bare = spacy.load(path, exclude=["mst_supertagger"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        doc = bare(Doc(bare.vocab, words=WORDS, pos=POS))
    assert any("no supertags (doc._.supertag_ids)" in str(w.message) and "mst_supertagger"
               in str(w.message) for w in caught)
    assert sum(t.head.i == t.i for t in doc) >= 1   # still parses


def test_supertagger_needs_parsed_training_data():
    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec")
    nlp.add_pipe("mst_supertagger")
    unparsed = [Example(Doc(nlp.vocab, words=WORDS), Doc(nlp.vocab, words=WORDS))]
    with pytest.raises(ValueError, match="no supertags in the training examples"):
        nlp.initialize(lambda: unparsed)


def test_too_many_tag_columns_is_a_config_error():
    from spacy_mstparse.features.config import FeatureConfig
    with pytest.raises(ValueError, match="makes 4 tag columns.*tag_columns = \"upos\""):
        FeatureConfig("both", False, 2**16, cluster_bits=6, supertags=True)
    assert FeatureConfig("upos", False, 2**16, cluster_bits=6, supertags=True).n_tagsets == 3
    assert FeatureConfig("both", False, 2**16, supertags=True).n_tagsets == 3
