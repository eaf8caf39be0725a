"""Shared fixtures and helpers: a small trained pipeline, the bundled EWT
sample, and ``run_cli`` (the CLI invoked in-process)."""
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "assets" / "en_ewt_sample"
N_TRAIN_SENTS = 300
N_EPOCHS = 3
BATCH_SIZE = 16


def pytest_collection_modifyitems(items):
    """Test files with slow tests first, each file's tests in their order
    (a stable sort): ``make test`` hands whole files to its workers in this
    order, so the longest files start at once instead of after the others."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)


def run_cli(*args):
    """Invoke ``python -m spacy_mstparse ARGS`` in-process (typer's CliRunner)
    and check that it ended without a traceback: expected errors exit through
    ``typer.Exit``."""
    from typer.testing import CliRunner

    from spacy_mstparse.cli import app

    result = CliRunner().invoke(app, [str(arg) for arg in args])
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    return result


def encode_sentences(path, n, max_length=None):
    """``([(Sentence, gold heads, gold label ids)], labels)`` of the first
    ``n`` sentences of the CoNLL-U file ``path`` (of at most ``max_length``
    words), encoded with gold tags as the graph parser reads them (both tag
    columns); ``labels`` sorted, the label ids index it."""
    import numpy as np
    import spacy
    from spacy.training import Example

    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.corpus.readers import gold_annotated_doc
    from spacy_mstparse.features.doc_arrays import SentenceEncoder

    nlp = spacy.blank("en")
    encoder = SentenceEncoder(nlp.vocab, "both", False)
    refs = []
    for doc in read_conllu(path, nlp.vocab):
        if max_length is None or len(doc) <= max_length:
            refs.append(doc)
        if len(refs) == n:
            break
    labels = sorted({t.dep_ for d in refs for t in d})
    data = []
    for ref in refs:
        doc = gold_annotated_doc(Example(ref.copy(), ref))
        heads = np.array([-1] + [0 if t.head.i == t.i else t.head.i + 1 for t in ref], "int32")
        label_ids = np.array([-1] + [labels.index(t.dep_) for t in ref], "int32")
        data.append((encoder.encode(doc, [(0, len(doc))])[0], heads, label_ids))
    return data, labels


@pytest.fixture(scope="session")
def sample_train() -> Path:
    return SAMPLE / "train.conllu"


@pytest.fixture(scope="session")
def sample_dev() -> Path:
    return SAMPLE / "dev.conllu"


@pytest.fixture(scope="session")
def trained_pipeline(tmp_path_factory, sample_train) -> Path:
    """A blank English pipeline with a default ``mst_parser`` trained for a few
    epochs on the first sentences of the sample (gold words, tags and
    sentences as input), saved to disk; returns its directory."""
    import spacy
    from spacy.training import Example
    from spacy.util import minibatch

    from spacy_mstparse.components import mst_parser  # noqa: F401  (factory)
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.corpus.readers import gold_annotated_doc

    nlp = spacy.blank("en")
    nlp.add_pipe("mst_parser")
    examples = []
    for ref in read_conllu(sample_train, nlp.vocab):
        if len(examples) == N_TRAIN_SENTS:
            break
        example = Example(ref.copy(), ref)
        examples.append(Example(gold_annotated_doc(example), ref))
    nlp.initialize(lambda: examples)
    parser = nlp.get_pipe("mst_parser")
    for _ in range(N_EPOCHS):
        for batch in minibatch(examples, size=BATCH_SIZE):
            parser.update(batch)
    path = tmp_path_factory.mktemp("pipeline") / "mst_en"
    nlp.to_disk(path)
    return path
