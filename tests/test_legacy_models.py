"""Models saved by earlier releases still load and parse identically.

The fixtures under ``fixtures/legacy_models`` were written once by the code of
commit 250f42f (see ``fixtures/make_legacy_models.py``): ``mst_parser`` in
model formats 1 and 2 (dense and sparse arc weights, first and second order)
and ``arcstandard_svm`` in its format 1, each with the parses that code gave.
"""
import json
from pathlib import Path

import pytest
import spacy
from spacy.training import Example

from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.corpus.readers import gold_annotated_doc

HERE = Path(__file__).parent
LEGACY = HERE / "fixtures" / "legacy_models"
SAMPLE_DEV = HERE.parent / "assets" / "en_ewt_sample" / "dev.conllu"
COMPONENT = {
    "mst_o1_eisner": "mst_parser",
    "mst_o1_eisner_format1": "mst_parser",
    "mst_o2_cle": "mst_parser",
    "mst_o1_sparseptron": "mst_parser",
    "arcstandard": "arcstandard_svm",
}


def dev_docs(vocab, n=60):
    docs = []
    for ref in read_conllu(SAMPLE_DEV, vocab):
        if len(docs) == n:
            break
        docs.append(gold_annotated_doc(Example(ref.copy(), ref)))
    return docs


def parses(nlp, docs):
    return [[[t.head.i, t.dep_] for t in doc] for doc in nlp.pipe(docs)]


@pytest.mark.parametrize("name", sorted(COMPONENT))
def test_saved_directory_loads_and_parses_identically(name):
    expected = json.loads((LEGACY / f"{name}.expected.json").read_text())
    nlp = spacy.load(LEGACY / name)
    got = parses(nlp, dev_docs(nlp.vocab))
    assert len(got) == len(expected) == 60
    assert got == expected


@pytest.mark.parametrize("name", sorted(COMPONENT))
def test_saved_bytes_load_and_parse_identically(name):
    """The component's ``to_bytes`` of that release, loaded into the pipeline
    built from the saved config (its own weights replaced)."""
    expected = json.loads((LEGACY / f"{name}.expected.json").read_text())
    nlp = spacy.load(LEGACY / name)
    pipe = nlp.get_pipe(COMPONENT[name])
    # Start from a different model, so that the bytes must carry the weights.
    other = {"mst_o1_eisner": "mst_o1_sparseptron", "mst_o1_eisner_format1": "mst_o1_sparseptron",
             "mst_o1_sparseptron": "mst_o1_eisner"}.get(name)
    if other is not None:
        pipe.from_bytes((LEGACY / f"{other}.bytes").read_bytes())
        assert parses(nlp, dev_docs(nlp.vocab)) != expected
    pipe.from_bytes((LEGACY / f"{name}.bytes").read_bytes())
    assert parses(nlp, dev_docs(nlp.vocab)) == expected
