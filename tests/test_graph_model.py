"""The graph model outside spaCy, the learner contract, the weight table's
public operations against a dense reference, and the layering rules that
keep the package's parts apart."""
import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import spacy
from spacy.training import Example

from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.corpus.readers import gold_annotated_doc
from spacy_mstparse.decoders import (
    approximate_nonprojective,
    chu_liu_edmonds,
    eisner,
    eisner_k_best,
    improve_tree,
    is_valid_tree,
    second_order_tree_score,
)
from spacy_mstparse.features.config import FeatureConfig
from spacy_mstparse.features.doc_arrays import SentenceEncoder
from spacy_mstparse.features.hashing import string_id
from spacy_mstparse.graph import DECODERS, Factors, GraphModel, GraphTrainer, decode
from spacy_mstparse.learners import MIRA, Learner, PassiveAggressive, Pegasos, Perceptron, WeightTable
from spacy_mstparse.learners.one_slack import OneSlackSSVM
from spacy_mstparse.learners.sparseptron import Sparseptron

PACKAGE = Path(__file__).resolve().parents[1] / "spacy_mstparse"


@pytest.fixture(scope="module")
def encoded(sample_train):
    """(Sentence, heads, label ids) of 80 sample sentences, and the labels."""
    nlp = spacy.blank("en")
    encoder = SentenceEncoder(nlp.vocab, "both", False)
    docs = []
    for doc in read_conllu(sample_train, nlp.vocab):
        docs.append(gold_annotated_doc(Example(doc.copy(), doc)))
        docs[-1].user_data["ref"] = doc
        if len(docs) == 80:
            break
    labels = sorted({t.dep_ for d in docs for t in d.user_data["ref"]})
    data = []
    for doc in docs:
        ref = doc.user_data["ref"]
        heads = np.array([-1] + [0 if t.head.i == t.i else t.head.i + 1 for t in ref], "int32")
        label_ids = np.array([-1] + [labels.index(t.dep_) for t in ref], "int32")
        data.append((encoder.encode(doc, [(0, len(doc))])[0], heads, label_ids))
    return data, labels


def new_model(labels, order=1, decoder="eisner"):
    return GraphModel(FeatureConfig("both", False, 2**16, True), order=order, decoder=decoder,
                      labels=labels, root_label="root", label_buckets=2**10)


def test_string_ids_equal_spacy_hashes():
    for text in ["<mst-root>", "", "naïve", "日本語", "x" * 300]:
        assert string_id(text) == spacy.strings.get_string_id(text)


def test_decoder_table_dispatches_each_variant():
    rng = np.random.default_rng(0)
    arc = rng.normal(size=(7, 7)).astype("float32")
    assert np.array_equal(decode("eisner", Factors(arc))[0], eisner(arc))
    assert np.array_equal(decode("chu_liu_edmonds", Factors(arc))[0], chu_liu_edmonds(arc))
    k_best = decode("eisner", Factors(arc), 3)
    assert len(k_best) == 3
    assert all(np.array_equal(a, b) for a, b in zip(k_best, eisner_k_best(arc, None, 3)[0]))
    cle = decode("chu_liu_edmonds", Factors(arc), 3)
    assert len(cle) == 3 and np.array_equal(cle[0], chu_liu_edmonds(arc))
    # second-order Chu-Liu-Edmonds: an approximate k-best list, the k best of
    # the projective k best and their climbs by arc moves: distinct valid
    # trees, best first, the first the best climb (at least the 1-best's score)
    sib = rng.normal(size=(7, 7, 7)).astype("float32")
    trees = decode("chu_liu_edmonds", Factors(arc, sib), 3)
    projective = eisner_k_best(arc, sib, 3)[0]
    candidates = {t.tobytes(): t for p in projective for t in (p, improve_tree(arc, sib, p))}
    expected = sorted(candidates.values(), key=lambda t: -second_order_tree_score(arc, sib, t))
    assert len(trees) == min(3, len(candidates)) == 3
    assert [t.tolist() for t in trees] == [t.tolist() for t in expected[:3]]
    assert all(is_valid_tree(t) for t in trees)
    assert np.array_equal(improve_tree(arc, sib, trees[0]), trees[0])
    one_best = approximate_nonprojective(arc, sib)
    assert np.array_equal(decode("chu_liu_edmonds", Factors(arc, sib))[0], one_best)
    assert (second_order_tree_score(arc, sib, trees[0])
            >= second_order_tree_score(arc, sib, one_best) - 1e-9)
    assert set(DECODERS) == {"eisner", "chu_liu_edmonds"}
    with pytest.raises(ValueError, match="decoder"):
        new_model(["root"], decoder="cky")


@pytest.mark.parametrize("order,decoder", [(1, "eisner"), (2, "eisner"), (1, "chu_liu_edmonds")])
def test_model_trains_outside_spacy_and_round_trips_arrays(encoded, order, decoder):
    data, labels = encoded
    model = new_model(labels, order, decoder)
    trainer = GraphTrainer(model, MIRA(k=2))
    trainer.begin([(s, h) for s, h, _ in data])
    errors = []
    for _ in range(4):
        errors.append(trainer.train(data) + trainer.flush())
    assert errors[-1] < errors[0] / 2
    trainer.install_weights()
    parses = model.parse_batch([s for s, _, _ in data])
    right = sum(int((p[0][1:] == h[1:]).sum()) for p, (_, h, _) in zip(parses, data))
    assert right / sum(len(h) - 1 for _, h, _ in data) > 0.9
    # the root word takes the root label
    for heads, label_ids in parses:
        assert [labels[label_ids[c]] == "ROOT" for c in range(1, len(heads))] == \
            [heads[c] == 0 for c in range(1, len(heads))]
    again = GraphModel.from_arrays(model.features, model.settings(), model.to_arrays())
    assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
               for a, b in zip(parses, again.parse_batch([s for s, _, _ in data])))


