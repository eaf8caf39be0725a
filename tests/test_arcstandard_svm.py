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


def numpy_pegasos(X, y, n_classes, lam, epochs, W=None, t=0):
    """w_c <- (1 - 1/t) w_c + 1/(lam t) [y_c w_c.x < 1] y_c x, one example at
    a time, every class with y_c = +1 for the gold class, -1 otherwise.
    Returns the final weights, the errors per epoch and the average of the
    weights after each step k weighted by k."""
    W = numpy.zeros((X.shape[1], n_classes)) if W is None else W.copy()
    total = numpy.zeros_like(W)
    weight_sum = 0
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
            total += t * W
            weight_sum += t
        errors.append(wrong)
    return W, errors, total / weight_sum


@pytest.mark.parametrize("lam", [1e-3, 1e-1])
def test_matches_numpy_reference(lam):
    X, y, csr = dataset(0)
    svm = OneVsRestSVM(32, 4, lam)
    got_errors = [svm.partial_fit(*csr, y)[0] for _ in range(4)]
    W, errors, _ = numpy_pegasos(X, y, 4, lam, 4)
    assert svm.t == 4 * len(y)
    numpy.testing.assert_allclose(svm.weights, W, rtol=1e-4, atol=1e-5 * numpy.abs(W).max())
    # decision values and per-epoch error counts agree as well (argmax ties
    # go to the lowest class in both)
    numpy.testing.assert_allclose(svm.decision_function(*csr), X @ W, rtol=1e-3, atol=1e-3)
    assert got_errors == errors
    # it learned something: far fewer errors than the 3/4 of chance
    assert errors[-1] < 0.4 * len(y)


@pytest.mark.parametrize("lam", [1e-3, 1e-1])
def test_averaging_matches_numpy_reference(lam):
    """The lazily accumulated average equals the t-weighted average of the
    iterates computed step by step, also after a warm start."""
    X, y, csr = dataset(3)
    svm = OneVsRestSVM(32, 4, lam, average=True)
    for _ in range(3):
        svm.partial_fit(*csr, y)
    W, _, mean = numpy_pegasos(X, y, 4, lam, 3)
    numpy.testing.assert_allclose(svm.weights, W, rtol=1e-4, atol=1e-5 * numpy.abs(W).max())
    numpy.testing.assert_allclose(svm.averaged_weights(), mean, rtol=1e-3,
                                  atol=1e-4 * numpy.abs(mean).max())
    assert not numpy.allclose(mean, W)
    # warm start from the current weights: averaging restarts there
    warm = OneVsRestSVM(32, 4, lam, average=True)
    warm.set_weights(W, svm.t)
    warm.partial_fit(*csr, y)
    W2, _, mean2 = numpy_pegasos(X, y, 4, lam, 1, W=W, t=svm.t)
    numpy.testing.assert_allclose(warm.weights, W2, rtol=1e-3, atol=1e-4 * numpy.abs(W2).max())
    numpy.testing.assert_allclose(warm.averaged_weights(), mean2, rtol=1e-3,
                                  atol=1e-4 * numpy.abs(mean2).max())


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
    averaged = OneVsRestSVM(32, 4, 1e-2, average=True)
    averaged.partial_fit(*csr, y)
    copy = pickle.loads(pickle.dumps(averaged))
    assert numpy.array_equal(copy.averaged_weights(), averaged.averaged_weights())


def test_compact_svm_scores_as_the_dense_table():
    """A prediction-only SVM over the non-zero rows (and a row index) scores
    every example exactly as the dense table, pickles, and cannot train."""
    from spacy_mstparse.transition.svm import compact_svm

    X, y, csr = dataset(4, n_feats=64)
    svm = OneVsRestSVM(64, 4, 1e-2)
    svm.partial_fit(*csr, y)
    dense = svm.table.copy()
    dense[::3] = 0.0  # some all-zero rows
    nonzero = numpy.flatnonzero((dense != 0).any(axis=1))
    index = numpy.full(64, -1, dtype="int32")
    index[nonzero] = numpy.arange(nonzero.shape[0])
    compact = compact_svm(dense[nonzero], index, 1e-2, svm.t)
    full = OneVsRestSVM(64, 4, 1e-2)
    full.set_state({"table": dense, "t": svm.t, "lam": 1e-2})
    assert compact.compact and compact.table.shape == (nonzero.shape[0], 4)
    assert numpy.array_equal(compact.dense_table(), dense)
    assert numpy.array_equal(compact.decision_function(*csr), full.decision_function(*csr))
    numpy.testing.assert_allclose(compact.decision_function(*csr), X @ (dense * svm.scale),
                                  rtol=1e-4, atol=1e-6)
    copy = pickle.loads(pickle.dumps(compact))
    assert numpy.array_equal(copy.decision_function(*csr), compact.decision_function(*csr))
    with pytest.raises(ValueError, match="only predicts"):
        compact.partial_fit(*csr, y)
    with pytest.raises(ValueError, match="out of range"):
        compact_svm(dense[nonzero], numpy.full(64, 99, dtype="int32"), 1e-2)
