"""Training replicas (``ReplicaTrainer``, the ``replicas`` setting): replica 0
is the plain training loop, the others train on reordered copies of the
same stream, and the model predicts with the mean of their weights."""
import numpy as np
import pytest
import spacy
from spacy.training import Example

from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.corpus.readers import gold_annotated_doc
from spacy_mstparse.features.config import FeatureConfig
from spacy_mstparse.graph import GraphModel, GraphTrainer
from spacy_mstparse.graph.replicas import ReplicaTrainer
from spacy_mstparse.learners import MIRA, Pegasos, Perceptron

from conftest import encode_sentences


@pytest.fixture(scope="module")
def encoded(sample_train):
    """(Sentence, heads, label ids) of 40 sample sentences, and the labels."""
    return encode_sentences(sample_train, 40)


def new_model(labels, order=1):
    return GraphModel(FeatureConfig("both", False, 2**16, True), order=order, decoder="eisner",
                      labels=labels, root_label="root", label_buckets=2**10)


def train(trainer, data, passes=2, batch=8):
    trainer.begin(list(data))
    for _ in range(passes):
        for i in range(0, len(data), batch):
            trainer.train(data[i:i + batch])
            trainer.flush()


@pytest.mark.parametrize("order", [1, 2])
def test_replica_zero_is_the_plain_loop(encoded, order):
    data, labels = encoded
    plain = GraphTrainer(new_model(labels, order), MIRA(k=2))
    train(plain, data)
    replicas = ReplicaTrainer(new_model(labels, order), MIRA(k=2), 2, buffer=5)
    train(replicas, data)
    for a, b in zip(plain.prediction_weights(), replicas.trainers[0].prediction_weights()):
        assert np.array_equal(a, b)


def test_other_replicas_see_every_sentence_but_the_buffered_ones(encoded):
    data, labels = encoded
    replicas = ReplicaTrainer(new_model(labels), Perceptron(), 3, buffer=5)
    train(replicas, data, passes=2)
    # the perceptron ticks its averaging clock once per sentence
    ticks = [t.arc_table.n_ticks for t in replicas.trainers]
    assert ticks == [2 * len(data), 2 * len(data) - 5, 2 * len(data) - 5]
    # ... in other orders: the replicas' weights differ
    w = [t.prediction_weights()[0] for t in replicas.trainers]
    assert not np.array_equal(w[0], w[1]) and not np.array_equal(w[1], w[2])


@pytest.mark.parametrize("buffer", [2048, 7])
def test_the_buffer_holds_at_most_a_sixth_of_the_training_sentences(encoded, buffer):
    data, labels = encoded
    replicas = ReplicaTrainer(new_model(labels), Perceptron(), 2, buffer=buffer)
    train(replicas, data, passes=2)
    held = len(data) // 6
    assert replicas.buffer == held
    assert replicas.trainers[1].arc_table.n_ticks == 2 * len(data) - held
    assert np.abs(replicas.trainers[1].prediction_weights()[0]).sum() > 0


def test_prediction_weights_are_the_replicas_mean(encoded):
    data, labels = encoded
    model = new_model(labels, order=2)
    replicas = ReplicaTrainer(model, MIRA(k=3), 3, buffer=4)
    train(replicas, data)
    arc, label = replicas.prediction_weights()
    parts = [t.prediction_weights() for t in replicas.trainers]
    assert arc.dtype == np.float32 and label.dtype == np.float32
    np.testing.assert_allclose(arc, np.mean([p[0] for p in parts], axis=0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(label, np.mean([p[1] for p in parts], axis=0), rtol=1e-6, atol=1e-7)
    assert replicas.install_weights() is model
    assert np.array_equal(model.arc_weights, arc)


def test_replicas_are_reproducible(encoded):
    data, labels = encoded
    runs = []
    for _ in range(2):
        replicas = ReplicaTrainer(new_model(labels), MIRA(k=2), 2, buffer=6)
        train(replicas, data)
        runs.append(replicas.prediction_weights())
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])


def test_replicas_refuse_learners_with_more_state(encoded):
    _, labels = encoded
    with pytest.raises(ValueError, match="Pegasos"):
        ReplicaTrainer(new_model(labels), Pegasos(), 2)
    with pytest.raises(ValueError, match="replicas must be >= 2 for a ReplicaTrainer"):
        ReplicaTrainer(new_model(labels), MIRA(), 1)


def _examples(nlp, path, n):
    out = []
    for ref in list(read_conllu(path, nlp.vocab))[:n]:
        out.append(Example(gold_annotated_doc(Example(ref.copy(), ref)), ref))
    return out


def test_component_with_replicas_trains_saves_and_loads(sample_train, tmp_path):
    nlp = spacy.blank("en")
    examples = _examples(nlp, sample_train, 60)
    parser = nlp.add_pipe("mst_parser", config={"replicas": 2})
    nlp.initialize(lambda: examples)
    assert isinstance(parser.trainer, ReplicaTrainer)
    for _ in range(2):
        for i in range(0, len(examples), 16):
            parser.update(examples[i:i + 16])
    arc, _ = parser.prediction_weights()
    np.testing.assert_allclose(arc, parser.trainer.prediction_weights()[0])
    docs = [eg.predicted.copy() for eg in examples[:10]]
    heads = [[t.head.i for t in d] for d in parser.pipe(docs)]
    nlp.to_disk(tmp_path / "m")
    loaded = spacy.load(tmp_path / "m")
    again = [[t.head.i for t in d] for d in loaded.get_pipe("mst_parser").pipe(
        [eg.predicted.copy() for eg in examples[:10]])]
    assert again == heads
    assert loaded.get_pipe("mst_parser").cfg["replicas"] == 2
    # a loaded pipeline trains on with replicas warm-started from its weights
    loaded.get_pipe("mst_parser").update(examples[:8])
    assert isinstance(loaded.get_pipe("mst_parser").trainer, ReplicaTrainer)


def test_component_rejects_bad_replicas():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match=r"replicas\s+at root: 0 is not an integer >= 1"):
        nlp.add_pipe("mst_parser", config={"replicas": 0})
    with pytest.raises(ValueError, match=r"\[p2\] replicas > 1 .*Pegasos"):
        nlp.add_pipe("mst_parser", name="p2", config={
            "replicas": 2, "learner": {"@mst_learners": "spacy_mstparse.Pegasos.v1"}})
    # one replica: any learner
    nlp.add_pipe("mst_parser", name="p3", config={
        "learner": {"@mst_learners": "spacy_mstparse.Pegasos.v1"}})


def test_runtime_settings_reach_every_replica(encoded):
    _, labels = encoded
    replicas = ReplicaTrainer(new_model(labels), MIRA(), 3)
    replicas.n_threads, replicas.parallel_batch = 2, 8
    assert [(t.n_threads, t.parallel_batch) for t in replicas.trainers] == [(2, 8)] * 3
    assert (replicas.n_threads, replicas.parallel_batch) == (2, 8)
