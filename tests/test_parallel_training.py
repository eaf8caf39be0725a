"""Parallel training (``GraphTrainer`` with ``n_threads`` > 1): the constraints
decoded over threads equal the serial ones under the same frozen weights;
with one sentence per block training equals serial training bit for bit;
one thread is the serial loop of McDonald et al. (2005), Figure 3, as
written out here; two threads with delayed updates still train a parser."""
import numpy as np
import pytest
import spacy
from spacy.training import Example

from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.corpus.readers import gold_annotated_doc
from spacy_mstparse.decoders import is_valid_tree
from spacy_mstparse.features.config import FeatureConfig
from spacy_mstparse.graph import GraphModel, GraphTrainer
from spacy_mstparse.graph.training import DEFAULT_PARALLEL_BATCH, add_hamming_loss
from spacy_mstparse.graph.training_batch import decode_for_training
from spacy_mstparse.learners import MIRA, PassiveAggressive, Pegasos, Perceptron
from spacy_mstparse.learners.sparse import sparse_difference

from conftest import encode_sentences


@pytest.fixture(scope="module")
def encoded(sample_train):
    """(Sentence, heads, label ids) of 60 sample sentences, and the labels."""
    return encode_sentences(sample_train, 60)


def new_model(labels, order=1, decoder="eisner", n_buckets=2**16, stops=False):
    return GraphModel(FeatureConfig("both", False, n_buckets, True, sibling_stops=stops),
                      order=order, decoder=decoder, labels=labels, root_label="root",
                      label_buckets=2**10)


def same_constraints(a, b):
    return len(a) == len(b) and all(
        np.array_equal(x[0], y[0]) and x[0].dtype == y[0].dtype and np.array_equal(x[1], y[1])
        and x[2] == y[2] for x, y in zip(a, b))


CASES = [  # order, decoder, learner, sibling stop factors
    (1, "eisner", lambda: MIRA(k=5), False),
    (1, "eisner", lambda: Pegasos(k=4), False),            # loss-augmented, 1-best
    (1, "chu_liu_edmonds", lambda: MIRA(k=3), False),
    (1, "chu_liu_edmonds", lambda: PassiveAggressive(), False),
    (2, "eisner", lambda: MIRA(k=2), True),
    (2, "chu_liu_edmonds", lambda: MIRA(k=2), False),
    (3, "eisner", lambda: MIRA(k=2), False),
]


@pytest.mark.parametrize("order,decoder,make,stops", CASES)
def test_parallel_constraints_equal_serial_ones(encoded, order, decoder, make, stops):
    data, labels = encoded
    learner = make()
    trainer = GraphTrainer(new_model(labels, order, decoder, stops=stops), learner)
    trainer.begin([(s, h) for s, h, _ in data])
    trainer.train(data[:25])   # weights that get some trees wrong
    trainer.flush()
    items = [(s, h) for s, h, _ in data[25:]]
    partial = items[0][1].copy()
    partial[1::2] = -1         # unknown heads: the completion path
    items.append((items[0][0], partial))
    k = learner.k_best
    serial = [trainer.constraints(s, h, k) for s, h in items]
    assert sum(c[2] for cs in serial for c in cs) > 0   # something to learn
    for n_threads in (1, 2, 3):
        trainer.n_threads = n_threads
        parallel = trainer.batch_constraints(items, k)
        for (constraints, target), expected, (_, heads) in zip(parallel, serial, items):
            assert same_constraints(constraints, expected)
            assert target is heads or not (heads >= 0).all()
        assert parallel[-1][1] is not None and (parallel[-1][1][2::2] == partial[2::2]).all()


@pytest.mark.parametrize("n_buckets,order,stops", [(2**16, 1, False), (2**23, 1, False),
                                                    (2**16, 2, False), (2**23, 2, True)])
def test_decode_for_training_against_the_python_path(encoded, n_buckets, order, stops):
    """The C stage alone: k best loss-augmented trees and update vectors,
    against scores + ``add_hamming_loss`` + decode + ``sparse_difference``
    of the whole trees (ids of two and of three radix digits; short and
    long difference lists; at order 2 only the sides whose dependents
    differ are extracted)."""
    data, labels = encoded
    model = new_model(labels, order=order, n_buckets=n_buckets, stops=stops)
    rng = np.random.default_rng(1)
    weights = rng.normal(size=model.n_arc_weights).astype("float32")
    items = [(s, h) for s, h, _ in data[:12]]
    # weights far from the gold trees (most heads wrong), and close to them
    # (the runner-up trees differ from gold in an arc or two)
    near = weights * 0.01
    for sentence, heads in items:
        near[model.first_order.tree_features(sentence, heads)] += 1.0
    runs = [(w, items, decode_for_training([s for s, _ in items], [h for _, h in items],
                                           model, w, 0.5, 4, True, 2))
            for w in (weights, near)]
    sorted_lengths = []  # ids sorted per side: the gold tree's arcs where a tree differs
    for weights, (sentence, heads), (trees, n_wrong, diffs) in (
            (w, item, out) for w, its, outs in runs for item, out in zip(its, outs)):
        factors = model.scores(sentence, weights, 0.5)
        add_hamming_loss(factors.arc, heads)
        expected = model.decode(factors, 4)
        assert [t.tolist() for t in trees] == [t.tolist() for t in expected]
        assert all(is_valid_tree(t) for t in trees)
        for tree, wrong, diff in zip(expected, n_wrong, diffs):
            assert wrong == int((tree[1:] != heads[1:]).sum())
            if wrong:
                sorted_lengths.append(sum(
                    len(model.first_order.arc_features(sentence, int(heads[c]), c))
                    for c in np.flatnonzero(tree != heads)))
                idx, val = sparse_difference(model.tree_features(sentence, heads),
                                             model.tree_features(sentence, tree))
                assert np.array_equal(diff[0], idx) and np.array_equal(diff[1], val)
            else:
                assert diff is None
    assert min(sorted_lengths) < 256 <= max(sorted_lengths)  # both sorts ran
    with pytest.raises(ValueError, match="full gold trees"):
        partial = items[0][1].copy()
        partial[1] = -1
        decode_for_training([items[0][0]], [partial], model, weights, 1.0, 1, False)


