"""Encoding a batch of docs at once (``SentenceEncoder.encode_docs``, what
``mst_parser`` does for every batch it parses) against a reference encoding
built token by token, and the pipe's parses of a batch against each doc
parsed alone."""
import numpy
import pytest
import spacy
from spacy.strings import get_string_id
from spacy.tokens import Doc
from spacy.training import Example

from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.corpus.readers import gold_annotated_doc
from spacy_mstparse.features.doc_arrays import SentenceEncoder
from spacy_mstparse.features.first_order import FirstOrderFeatures
from spacy_mstparse.features.sentence import ROOT_TAG, ROOT_WORD, Sentence

WORDS = [
    ("The extraordinarily lazy dogs slept .".split(),
     ["DET", "ADV", "ADJ", "NOUN", "VERB", "PUNCT"],
     ["Definite=Def", "", "Degree=Pos", "Number=Plur", "Tense=Past|VerbForm=Fin", ""]),
    ("Cats purr".split(), ["NOUN", "VERB"], ["Number=Plur", "Number=Plur|Person=3"]),
    ([], [], []),
    ("Wonderful !".split(), ["ADJ", "PUNCT"], ["Degree=Pos", ""]),
]


def make_docs(vocab):
    return [Doc(vocab, words=w, pos=p, tags=[t + "x" for t in p], morphs=m,
                lemmas=[x.lower() for x in w]) for w, p, m in WORDS]


def reference(doc, start, end, use_morph):
    """The Sentence of doc[start:end] built token by token."""
    n = end - start
    tokens = list(doc[start:end])
    long = [len(t.lower_) > 5 for t in tokens]
    prefixes = [get_string_id("<pre>" + t.lower_[:5]) if x else 0 for t, x in zip(tokens, long)]
    tags = numpy.array([[ROOT_TAG] + [t.pos for t in tokens],
                        [ROOT_TAG] + [t.tag for t in tokens]], dtype="uint64")
    morph, starts = [], [0, 0]
    for t in tokens:
        if use_morph:
            morph += [get_string_id(f) for f in str(t.morph).split("|") if f]
        starts.append(len(morph))
    return Sentence(numpy.array([ROOT_WORD] + [t.lower for t in tokens], dtype="uint64"),
                    numpy.array([0] + prefixes, dtype="uint64"),
                    numpy.array([0] + long, dtype="int8"), tags,
                    numpy.array(starts, dtype="int32"), numpy.array(morph, dtype="uint64"))


def all_arc_features(features, s):
    """Every bucket id of every arc (reads words, prefixes, tags and FEATS)."""
    return [features.arc_features(s, h, c).tolist()
            for h in range(s.n + 1) for c in range(1, s.n + 1) if h != c]


@pytest.mark.parametrize("use_morph", [False, True])
def test_batch_encoding_equals_the_token_by_token_reference(use_morph):
    nlp = spacy.blank("en")
    docs = make_docs(nlp.vocab)
    bounds = [[(0, 4), (4, 6)], [(0, 2)], [], [(0, 1), (1, 2)]]
    encoder = SentenceEncoder(nlp.vocab, "both", use_morph)
    batch = encoder.encode_docs(list(zip(docs, bounds)))
    assert [len(x) for x in batch] == [len(b) for b in bounds]
    features = FirstOrderFeatures(2**20, 2, use_morph, True)
    for doc, doc_bounds, got in zip(docs, bounds, batch):
        alone = encoder.encode(doc, doc_bounds)
        for (start, end), s, single in zip(doc_bounds, got, alone):
            ref = reference(doc, start, end, use_morph)
            assert s.n == end - start
            assert s.key() == ref.key() == single.key()
            for t in range(2):
                assert s.tag_values(t).tolist() == ref.tag_values(t).tolist()
            assert all_arc_features(features, s) == all_arc_features(features, ref)
    assert encoder.encode_docs([]) == []
    assert encoder.encode_docs([(docs[2], [])]) == [[]]


def test_lemmas_are_read_per_batch_as_per_doc():
    nlp = spacy.blank("en")
    docs = make_docs(nlp.vocab)
    docs[0][3].lemma_ = "dog"
    encoder = SentenceEncoder(nlp.vocab, "both", False, lemma=True)
    features = FirstOrderFeatures(2**20, 2, False, True)
    items = [(doc, [(0, len(doc))]) for doc in docs if len(doc)]
    batch = encoder.encode_docs(items)
    for (doc, bounds), got in zip(items, batch):
        alone = SentenceEncoder(nlp.vocab, "both", False, lemma=True).encode(doc, bounds)[0]
        assert all_arc_features(features, got[0]) == all_arc_features(features, alone)
    # the lemma stands in for the prefix of "dogs" only
    plain = SentenceEncoder(nlp.vocab, "both", False).encode_docs(items)
    assert all_arc_features(features, plain[1][0]) == all_arc_features(features, batch[1][0])
    assert all_arc_features(features, plain[0][0]) != all_arc_features(features, batch[0][0])


def test_pipe_parses_a_batch_as_each_doc_alone(trained_pipeline, sample_dev):
    nlp = spacy.load(trained_pipeline, config={"components": {"mst_parser": {
        "max_sentence_length": 12}}})    # some sentences are cut into chunks
    docs = []
    for ref in read_conllu(sample_dev, nlp.vocab):
        docs.append(gold_annotated_doc(Example(ref.copy(), ref)))
        if len(docs) == 12:
            break
    docs.insert(3, Doc(nlp.vocab, words=[]))
    parser = nlp.get_pipe("mst_parser")

    def parsed(doc):
        return [(t.head.i, t.dep_) for t in doc]

    alone = [parsed(parser(doc.copy())) for doc in docs]
    batch = [parsed(doc) for doc in parser.pipe([doc.copy() for doc in docs], batch_size=8)]
    assert batch == alone
    assert any(len(doc) > 12 for doc in docs) and any(x for x in alone)
