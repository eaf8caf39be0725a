"""Iterative parameter mixing without Ray: the mixed weights against a dense
reference (the plain / shard-size weighted average of the shard weights),
the mixed average against the mean of every weight vector the shards held,
one shard against serial training, and the learners that can be mixed."""
import subprocess
import sys

import numpy as np
import pytest

from spacy_mstparse.distributed import (RAY_MISSING, MixedWeights, UnmixableLearnerError,
                                        check_mixable)
from spacy_mstparse.distributed.mixing import (mix_vectors, mixture_coefficients, pack,
                                               packed_nbytes, unpack)
from spacy_mstparse.features.config import FeatureConfig
from spacy_mstparse.graph import GraphModel, GraphTrainer
from spacy_mstparse.learners import MIRA, PassiveAggressive, Pegasos, Perceptron
from spacy_mstparse.learners.one_slack import OneSlackSSVM
from spacy_mstparse.learners.sparseptron import Sparseptron

from conftest import encode_sentences


@pytest.fixture(scope="module")
def encoded(sample_train):
    """(Sentence, heads, label ids) of 30 sample sentences, and the labels."""
    return encode_sentences(sample_train, 30, max_length=25)


def new_trainer(labels, learner):
    model = GraphModel(FeatureConfig("both", False, 2**14, True), labels=labels,
                       root_label="root", label_buckets=2**9)
    return GraphTrainer(model, learner)


def zeros(trainer):
    return {k: np.zeros(t.n_buckets, dtype="float32") for k, t in trainer.tables().items()}


def train_recording(trainer, sentences):
    """Train one sentence at a time; the dense sum of w over the ticks."""
    sums = {k: np.zeros(t.n_buckets) for k, t in trainer.tables().items()}
    for item in sentences:
        trainer.train([item])
        for k, t in trainer.tables().items():
            sums[k] += t.current().astype("float64")
    return sums


@pytest.mark.parametrize("weighting", ["uniform", "shard-size"])
def test_mixing_is_the_average_of_the_shard_weights(encoded, weighting):
    data, labels = encoded
    shards = [data[:18], data[18:]]            # unequal sizes: the weightings differ
    mixed = MixedWeights(zeros(new_trainer(labels, Perceptron())))
    for epoch in range(2):
        states, tick_sums = [], []
        for shard in shards:
            trainer = new_trainer(labels, Perceptron())
            trainer.restart_from(mixed.weights)
            tick_sums.append(train_recording(trainer, shard))
            states.append(trainer.epoch_state())
        before = {k: mixed.totals[k].copy() for k in mixed.totals}
        mixed.mix(states, weighting)
        sizes = np.array([len(s) for s in shards], dtype="float64")
        mu = np.full(2, 0.5) if weighting == "uniform" else sizes / sizes.sum()
        for name in ("arc", "label"):
            w = [s["weights"][name].astype("float64") for s in states]
            assert np.abs(w[0] - w[1]).max() > 0          # the shards did differ
            np.testing.assert_allclose(mixed.weights[name], mu[0] * w[0] + mu[1] * w[1],
                                       rtol=1e-6, atol=1e-6)
            # the average: every weight vector any shard held, over all ticks
            np.testing.assert_allclose(mixed.totals[name] - before[name],
                                       tick_sums[0][name] + tick_sums[1][name], rtol=1e-5, atol=1e-4)
    assert mixed.n_ticks["arc"] == 2 * len(data)
    np.testing.assert_allclose(mixed.averaged("arc"), mixed.totals["arc"] / (2 * len(data)),
                               rtol=1e-6)


@pytest.mark.parametrize("learner", [lambda: Perceptron(), lambda: MIRA(k=3),
                                     lambda: PassiveAggressive("PA-I", C=0.1)])
def test_one_shard_equals_serial_training(encoded, learner):
    data, labels = encoded
    serial = new_trainer(labels, learner())
    for _ in range(3):
        serial.train(data)
    shard, driver = new_trainer(labels, learner()), new_trainer(labels, learner())
    mixed = MixedWeights(zeros(shard))
    for _ in range(3):
        shard.restart_from(mixed.weights)
        shard.train(data)
        mixed.mix([shard.epoch_state()])
        driver.set_mixed_state(mixed.state())
    for ours, reference in zip(driver.prediction_weights(), serial.prediction_weights()):
        assert np.abs(reference).max() > 0
        np.testing.assert_allclose(ours, reference, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(driver.arc_table.current(), serial.arc_table.current())
    # the driver's tables keep the averaging invariant: training goes on from them
    driver.train(data[:5])
    serial.train(data[:5])
    np.testing.assert_allclose(driver.prediction_weights()[0], serial.prediction_weights()[0],
                               rtol=1e-5, atol=1e-6)


def test_mixture_coefficients_and_vectors():
    np.testing.assert_allclose(mixture_coefficients([3, 1], "uniform"), [0.5, 0.5])
    np.testing.assert_allclose(mixture_coefficients([3, 1], "shard-size"), [0.75, 0.25])
    np.testing.assert_allclose(mix_vectors([np.array([1.0, 2.0]), np.array([3.0, 6.0])],
                                           [0.75, 0.25]), [1.5, 3.0])
    with pytest.raises(ValueError, match="weighting"):
        mixture_coefficients([1], "median")


def test_learners_that_cannot_be_mixed_are_refused():
    for learner in (Perceptron(), MIRA(k=5), PassiveAggressive()):
        check_mixable(learner)
    for learner in (Pegasos(lam=0.01), Sparseptron(), OneSlackSSVM()):
        with pytest.raises(UnmixableLearnerError, match="Perceptron, MIRA, PassiveAggressive"):
            check_mixable(learner)


def test_the_core_package_needs_neither_ray_nor_spacy_for_mixing():
    code = ("import sys; import spacy_mstparse.distributed.mixing, spacy_mstparse.distributed; "
            "assert 'spacy' not in sys.modules and 'ray' not in sys.modules; "
            "import spacy_mstparse.cli; assert 'ray' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_ray_the_commands_say_how_to_install_it(tmp_path, trained_pipeline, sample_dev):
    code = ("import sys; sys.modules['ray'] = None\n"
            "from spacy_mstparse.cli import app\n"
            "app(sys.argv[1:], prog_name='spacy_mstparse')")
    out = tmp_path / "out.conllu"
    result = subprocess.run([sys.executable, "-c", code, "ray-parse", str(trained_pipeline),
                             str(sample_dev), str(out), "--workers", "1"],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == RAY_MISSING
    assert "Traceback" not in result.stderr and not out.exists()


def test_pack_round_trips_dense_and_sparse_vectors():
    rng = np.random.default_rng(0)
    dense = rng.normal(size=1000).astype("float32")
    sparse = np.zeros(1000, dtype="float32")
    sparse[rng.choice(1000, 30, replace=False)] = rng.normal(size=30)
    assert pack(dense)[0] == "dense" and pack(sparse)[0] == "sparse"
    assert packed_nbytes(pack(sparse)) == 30 * 8 < sparse.nbytes
    for vector in (dense, sparse, np.zeros(10, dtype="float32")):
        np.testing.assert_array_equal(unpack(pack(vector)), vector)