def test_trainer_prediction_weights_follow_the_learner(encoded):
    data, labels = encoded
    for learner, averaged in [(Perceptron(), True), (Pegasos(averaged=False), False)]:
        trainer = GraphTrainer(new_model(labels), learner)
        trainer.train(data[:20])
        trainer.flush()
        arc, label = trainer.prediction_weights()
        table = trainer.arc_table
        assert np.array_equal(arc, table.averaged() if averaged else table.current())
        # the statistics of the last learner step
        assert trainer.last_step["n_sentences"] == learner.batch_size
        assert np.array_equal(label, trainer.label_table.averaged())


def test_warm_start_continues_from_given_weights(encoded):
    data, labels = encoded
    model = new_model(labels)
    trainer = GraphTrainer(model, Perceptron())
    trainer.train(data[:30])
    arc, label = trainer.prediction_weights()
    warm = GraphTrainer(new_model(labels), Perceptron(), arc, label)
    assert np.array_equal(warm.arc_table.current(), arc)
    assert np.array_equal(warm.prediction_weights()[0], arc)
    with pytest.raises(TypeError, match="Learner"):
        GraphTrainer(model, object())


def test_every_learner_follows_the_contract():
    learners = [Perceptron(), MIRA(k=5), PassiveAggressive(), Pegasos(k=4),
                Sparseptron(), OneSlackSSVM()]
    # the average, except the sparseptron's sparse stage and the SSVM's solution
    assert [x.predicts_with_average() for x in learners] == [True] * 4 + [False] * 2
    assert not Pegasos(averaged=False).predicts_with_average()
    for learner in learners:
        assert isinstance(learner, Learner)
        for attr in ("batch_size", "loss_augmented", "k_best", "sparse_weights"):
            assert hasattr(learner, attr), (learner, attr)
        weights = np.ones(4, "float32")
        assert learner.finalize_weights(weights) is weights
    assert MIRA(k=5).k_best == 5 and Perceptron().k_best == 1
    assert Pegasos(k=4).batch_size == 4 and Pegasos().loss_augmented
    assert Sparseptron().sparse_weights and not MIRA().sparse_weights
    with pytest.raises(NotImplementedError):
        Learner().step(WeightTable(4), [])


# -------------------------------------------------------------- weight table

def dense_average(history):
    return np.mean(history, axis=0) if history else None


def test_weight_table_public_operations_match_a_dense_reference():
    """assign / scale_buckets / scale_by / add / restart_average against a
    dense vector and the plain mean over ticks."""
    rng = np.random.default_rng(3)
    n = 40
    table = WeightTable(n)
    w = np.zeros(n)
    history = []
    for step in range(300):
        op = rng.integers(0, 5)
        idx = np.unique(rng.integers(0, n, size=int(rng.integers(1, 6)))).astype(np.uint64)
        if op == 0:
            val = rng.normal(size=idx.size)
            table.add(idx, val, 0.5)
            w[idx.astype(int)] += 0.5 * val
        elif op == 1:
            val = rng.normal(size=idx.size)
            table.assign(idx, val)
            w[idx.astype(int)] = val
        elif op == 2:
            fac = rng.uniform(0.2, 1.5, size=idx.size)
            table.scale_buckets(idx, fac)
            w[idx.astype(int)] *= fac
        elif op == 3:
            fac = float(rng.uniform(0.5, 1.2))
            table.scale_by(fac)
            w *= fac
        else:
            table.tick()
            history.append(w.copy())
        if step == 150:
            table.restart_average()
            history = []
    np.testing.assert_allclose(table.current(), w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(table.averaged(), dense_average(history), rtol=1e-4, atol=1e-5)
    assert table.sq_norm() == pytest.approx(float(w @ w), rel=1e-4)
    fresh = WeightTable.from_weights(w.astype("float32"))
    assert fresh.n_ticks == 0 and np.array_equal(fresh.current(), w.astype("float32"))
    with pytest.raises(IndexError):
        table.assign(np.array([n], np.uint64), np.array([1.0]))
    with pytest.raises(ValueError):
        table.restart_average(np.zeros(n + 1))


# ------------------------------------------------------------------ layering

def imported_modules(path: Path):
    """Top-level module names imported by a .py / .pyx / .pxd file."""
    found = set()
    for line in path.read_text().splitlines():
        words = line.strip().split()
        if len(words) >= 2 and words[0] in ("import", "from", "cimport"):
            found.add(words[1].split(".")[0])
    return found


@pytest.mark.parametrize("package", ["learners", "decoders", "graph", "labeler"])
def test_algorithm_packages_do_not_import_spacy(package):
    for path in (PACKAGE / package).iterdir():
        if path.suffix in (".py", ".pyx", ".pxd"):
            assert "spacy" not in imported_modules(path), path.name
    code = (f"import sys, spacy_mstparse.{package}; "
            "assert 'spacy' not in sys.modules, 'spacy imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_components_stay_glue():
    source = (PACKAGE / "components" / "mst_parser.py").read_text()
    assert len(source.splitlines()) <= 350
    for path in (PACKAGE / "components").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr":
                target = ast.unparse(node.args[0])
                assert "learner" not in target, f"{path.name}: getattr on {target}"
