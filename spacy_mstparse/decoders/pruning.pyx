"""Arc pruning: keep the k best heads of every word under cheap first-pass
scores, so that the expensive scoring (all feature templates; sibling
factors) and the decoders only consider the kept arcs.

A coarse-to-fine filter in the spirit of the vine pruning of Rush & Petrov
(2012) and the first-order pruning of Koo & Collins (2010): for every word
c the k heads with the highest first-pass score stay, and so does c's left
neighbour (the root for the first word), which guarantees that the chain
0 -> 1 -> ... -> n survives: every pruned score matrix still holds a
projective single-root tree, so no decoder fails on it. The rest get the
score -inf, which every decoder treats as a forbidden arc. What pruning
costs is measured as the oracle loss: the share of gold arcs pruned away.
"""
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

import numpy


cdef void keep_best_heads(const float* scores, int n, int k, unsigned char* keep) noexcept nogil:
    cdef int N = n + 1, c, h, j, m
    cdef float v, threshold
    cdef float best[64]
    if k > 64:
        k = 64
    for h in range(N * N):
        keep[h] = 0
    for c in range(1, N):
        if k >= n:
            for h in range(N):
                keep[h * N + c] = h != c
            continue
        # the k largest scores of column c, in decreasing order
        m = 0
        for h in range(N):
            if h == c:
                continue
            v = scores[h * N + c]
            if m < k:
                j = m
                m += 1
            elif v > best[k - 1]:
                j = k - 1
            else:
                continue
            while j > 0 and best[j - 1] < v:
                best[j] = best[j - 1]
                j -= 1
            best[j] = v
        threshold = best[m - 1]
        for h in range(N):
            if h != c and scores[h * N + c] >= threshold:
                keep[h * N + c] = 1
        keep[(c - 1) * N + c] = 1


cdef int prune_arcs(float* scores, int n, int k) noexcept nogil:
    cdef int N = n + 1, h, c
    cdef unsigned char* keep = <unsigned char*>malloc(N * N)
    if keep is NULL:
        return -1
    keep_best_heads(scores, n, k, keep)
    for h in range(N):
        for c in range(1, N):
            if h != c and not keep[h * N + c]:
                scores[h * N + c] = -INFINITY
    free(keep)
    return 0


def prune_heads(scores, int k):
    """Boolean (n+1) x (n+1) mask of the arcs kept from first-pass ``scores``
    (see the module docstring); ``k`` >= 1."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    arr = numpy.ascontiguousarray(scores, dtype=numpy.float32)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
        raise ValueError(f"scores must be a square (n+1) x (n+1) matrix, got {arr.shape}")
    cdef const float[:, ::1] sv = arr
    cdef int n = arr.shape[0] - 1
    mask = numpy.zeros(arr.shape, dtype=numpy.uint8)
    cdef unsigned char[:, ::1] mv = mask
    with nogil:
        keep_best_heads(&sv[0, 0], n, k, &mv[0, 0])
    return mask.astype(bool)


def prune(scores, int k):
    """``scores`` (a C-contiguous float32 (n+1) x (n+1) matrix) with -inf on
    every arc ``prune_heads(scores, k)`` drops, in place; returns it."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    cdef float[:, ::1] sv = scores
    if sv.shape[0] != sv.shape[1] or sv.shape[0] < 1:
        raise ValueError(f"scores must be a square (n+1) x (n+1) matrix, got {scores.shape}")
    if prune_arcs(&sv[0, 0], <int>sv.shape[0] - 1, k) != 0:
        raise MemoryError()
    return scores
