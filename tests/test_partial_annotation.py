"""Training from partial annotation (graph.training, mst_parser).

A gold head of -1 marks an unknown head. ``GraphTrainer`` is checked against
a brute-force latent-structure perceptron over all trees (n <= 6): the
"gold" tree is the best tree under the current weights that keeps the known
arcs, the predicted tree the best (loss-augmented over annotated words)
tree, and the weights move by phi(completion) - phi(predicted) when an
annotated word is wrong. With every head known this is the plain
perceptron. Then: the unknown heads' true values never reach an update,
the labeler learns annotated labels only, and the component trains from
spaCy Examples whose reference has missing heads.
"""
import warnings

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from test_second_order_decoders import all_trees

from spacy_mstparse.features.config import FeatureConfig
from spacy_mstparse.features.doc_arrays import SentenceEncoder
from spacy_mstparse.graph import GraphModel, GraphTrainer
from spacy_mstparse.learners import Perceptron

WORDS = ["the", "dog", "saw", "a", "cat", "with", "big", "eyes", "and", "ran"]
TAGS = ["DET", "NOUN", "VERB", "ADP", "ADJ", "CCONJ"]
LABELS = ["root", "dep", "obj", "hidden-only"]
N_BUCKETS = 2**12


def random_sentences(rs, count, n_max=6):
    """(Sentence, heads) of random tagged word sequences (n <= n_max words)
    with a random (projective, single-root) gold tree."""
    nlp = spacy.blank("en")
    encoder = SentenceEncoder(nlp.vocab, "both", False)
    out = []
    for _ in range(count):
        n = rs.randint(2, n_max + 1)
        doc = Doc(nlp.vocab, words=[WORDS[i] for i in rs.randint(0, len(WORDS), n)])
        for token in doc:
            token.pos_ = TAGS[rs.randint(len(TAGS))]
            token.tag_ = token.pos_.lower()
        trees = all_trees(n, True)[0]
        heads = trees[rs.randint(len(trees))].astype("int32")
        heads[0] = -1
        out.append((encoder.encode(doc, [(0, n)])[0], heads))
    return out


def new_model(decoder="eisner"):
    return GraphModel(FeatureConfig("both", False, N_BUCKETS, True), decoder=decoder,
                      labels=LABELS, root_label="root", label_buckets=2**8)


def hide(rs, heads, share):
    partial = heads.copy()
    partial[1:][rs.rand(len(heads) - 1) < share] = -1
    return partial


def tree_scores(model, sentence, trees, w):
    return np.array([w[model.tree_features(sentence, t.astype("int32"))].sum() for t in trees])


def reference_step(model, sentence, heads, w, loss_augmented, projective):
    """The latent-structure perceptron by enumeration: (new w, n_wrong)."""
    n = len(heads) - 1
    trees = all_trees(n, projective)[0]
    score = tree_scores(model, sentence, trees, w)
    known = heads[1:] >= 0
    consistent = (trees[:, 1:][:, known] == heads[1:][known]).all(axis=1)
    target = trees[np.flatnonzero(consistent)[np.argmax(score[consistent])]]
    wrong = ((trees[:, 1:] != heads[1:]) & known).sum(axis=1)
    predicted = trees[np.argmax(score + wrong * loss_augmented)]
    n_wrong = int(((predicted[1:] != heads[1:]) & known).sum())
    if n_wrong:
        w = w + (np.bincount(model.tree_features(sentence, target.astype("int32")),
                             minlength=len(w))
                 - np.bincount(model.tree_features(sentence, predicted.astype("int32")),
                               minlength=len(w)))
    return w, n_wrong


@pytest.mark.parametrize("decoder,projective", [("eisner", True), ("chu_liu_edmonds", False)])
@pytest.mark.parametrize("loss_augmented", [False, True])
@pytest.mark.parametrize("share", [0.0, 0.4])
def test_trainer_is_the_latent_perceptron(decoder, projective, loss_augmented, share):
    """Two epochs on 12 sentences, with 0% (the plain perceptron) or 40% of
    the heads hidden, give the brute-force reference's weights and losses.
    The start weights are random so that no two trees tie."""
    rs = np.random.RandomState(1 + int(10 * share) + 2 * loss_augmented)
    model = new_model(decoder)
    data = [(s, hide(rs, h, share)) for s, h in random_sentences(rs, 12)]
    if share:
        assert any((h[1:] < 0).any() for _, h in data)
    start = rs.randn(N_BUCKETS).astype("float32")
    learner = Perceptron(averaged=False)
    learner.loss_augmented = loss_augmented
    trainer = GraphTrainer(model, learner, arc_weights=start)
    w = start.astype("float64")
    for _ in range(2):
        for sentence, heads in data:
            lost = trainer.train([(sentence, heads, None)])
            w, n_wrong = reference_step(model, sentence, heads, w, loss_augmented, projective)
            assert lost == n_wrong
    assert np.abs(w - start).max() > 0  # the reference did update
    np.testing.assert_allclose(trainer.arc_table.current(), w, atol=1e-4)


