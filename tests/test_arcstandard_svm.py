"""One-vs-rest SVMs: the Cython sub-gradient steps against a direct numpy
implementation of the same updates."""
import pickle

import numpy
import pytest

from spacy_mstparse.transition.svm import OneVsRestSVM


def dataset(seed, n_rows=300, n_feats=32, n_classes=4):
    rng = numpy.random.RandomState(seed)
    X = (rng.rand(n_rows, n_feats) < 0.25) * numpy.round(rng.rand(n_rows, n_feats) * 2, 2)
    X[:, 0] = 1.0  # bias
    truth = rng.randn(n_feats, n_classes)
    y = numpy.argmax(X @ truth + 0.3 * rng.randn(n_rows, n_classes), axis=1).astype("int32")
    indptr, idx, val = [0], [], []
    for row in X:
        nz = numpy.flatnonzero(row)
        idx.extend(nz)
        val.extend(row[nz])
        indptr.append(len(idx))
    csr = (
        numpy.array(indptr, dtype="int64"),
        numpy.array(idx, dtype="uint64"),
        numpy.array(val, dtype="float32"),
    )
    return X.astype("float32").astype("float64"), y, csr


def numpy_pegasos(X, y, n_classes, lam, epochs):
    """w_c <- (1 - 1/t) w_c + 1/(lam t) [y_c w_c.x < 1] y_c x, one example at
    a time, every class with y_c = +1 for the gold class, -1 otherwise."""
    W = numpy.zeros((X.shape[1], n_classes))
    t = 0
    errors = []
    for _ in range(epochs):
        wrong = 0
        for x, gold in zip(X, y):
            t += 1
            scores = x @ W
            wrong += int(numpy.argmax(scores) != gold)
            Y = numpy.where(numpy.arange(n_classes) == gold, 1.0, -1.0)
            violated = Y * scores < 1
            W = (1 - 1 / t) * W + (1 / (lam * t)) * numpy.outer(x, violated * Y)
        errors.append(wrong)
    return W, errors


@pytest.mark.parametrize("lam", [1e-3, 1e-1])
def test_matches_numpy_reference(lam):
    X, y, csr = dataset(0)
    svm = OneVsRestSVM(32, 4, lam)
    got_errors = [svm.partial_fit(*csr, y)[0] for _ in range(4)]
    W, errors = numpy_pegasos(X, y, 4, lam, 4)
    assert svm.t == 4 * len(y)
    numpy.testing.assert_allclose(svm.weights, W, rtol=1e-4, atol=1e-5 * numpy.abs(W).max())
    # decision values and per-epoch error counts agree as well (argmax ties
    # go to the lowest class in both)
    numpy.testing.assert_allclose(svm.decision_function(*csr), X @ W, rtol=1e-3, atol=1e-3)
    assert got_errors == errors
    # it learned something: far fewer errors than the 3/4 of chance
    assert errors[-1] < 0.4 * len(y)


def test_hashing_folds_ids_into_buckets():
    X, y, (indptr, idx, val) = dataset(1)
    folded = OneVsRestSVM(32, 4, 1e-2)
    shifted = OneVsRestSVM(32, 4, 1e-2)
    folded.partial_fit(indptr, idx, val, y)
    shifted.partial_fit(indptr, idx + numpy.uint64(32 * 12345), val, y)
    assert numpy.array_equal(folded.table, shifted.table)


def test_validation_and_pickle():
    with pytest.raises(ValueError, match="power of two"):
        OneVsRestSVM(30, 3, 1e-3)
    with pytest.raises(ValueError, match="lambda"):
        OneVsRestSVM(32, 3, 0.0)
    X, y, csr = dataset(2)
    svm = OneVsRestSVM(32, 4, 1e-2)
    with pytest.raises(ValueError, match="not a class"):
        svm.partial_fit(*csr, numpy.full_like(y, 9))
    svm.partial_fit(*csr, y)
    copy = pickle.loads(pickle.dumps(svm))
    assert copy.t == svm.t and numpy.array_equal(copy.table, svm.table)
    assert numpy.array_equal(copy.decision_function(*csr), svm.decision_function(*csr))