@pytest.mark.parametrize("order,decoder,make", [
    (1, "eisner", lambda: MIRA(k=5)),
    (1, "chu_liu_edmonds", lambda: Pegasos(k=4)),
    (2, "eisner", lambda: PassiveAggressive()),
])
def test_one_sentence_per_block_equals_serial_training(encoded, order, decoder, make):
    """parallel_batch = one learner mini-batch: nothing is delayed, so the
    threaded loop must give the serial weights exactly."""
    data, labels = encoded
    tables = []
    for n_threads in (1, 2):
        learner = make()
        trainer = GraphTrainer(new_model(labels, order, decoder), learner,
                               n_threads=n_threads, parallel_batch=1)
        trainer.begin([(s, h) for s, h, _ in data])
        for _ in range(2):
            trainer.train(data[:40])
            trainer.flush()
        tables.append(trainer.prediction_weights())
    assert tables[0][0].any()
    assert np.array_equal(tables[0][0], tables[1][0])
    assert np.array_equal(tables[0][1], tables[1][1])


def test_one_thread_is_the_serial_loop(encoded):
    """n_threads = 1: k-best MIRA as McDonald et al. (2005), Figure 3,
    written out with the public pieces, gives the same weights bit for bit."""
    data, labels = encoded
    trainer = GraphTrainer(new_model(labels), MIRA(k=3))
    assert trainer.n_threads == 1 and trainer.parallel_batch == DEFAULT_PARALLEL_BATCH
    trainer.train(data[:30])
    trainer.flush()
    model = new_model(labels)
    ref = GraphTrainer(model, MIRA(k=3))   # its tables and learner, stepped by hand
    for sentence, heads, label_ids in data[:30]:
        factors = model.scores(sentence, ref.arc_table.values, ref.arc_table.scale)
        constraints = []
        for tree in model.decode(factors, 3):
            wrong = int((tree[1:] != heads[1:]).sum())
            idx, val = sparse_difference(model.tree_features(sentence, heads),
                                         model.tree_features(sentence, tree))
            if not wrong:
                idx, val = idx[:0], val[:0]
            constraints.append((idx, val, wrong))
        ref.train_labeler([(sentence, heads, label_ids)])
        ref.learner.step(ref.arc_table, [constraints])
    assert np.array_equal(trainer.arc_table.current(), ref.arc_table.current())
    assert np.array_equal(trainer.prediction_weights()[0], ref.prediction_weights()[0])
    assert np.array_equal(trainer.prediction_weights()[1], ref.prediction_weights()[1])


def test_two_threads_with_delayed_updates_train_a_parser(encoded):
    data, labels = encoded
    train, held = data[:45], data[45:]
    uas = {}
    for n_threads in (1, 2):
        model = new_model(labels)
        trainer = GraphTrainer(model, MIRA(k=5), n_threads=n_threads, parallel_batch=8)
        trainer.begin([(s, h) for s, h, _ in train])
        assert trainer.block_size == (8 if n_threads == 2 else 1)
        for _ in range(4):
            trainer.train(train)
            trainer.flush()
        trainer.install_weights()
        parses = model.parse_batch([s for s, _, _ in held])
        assert all(is_valid_tree(heads) for heads, _ in parses)
        right = sum(int((p[0][1:] == h[1:]).sum()) for p, (_, h, _) in zip(parses, held))
        uas[n_threads] = right / sum(len(h) - 1 for _, h, _ in held)
    assert uas[1] > 0.6
    assert abs(uas[2] - uas[1]) < 0.04, uas


def test_block_size_and_settings():
    learner = Pegasos(k=4)   # mini-batches of 4 sentences
    model = GraphModel(FeatureConfig("both", False, 2**10, True))
    assert GraphTrainer(model, learner, n_threads=2, parallel_batch=10).block_size == 8
    assert GraphTrainer(model, learner, n_threads=2, parallel_batch=3).block_size == 4
    assert GraphTrainer(model, learner, n_threads=1, parallel_batch=10).block_size == 4
    assert GraphTrainer(model, Perceptron(), n_threads=2).block_size == DEFAULT_PARALLEL_BATCH
    with pytest.raises(ValueError, match="parallel_batch"):
        GraphTrainer(model, learner, n_threads=2, parallel_batch=0)


def test_component_trains_with_two_threads(sample_train):
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("mst_parser", config={"n_threads": 2, "parallel_batch": 4})
    examples = []
    for ref in read_conllu(sample_train, nlp.vocab):
        examples.append(Example(gold_annotated_doc(Example(ref.copy(), ref)), ref))
        if len(examples) == 30:
            break
    nlp.initialize(lambda: examples)
    for _ in range(3):
        losses = nlp.update(examples)
    assert parser.trainer.n_threads == 2 and parser.trainer.block_size == 4
    assert losses["mst_parser"] >= 0
    docs = list(nlp.pipe([eg.predicted.copy() for eg in examples[:5]]))
    for doc in docs:
        heads = np.array([-1] + [0 if t.head.i == t.i else t.head.i + 1 for t in doc], "int32")
        assert is_valid_tree(heads)
    with pytest.raises(ValueError, match="parallel_batch"):
        spacy.blank("en").add_pipe("mst_parser", config={"parallel_batch": 0})