@pytest.mark.parametrize("decoder,projective", [("eisner", True), ("chu_liu_edmonds", False)])
def test_completion_is_the_best_tree_keeping_the_known_arcs(decoder, projective):
    rs = np.random.RandomState(4)
    model = new_model(decoder)
    trainer = GraphTrainer(model, Perceptron(), arc_weights=rs.randn(N_BUCKETS).astype("float32"))
    w = trainer.arc_table.current()
    for sentence, gold in random_sentences(rs, 30):
        heads = hide(rs, gold, 0.5)
        tree = trainer.completion(sentence, heads)
        known = heads >= 0
        assert np.array_equal(tree[known], heads[known])
        trees = all_trees(len(heads) - 1, projective)[0]
        consistent = (trees[:, known] == heads[known]).all(axis=1)
        score = tree_scores(model, sentence, trees, w)
        best = trees[np.flatnonzero(consistent)[np.argmax(score[consistent])]]
        assert np.array_equal(tree[1:], best[1:])


def test_unknown_heads_never_reach_an_update():
    """Gold trees that differ from the current prediction only on hidden
    words make no update (their true heads are not used), while the same
    trees fully annotated do; and the labeler learns no label of a hidden
    word (the label only hidden words carry gets no positive weight)."""
    rs = np.random.RandomState(2)
    model = new_model()
    start = rs.randn(N_BUCKETS).astype("float32")
    hidden_label = LABELS.index("hidden-only")
    changed = 0
    for sentence, _ in random_sentences(rs, 20):
        trainer = GraphTrainer(model, Perceptron(averaged=False), arc_weights=start)
        pred = model.decode(model.scores(sentence, start))[0]
        # a gold tree that differs from the prediction on some words, not all
        trees = all_trees(sentence.n, True)[0]
        n_diff = (trees[:, 1:] != pred[1:]).sum(axis=1)
        choices = np.flatnonzero((n_diff > 0) & (n_diff < sentence.n))
        if not len(choices):
            continue
        other = trees[rs.choice(choices)].astype("int32")
        other[0] = -1
        differ = np.flatnonzero(other[1:] != pred[1:]) + 1
        changed += 1
        labels = np.array([-1] + [LABELS.index("dep")] * sentence.n, "int32")
        labels[differ] = hidden_label
        partial = other.copy()
        partial[differ] = -1
        assert trainer.train([(sentence, partial, labels)]) == 0
        np.testing.assert_array_equal(trainer.arc_table.current(), start)
        label_w = trainer.label_table.current().reshape(-1, len(LABELS))
        assert not (label_w[:, hidden_label] > 0).any()
        full = GraphTrainer(model, Perceptron(averaged=False), arc_weights=start)
        assert full.train([(sentence, other, labels)]) == len(differ)
        assert np.abs(full.arc_table.current() - start).max() > 0
        assert (full.label_table.current().reshape(-1, len(LABELS))[:, hidden_label] > 0).any()
    assert changed > 10


def test_crossing_known_arcs_are_completed_non_projectively():
    """Under Eisner, known arcs that cross get the best non-projective
    completion (brute force over all trees); known arcs no tree holds (two
    roots) make no update."""
    rs = np.random.RandomState(0)
    model = new_model("eisner")
    start = rs.randn(N_BUCKETS).astype("float32")
    trainer = GraphTrainer(model, Perceptron(averaged=False), arc_weights=start)
    checked = 0
    for sentence, _ in random_sentences(rs, 20):
        if sentence.n < 4:
            continue
        heads = np.full(sentence.n + 1, -1, "int32")
        heads[3], heads[4] = 1, 2   # 1 -> 3 and 2 -> 4 cross
        tree = trainer.completion(sentence, heads)
        trees = all_trees(sentence.n, False)[0]
        consistent = (trees[:, 3] == 1) & (trees[:, 4] == 2)
        score = tree_scores(model, sentence, trees, start)
        best = trees[np.flatnonzero(consistent)[np.argmax(score[consistent])]]
        assert np.array_equal(tree[1:], best[1:])
        checked += 1
        two_roots = np.full(sentence.n + 1, -1, "int32")
        two_roots[1], two_roots[2] = 0, 0
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            assert trainer.completion(sentence, two_roots) is None
        assert [str(w.message) for w in said] == (
            [] if checked > 1 else
            ["skipping partially annotated sentences whose known arcs no tree holds (several roots)"])
        assert trainer.train([(sentence, two_roots, None)]) == 0
        np.testing.assert_array_equal(trainer.arc_table.current(), start)
    assert checked > 5 and trainer.unusable == 2 * checked


