"""What arcstandard_svm's initialize() learns from training trees
(transition/training_scan.py), against hand-computed values."""
import numpy

from spacy_mstparse.transition import training_scan
from spacy_mstparse.transition.arc_standard import oracle
from spacy_mstparse.transition.features import UNK_WORD


def sentence(words, heads, deps):
    return (numpy.array(words, dtype="uint64"), numpy.array([-1] + heads, dtype="int32"),
            [""] + deps)


# "a b c": b is the root, a <- b -> c;  "a d": d is the root, a <- d
SENTS = [
    sentence([10, 20, 30], [2, 0, 2], ["det", "root", "obj"]),
    sentence([10, 40], [2, 0], ["nsubj||obj", "root"]),
]


def test_vocabulary_cutoff():
    assert training_scan.vocabulary(SENTS, 2).tolist() == [10]
    assert training_scan.vocabulary(SENTS, 1).tolist() == [10, 20, 30, 40]


def test_transition_classes_by_direction():
    labels, root, classes = training_scan.transition_classes(SENTS)
    assert labels == ["det", "nsubj||obj", "obj", "root"]
    assert root == "root"
    # left arcs: det, nsubj||obj; right arcs: obj and the root label
    assert classes == [["S", -1], ["L", 0], ["L", 1], ["R", 2], ["R", 3]]
    gold = training_scan.GoldClasses(labels, classes)
    assert gold(SENTS[0][1], SENTS[0][2]) == [1, 4, 3]
    # a label never seen on a right arc has no class there
    assert gold(numpy.array([-1, 0, 1], dtype="int32"), ["", "root", "det"]) is None


def test_valence_by_hand():
    vocab = numpy.array([10, 20], dtype="uint64")
    table, unk = training_scan.valence(SENTS, vocab)
    # 10 heads nothing; 20 (one occurrence) has one left and one right dependent
    numpy.testing.assert_allclose(table, [[0.0, 1.0], [0.0, 1.0]])
    # UNK = 30 and 40 (two occurrences): 40 has one left dependent
    assert unk == [0.5, 0.0]


def test_lifted_labels_kept_by_count():
    kept, sents = training_scan.keep_lifted_labels(SENTS, 2, "||")
    assert kept == []
    assert sents[1][2] == ["", "nsubj", "root"]
    kept, sents = training_scan.keep_lifted_labels(SENTS, 1, "||")
    assert kept == ["nsubj||obj"] and sents[1][2][1] == "nsubj||obj"


def test_map_words_and_epoch_size():
    vocab = numpy.array([10, 30], dtype="uint64")
    words, known, _ = training_scan.map_words(vocab, numpy.array([30, 20, 10], dtype="uint64"))
    assert words.tolist() == [30, UNK_WORD, 10] and known.tolist() == [True, False, True]
    n_configs, pairs = training_scan.oracle_pairs(SENTS, vocab, 3)
    assert n_configs == sum(oracle(heads)[0].shape[0] for _, heads, _ in SENTS)
    assert pairs is not None and len(pairs) <= 3 and numpy.all(pairs[1:] > pairs[:-1])
    assert training_scan.oracle_pairs(SENTS, vocab, 0)[1] is None
