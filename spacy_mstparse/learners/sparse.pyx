"""Sparse feature-vector helpers for the learners.

``sparse_difference`` turns the (repeated) bucket ids of the gold and the
predicted tree into the update vector phi(gold) - phi(predicted) used by every
learner (McDonald et al. 2005; Crammer et al. 2006; Lee et al. 2010), in the
sorted-unique ``(idx, val)`` form that ``WeightTable`` expects.
"""
from libc.stdint cimport uint64_t

import numpy as np


cdef double sparse_sq_norm(const double[:] val) noexcept nogil:
    """||x||^2 of a sparse vector given its values."""
    cdef double total = 0.0
    cdef Py_ssize_t i
    for i in range(val.shape[0]):
        total += val[i] * val[i]
    return total


cdef double sparse_dot(const uint64_t[:] ia, const double[:] va,
                       const uint64_t[:] ib, const double[:] vb) noexcept nogil:
    """x_a . x_b of two sparse vectors with sorted unique ids. The merge
    advances without branching on the ids (their order is unpredictable)."""
    cdef Py_ssize_t i = 0, j = 0, na = ia.shape[0], nb = ib.shape[0]
    cdef double total = 0.0
    cdef uint64_t a, b
    while i < na and j < nb:
        a = ia[i]
        b = ib[j]
        total += va[i] * vb[j] * (a == b)
        i += a <= b
        j += b <= a
    return total


def dot(const uint64_t[:] ia, const double[:] va, const uint64_t[:] ib, const double[:] vb):
    """x_a . x_b of two sparse vectors with sorted unique ids (Python wrapper)."""
    return sparse_dot(ia, va, ib, vb)


def sq_norm(const double[:] val):
    """||x||^2 of a sparse vector given its values (Python wrapper)."""
    return sparse_sq_norm(val)


cdef Py_ssize_t merge_sorted_counts(const uint64_t* g, Py_ssize_t ng, const uint64_t* p,
                                    Py_ssize_t np_, uint64_t* out_idx,
                                    double* out_val) noexcept nogil:
    """Merge two sorted id lists into sorted unique ids with count_g - count_p
    (ids whose counts cancel are dropped); returns their number."""
    cdef Py_ssize_t i = 0, j = 0, k = 0
    cdef uint64_t f
    cdef double c
    while i < ng or j < np_:
        if j >= np_ or (i < ng and g[i] <= p[j]):
            f = g[i]
        else:
            f = p[j]
        c = 0.0
        while i < ng and g[i] == f:
            c += 1.0
            i += 1
        while j < np_ and p[j] == f:
            c -= 1.0
            j += 1
        if c != 0.0:
            out_idx[k] = f
            out_val[k] = c
            k += 1
    return k


def sparse_difference(gold_ids, pred_ids):
    """phi(gold) - phi(pred) from two arrays of bucket ids with repetitions.

    Returns ``(idx, val)``: ``idx`` sorted unique uint64 ids, ``val`` float64
    ``count_in_gold - count_in_pred``; ids whose counts cancel are dropped.
    """
    cdef const uint64_t[::1] g = np.sort(np.asarray(gold_ids).astype(np.uint64, copy=False).ravel())
    cdef const uint64_t[::1] p = np.sort(np.asarray(pred_ids).astype(np.uint64, copy=False).ravel())
    n_max = g.shape[0] + p.shape[0]
    idx = np.empty(max(1, n_max), dtype=np.uint64)
    val = np.empty(max(1, n_max), dtype=np.float64)
    cdef uint64_t[::1] idx_view = idx
    cdef double[::1] val_view = val
    cdef const uint64_t* gp = &g[0] if g.shape[0] else NULL
    cdef const uint64_t* pp = &p[0] if p.shape[0] else NULL
    cdef Py_ssize_t k
    with nogil:
        k = merge_sorted_counts(gp, g.shape[0], pp, p.shape[0], &idx_view[0], &val_view[0])
    return idx[:k].copy(), val[:k].copy()