# -- the component ---------------------------------------------------------------------
def partial_examples(nlp, sample_train, share, seed=0, limit=60):
    """Examples of the sample treebank with ``share`` of the heads removed
    from the reference (spaCy's missing annotation: head None, dep "")."""
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.corpus.readers import gold_annotated_doc

    rs = np.random.RandomState(seed)
    out, hidden = [], []
    for ref in list(read_conllu(sample_train, nlp.vocab, n_sents=1))[:limit]:
        keep = rs.rand(len(ref)) >= share
        heads = [t.head.i if k else None for t, k in zip(ref, keep)]
        deps = [t.dep_ if k else None for t, k in zip(ref, keep)]
        partial = Doc(nlp.vocab, words=[t.text for t in ref], heads=heads, deps=deps,
                      pos=[t.pos_ for t in ref], tags=[t.tag_ for t in ref],
                      sent_starts=[t.is_sent_start for t in ref])
        out.append(Example(gold_annotated_doc(Example(ref.copy(), ref)), partial))
        hidden.append(~keep)
    return out, hidden


def test_component_trains_from_missing_heads(sample_train):
    from spacy_mstparse.components import mst_parser  # noqa: F401  (factory)

    nlp = spacy.blank("en")
    parser = nlp.add_pipe("mst_parser")
    examples, hidden = partial_examples(nlp, sample_train, 0.5)
    assert not examples[0].reference[int(np.flatnonzero(hidden[0])[0])].has_head()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is skipped
        nlp.initialize(lambda: examples)
        split = 0
        for eg, mask in zip(examples, hidden):
            # spaCy derives the reference's sentences from its (partial) tree,
            # in fragments; the predicted doc's sentences are used instead
            split += len(list(eg.reference.sents)) > 1
            (start, heads, deps), = parser.gold_sentences(eg, partial=True)
            assert start == 0 and np.array_equal(heads[1:] < 0, mask)
            assert all(bool(d) != m for d, m in zip(deps[1:], mask))
            gold = [0 if t.head.i == t.i else t.head.i + 1 for t in eg.reference]
            assert np.array_equal(heads[1:][~mask], np.array(gold)[~mask])
        assert split > 0
        got = list(parser.training_sentences(examples))
        assert len(got) == len(examples)
        for (_, heads, labels), mask in zip(got, hidden):
            assert (labels[1:][mask] == -1).all() and (labels[1:][~mask] >= 0).all()
        for _ in range(6):
            losses = {}
            parser.update(examples, losses=losses)
    assert "hidden-only" not in parser.labels
    # the annotated arcs are learnt: the wrong annotated heads fall to few
    right = total = 0
    for eg, mask in zip(examples, hidden):
        doc = nlp(eg.predicted.copy())
        for i, token in enumerate(eg.reference):
            if not mask[i]:
                total += 1
                right += doc[i].head.i == token.head.i
    assert right / total > 0.9
    assert losses["mst_parser"] < 0.2 * total


def test_arcstandard_still_skips_sentences_with_missing_heads(sample_train):
    from spacy_mstparse.components import arcstandard_svm  # noqa: F401  (factory)

    nlp = spacy.blank("en")
    parser = nlp.add_pipe("arcstandard_svm")
    examples, _ = partial_examples(nlp, sample_train, 0.5, limit=5)
    with pytest.warns(UserWarning, match="missing heads"):
        assert list(parser.training_trees(examples[0])) == []


def test_sparseptron_gold_support_from_complete_trees_only():
    """The gold feature space (support = "gold") is built from the complete
    gold trees: a partially annotated sentence adds no bucket, and training
    on it runs (its completion is not known at initialization)."""
    from spacy_mstparse.learners.sparseptron import Sparseptron

    rs = np.random.RandomState(5)
    model = new_model()
    data = random_sentences(rs, 8)
    partial = [(s, hide(rs, h, 0.5)) if i % 2 else (s, h) for i, (s, h) in enumerate(data)]
    assert any((h[1:] < 0).any() for _, h in partial)
    complete_only = Sparseptron(support="gold")
    complete_only.begin_training(model.first_order, [d for d in partial if (d[1][1:] >= 0).all()])
    learner = Sparseptron(support="gold")
    trainer = GraphTrainer(model, learner)
    trainer.begin(partial)
    assert learner.n_train == len(partial)
    np.testing.assert_array_equal(learner.group_map, complete_only.group_map)
    trainer.train([(s, h, None) for s, h in partial])
    trainer.flush()
