"""The root word's label: spaCy's ``ROOT`` on the Doc (as ``spacy convert``
and spaCy's own parser write it), UD's ``root`` in CoNLL-U; models saved
when the Doc said ``root`` still load and write ``ROOT`` on the Doc."""
from pathlib import Path

import numpy
import pytest
import spacy
import srsly
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.training.converters import conllu_to_docs

from spacy_mstparse.corpus.conll import docs_to_conllu, read_conllu
from spacy_mstparse.corpus.convert import convert
from spacy_mstparse.corpus.readers import gold_annotated_doc
from spacy_mstparse.scoring import attachment_scores, conll18_scores

SAMPLE = Path(__file__).resolve().parents[1] / "assets" / "en_ewt_sample"
SMALL = {"features": {"@mst_features": "spacy_mstparse.GraphFeatures.v1", "n_buckets": 2**14},
         "label_buckets": 2**10}


def first_sentences(n):
    lines, count = [], 0
    for line in (SAMPLE / "dev.conllu").read_text(encoding="utf-8").splitlines(keepends=True):
        lines.append(line)
        count += line.strip() == ""
        if count == n:
            break
    return "".join(lines)


def test_reader_and_convert_store_ROOT_as_spacy_convert_does(tmp_path):
    text = first_sentences(20)
    path = tmp_path / "in.conllu"
    path.write_text(text, encoding="utf-8")
    nlp = spacy.blank("en")
    ours = [t.dep_ for doc in read_conllu(path, nlp.vocab) for t in doc]
    spacys = [t.dep_ for doc in conllu_to_docs(text, n_sents=1, no_print=True) for t in doc]
    assert ours == spacys and "ROOT" in ours and "root" not in ours
    # convert's DocBin carries the same labels
    convert(path, tmp_path / "out.spacy")
    binned = [t.dep_ for doc in DocBin().from_disk(tmp_path / "out.spacy").get_docs(nlp.vocab)
              for t in doc]
    assert binned == ours
    # CoNLL-U output writes UD's root back: the file round-trips
    assert docs_to_conllu(read_conllu(path, nlp.vocab)) == text


def training_examples(nlp, limit=60):
    docs = list(read_conllu(SAMPLE / "train.conllu", nlp.vocab))[:limit]
    return [Example(gold_annotated_doc(Example(d, d)), d) for d in docs]


def dev(nlp, limit=20):
    gold = list(read_conllu(SAMPLE / "dev.conllu", nlp.vocab))[:limit]
    return gold, [gold_annotated_doc(Example(d, d)) for d in gold]


def check_roots(docs):
    for doc in docs:
        for sent in doc.sents:
            roots = [t for t in sent if t.head.i == t.i]
            assert len(roots) == 1 and roots[0].dep_ == "ROOT"
            assert all(t.dep_ != "ROOT" for t in sent if t.head.i != t.i)


def ud_roots(conllu):
    rows = [line.split("\t") for line in conllu.splitlines() if line and line[0].isdigit()]
    return [(row[6], row[7]) for row in rows if row[6] == "0" or row[7].lower() == "root"]


@pytest.fixture(scope="module")
def mst():
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("mst_parser", config=SMALL)
    exs = training_examples(nlp)
    nlp.initialize(lambda: exs)
    for _ in range(2):
        parser.update(exs)
    return nlp, parser


def test_mst_parser_writes_ROOT_on_the_doc_and_root_in_conllu(mst):
    nlp, parser = mst
    assert parser.cfg["root_label"] == "ROOT" and "root" not in parser.labels
    gold, inputs = dev(nlp)
    parsed = list(nlp.pipe(inputs))
    check_roots(parsed)
    roots = ud_roots(docs_to_conllu(parsed, enhanced_deps=False))
    assert len(roots) == sum(len(list(d.sents)) for d in parsed)
    assert all(row == ("0", "root") for row in roots)


