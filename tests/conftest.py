"""Shared fixtures and helpers: a small trained pipeline, the bundled EWT
sample, and ``run_cli`` (the CLI invoked in-process)."""
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "assets" / "en_ewt_sample"
N_TRAIN_SENTS = 300
N_EPOCHS = 3
BATCH_SIZE = 16


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
