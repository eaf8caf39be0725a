"""Prediction weights as 8-bit codes into a 256-value codebook.

The hashed arc weight table (2^22 float32 weights, 16 MB) is read at random
for every feature of every candidate arc, so parsing is bound by cache
misses. Stored as one byte per bucket (4 MB) the same reads hit the cache
far more often. The codebook is a 1-dimensional k-means (Lloyd 1982; Max
1960) of the non-zero weights, started from the asymptotically optimal
point density of Panter & Dite (1951); code 0 stands
for an exact 0, so buckets no feature ever touched stay 0. With at most 255
distinct non-zero weights the codes are exact. Only prediction reads these:
training updates the float tables, and the saved model keeps float weights
(the codes are derived again at load time).
"""
from libc.stdint cimport uint8_t, uint64_t

import numpy

N_CODES = 256
LLOYD_ITERATIONS = 300
N_BINS = 2**16


cdef class QuantizedWeights:
    """8-bit codes (``codes``, uint8, one per bucket) and the ``codebook``
    (float32, 256 values; ``codebook[0] == 0``). Build with ``quantize``."""

    def __init__(self, codes, codebook):
        codes = numpy.ascontiguousarray(codes, dtype="uint8").reshape(-1)
        codebook = numpy.ascontiguousarray(codebook, dtype="float32").reshape(-1)
        if codebook.shape[0] != N_CODES:
            raise ValueError(f"a codebook has {N_CODES} values, got {codebook.shape[0]}")
        self.codes = codes
        self.codebook = codebook

    def __len__(self):
        return self.codes.shape[0]

    @property
    def nbytes(self):
        return self.codes.nbytes + self.codebook.nbytes

    def dequantize(self):
        """The float32 weights the codes stand for."""
        return self.codebook[self.codes]

    cdef Weights view(self) noexcept:
        cdef Weights w
        cdef const uint8_t[::1] codes = self.codes
        cdef const float[::1] book = self.codebook
        w.dense = NULL
        w.codes = &codes[0] if codes.shape[0] else NULL
        w.codebook = &book[0]
        return w

    def __reduce__(self):
        return (QuantizedWeights, (self.codes, self.codebook))


def _lloyd_codebook(values, n_levels, n_iter):
    """Up to ``n_levels`` sorted centres minimising the squared error of
    ``values``: 1-d k-means (Lloyd) on a histogram of the values (``N_BINS``
    bins, equal in the cube-root domain so that both the dense centre and
    the long tails are resolved), started from the Panter-Dite point
    density (proportional to the cube root of the values' density)."""
    distinct = numpy.unique(values)
    if distinct.shape[0] <= n_levels:
        return distinct
    y = numpy.cbrt(values)
    lo, hi = y.min(), y.max()
    cell = numpy.minimum(((y - lo) / (hi - lo) * N_BINS).astype("int64"), N_BINS - 1)
    counts = numpy.bincount(cell, minlength=N_BINS).astype("float64")
    sums = numpy.bincount(cell, weights=values, minlength=N_BINS)
    filled = counts > 0
    points, mass = sums[filled] / counts[filled], counts[filled]
    if points.shape[0] <= n_levels:
        return numpy.unique(points)
    density = numpy.cumsum(mass ** (1.0 / 3.0))
    density /= density[-1]
    start = numpy.searchsorted(density, (numpy.arange(n_levels) + 0.5) / n_levels)
    centres = numpy.unique(points[numpy.minimum(start, points.shape[0] - 1)])
    for _ in range(n_iter):
        bounds = (centres[1:] + centres[:-1]) / 2
        cell = numpy.searchsorted(bounds, points)
        total = numpy.bincount(cell, weights=mass, minlength=centres.shape[0])
        moment = numpy.bincount(cell, weights=mass * points, minlength=centres.shape[0])
        centres = numpy.unique(numpy.where(total > 0, moment / numpy.maximum(total, 1e-300),
                                           centres))
    return centres


def quantize(weights, int n_iter=LLOYD_ITERATIONS):
    """``QuantizedWeights`` of a float weight vector: 0 stays exactly 0, the
    non-zero weights map to the nearest of up to 255 k-means centres."""
    w = numpy.ascontiguousarray(weights, dtype="float32").reshape(-1)
    nonzero = w[w != 0].astype("float64")
    centres = _lloyd_codebook(nonzero, N_CODES - 1, n_iter) if nonzero.shape[0] else \
        numpy.zeros(0)
    codebook = numpy.zeros(N_CODES, dtype="float32")
    codebook[1:1 + centres.shape[0]] = centres
    codes = numpy.zeros(w.shape[0], dtype="uint8")
    if centres.shape[0]:
        bounds = (centres[1:] + centres[:-1]) / 2
        where = numpy.flatnonzero(w)
        codes[where] = 1 + numpy.searchsorted(bounds, w[where].astype("float64"))
    return QuantizedWeights(codes, codebook)


cdef int weights_view(object weights, uint64_t n, Weights* out) except -1:
    cdef const float[::1] dense
    if isinstance(weights, QuantizedWeights):
        if <uint64_t>len(weights) != n:
            raise ValueError(f"weights has {len(weights)} entries, expected {n}")
        out[0] = (<QuantizedWeights>weights).view()
        return 0
    dense = weights
    if <uint64_t>dense.shape[0] != n:
        raise ValueError(f"weights has {dense.shape[0]} entries, expected {n}")
    out.dense = &dense[0]
    out.codes = NULL
    out.codebook = NULL
    return 0