def as_trained_before(parser_bytes):
    """The same model as one saved when the Doc said ``root``: its label
    inventory and root label read ``root`` (same label ids)."""
    parts = srsly.msgpack_loads(parser_bytes)
    cfg = srsly.json_loads(parts["cfg"])
    cfg["labels"] = ["root" if label == "ROOT" else label for label in cfg["labels"]]
    cfg["root_label"] = "root"
    parts["cfg"] = srsly.json_dumps(cfg).encode("utf8")
    return srsly.msgpack_dumps(parts)


def test_a_model_saved_with_root_still_parses_the_same(mst):
    nlp, parser = mst
    gold, inputs = dev(nlp)
    now = list(nlp.pipe([d.copy() for d in inputs]))
    old_nlp = spacy.blank("en")
    old = old_nlp.add_pipe("mst_parser", config=SMALL)
    old.from_bytes(as_trained_before(parser.to_bytes()))
    assert old.cfg["root_label"] == "root" and "root" in old.labels  # the saved inventory
    before = list(old_nlp.pipe([Doc(old_nlp.vocab).from_bytes(d.to_bytes()) for d in inputs]))
    # Decided: the Doc says ROOT whatever the model's inventory calls it
    # (user code tests token.dep_ == "ROOT"); CoNLL-U says root either way.
    check_roots(before)
    assert [[(t.head.i, t.dep_) for t in d] for d in before] == \
        [[(t.head.i, t.dep_) for t in d] for d in now]
    assert docs_to_conllu(before, enhanced_deps=False) == docs_to_conllu(now, enhanced_deps=False)


def test_scores_do_not_depend_on_the_root_spelling(mst):
    nlp, _ = mst
    gold, inputs = dev(nlp)
    parsed = list(nlp.pipe(inputs))
    gh = [t.head.i for d in gold for t in d]
    gl = [t.dep_ for d in gold for t in d]
    ph = [t.head.i for d in parsed for t in d]
    pl = [t.dep_ for d in parsed for t in d]
    ud = ["root" if label == "ROOT" else label for label in gl]
    assert attachment_scores(gh, gl, ph, pl) == attachment_scores(gh, ud, ph, pl)
    assert attachment_scores(gh, gl, ph, pl)["las"] > 0
    absolute = [[-1 if t.head.i == t.i else t.head.i for t in d] for d in gold]
    pred_abs = [[-1 if t.head.i == t.i else t.head.i for t in d] for d in parsed]
    flat = lambda xs: [x for x in xs for x in x]  # noqa: E731
    assert conll18_scores(flat(absolute), gl, flat(pred_abs), pl) == \
        conll18_scores(flat(absolute), ud, flat(pred_abs), pl)


def test_arcstandard_svm_writes_ROOT():
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("arcstandard_svm", config={"n_buckets": 2**14, "rare_word_cutoff": 1})
    exs = training_examples(nlp, 40)
    nlp.initialize(lambda: exs)
    parser.update(exs)
    assert ("RIGHT-ARC", "ROOT") in parser.classes
    parsed = list(nlp.pipe(dev(nlp, 10)[1]))
    check_roots(parsed)
    assert all(row == ("0", "root") for row in ud_roots(docs_to_conllu(parsed, enhanced_deps=False)))


def test_hand_built_docs_labelled_root_train_a_ROOT_model():
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("mst_parser", config=SMALL)
    words, pos = "She reads books .".split(), ["PRON", "VERB", "NOUN", "PUNCT"]
    ref = Doc(nlp.vocab, words=words, pos=pos, tags=pos, heads=[1, 1, 1, 1],
              deps=["nsubj", "root", "obj", "punct"])
    exs = [Example(Doc(nlp.vocab, words=words, pos=pos, tags=pos), ref)]
    nlp.initialize(lambda: exs)
    for _ in range(5):
        parser.update(exs)
    assert parser.cfg["root_label"] == "ROOT"
    doc = nlp(Doc(nlp.vocab, words=words, pos=pos, tags=pos))
    assert [(t.head.i, t.dep_) for t in doc] == [(1, "nsubj"), (1, "ROOT"), (1, "obj"), (1, "punct")]
    assert numpy.sum([t.dep_ == "ROOT" for t in doc]) == 1
