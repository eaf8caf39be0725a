"""Scaled, lazily averaged weight table shared by all online learners.

The weights are stored as ``w = scale * v`` so that multiplying the whole
vector by a constant (Pegasos' shrink and projection steps, Shalev-Shwartz et
al. 2007 / Lee et al. 2010) costs O(1). The averaged weights used for
prediction (McDonald et al. 2005, Figure 3; Collins 2002) are the mean of ``w``
over all "ticks" (one tick per learning step). They are kept with the usual
lazy-update trick, extended to the scale factor:

    S           = sum of the scale s over the ticks ("cum_scale"; restarts
                  from 0 at each renormalisation, see below)
    acc[f]      = sum of w[f] over the ticks up to the time stamp[f]
    stamp[f]    = value of S when bucket f was last flushed

Between two touches of bucket f, v[f] is constant, so the ticks in between
contribute ``v[f] * (S_now - stamp[f])`` to the sum of w[f]. A bucket is
flushed (``acc[f] += v[f] * (S - stamp[f]); stamp[f] = S``) just before v[f]
changes, which keeps every update O(number of touched buckets).

Two rare operations are O(table): ``scale_by(0)`` (all weights become 0; the
accumulated average is preserved) and renormalisation, when |s| leaves
[1e-6, 1e6]: every non-zero bucket is flushed, ``v *= s``, ``s = 1`` and the
time origin is moved (``S = 0``, flushed stamps = 0), so ``cum_scale`` is the
sum of s over the ticks since the last renormalisation. ||v||^2 is recomputed
exactly at that point, which also removes the rounding drift of its
incremental updates.

Why 1e-6: a tick of scale s is stored as an increment of S, with absolute
error ~eps * S, i.e. a relative error ~eps * S / s on that tick's w. With
float64 S this stays negligible only while s is not tiny compared with S
(~1 after a renormalisation); the float32 range of v would allow much smaller
s. In Pegasos the product of the shrink and projection factors falls fast only
while eta_t ||x|| is much larger than the radius 1/sqrt(lam) (the first
~||x|| / sqrt(lam) steps), and like 1/t afterwards, so renormalisations are
frequent early in training and very rare later.
"""
from libc.math cimport fabs, isfinite
from libc.stdint cimport uint64_t

import numpy as np


cdef extern from *:
    void __builtin_prefetch(const void* p) noexcept nogil

# Updates read this many buckets ahead (add_ptr).
DEF PREFETCH_AHEAD = 8

# Renormalise when |scale| leaves [RENORM_LOW, RENORM_HIGH].
RENORM_LOW = 1e-6
RENORM_HIGH = 1e6
cdef double _RENORM_LOW = RENORM_LOW
cdef double _RENORM_HIGH = RENORM_HIGH


def _rebuild_weight_table(v, acc, stamp, double scale, double cum_scale,
                          long long n_ticks, double sq_norm_v):
    """Unpickling helper (see WeightTable.__reduce__)."""
    cdef WeightTable table = WeightTable.__new__(WeightTable)
    table._install(np.require(v, dtype=np.float32, requirements=["C", "W"]),
                   np.require(acc, dtype=np.float64, requirements=["C", "W"]),
                   np.require(stamp, dtype=np.float64, requirements=["C", "W"]),
                   scale, cum_scale, n_ticks, sq_norm_v)
    return table


# Buckets per slice of the O(table) copies (current, averaged): a float64
# buffer of 32 MB, which the allocator maps and returns to the system.
_CHUNK = 1 << 22


cdef class WeightTable:
    """w = scale * v over ``n_buckets`` float32 weights, with lazy averaging.

    Attributes (read-only): ``n_buckets``, ``scale``, ``cum_scale``,
    ``n_ticks``, ``sq_norm_v``; ``values`` is a read-only view of v for
    scoring (w = scale * values). The arrays themselves (v, the running sums
    and the time stamps) are private: every change goes through a method,
    which keeps the averaging invariant.
    """

    def __init__(self, Py_ssize_t n_buckets):
        if n_buckets <= 0:
            raise ValueError(f"n_buckets must be positive, got {n_buckets}")
        self._bind(
            np.zeros(n_buckets, dtype=np.float32),
            np.zeros(n_buckets, dtype=np.float64),
            np.zeros(n_buckets, dtype=np.float64),
        )
        self.scale = 1.0
        self.cum_scale = 0.0
        self.n_ticks = 0
        self.sq_norm_v = 0.0

    cdef void _bind(self, object v, object acc, object stamp):
        self._v_arr = v
        self._acc_arr = acc
        self._stamp_arr = stamp
        self._v = v
        self._acc = acc
        self._stamp = stamp
        self.n_buckets = v.shape[0]

    cdef void _install(self, object v, object acc, object stamp, double scale,
                       double cum_scale, long long n_ticks, double sq_norm_v) except *:
        """Take these arrays (C-contiguous and writable, of one length) and
        scalars as the table's state, after checking them."""
        if v.ndim != 1 or acc.shape != v.shape or stamp.shape != v.shape:
            raise ValueError("v, acc and stamp must be 1-d arrays of the same length")
        if v.shape[0] == 0:
            raise ValueError("empty weight table")
        if not (isfinite(scale) and scale != 0.0):
            raise ValueError(f"invalid scale {scale}")
        if n_ticks < 0:
            raise ValueError(f"invalid n_ticks {n_ticks}")
        self._bind(v, acc, stamp)
        self.scale = scale
        self.cum_scale = cum_scale
        self.n_ticks = n_ticks
        self.sq_norm_v = sq_norm_v

    # ------------------------------------------------------------------ state

    @property
    def values(self):
        """The stored vector v as a read-only float32 view (not a copy): the
        weights are ``scale * values``. Score with it (the scorers take
        ``(values, scale)``); change the weights through the methods."""
        # over a read-only buffer, so that the flag cannot be turned back on
        return np.frombuffer(memoryview(self._v_arr).toreadonly(), dtype=np.float32)

    def __reduce__(self):
        return (
            _rebuild_weight_table,
            (self._v_arr, self._acc_arr, self._stamp_arr, self.scale,
             self.cum_scale, self.n_ticks, self.sq_norm_v),
        )

    # ------------------------------------------------------- C-level helpers

    cdef double dot_ptr(self, const uint64_t* idx, const double* val,
                        Py_ssize_t n) noexcept nogil:
        cdef double total = 0.0
        cdef Py_ssize_t i
        for i in range(n):
            total += self._v[idx[i]] * val[i]
        return total * self.scale

    cdef double sum_ids(self, const uint64_t* ids, Py_ssize_t n) noexcept nogil:
        """Score of a list of (possibly repeated) feature ids with value 1."""
        cdef double total = 0.0
        cdef Py_ssize_t i
        for i in range(n):
            total += self._v[ids[i]]
        return total * self.scale

    cdef void add_ptr(self, const uint64_t* idx, const double* val, Py_ssize_t n,
                      double step) noexcept nogil:
        """w += step * x without bounds checks (repeated indices add up)."""
        cdef double factor = step / self.scale
        cdef double dsq = 0.0
        cdef Py_ssize_t i
        cdef uint64_t f, ahead
        for i in range(n):
            if i + PREFETCH_AHEAD < n:  # the buckets are far apart: fetch them early
                ahead = idx[i + PREFETCH_AHEAD]
                __builtin_prefetch(&self._v[ahead])
                __builtin_prefetch(&self._stamp[ahead])
                __builtin_prefetch(&self._acc[ahead])
            f = idx[i]
            dsq += self._store(f, <float>(self._v[f] + factor * val[i]))
        self.sq_norm_v += dsq
        if self.sq_norm_v < 0.0:
            self.sq_norm_v = 0.0

    cdef double _store(self, uint64_t f, float value) noexcept nogil:
        """v[f] = value after flushing f's accumulator (the averaging
        invariant: a bucket is brought up to date just before it changes);
        returns the change of ||v||^2."""
        cdef double old = self._v[f]
        if self._stamp[f] != self.cum_scale:
            # (a table that never ticks never writes its running sums and
            # stamps: their pages stay unallocated)
            self._acc[f] += old * (self.cum_scale - self._stamp[f])
            self._stamp[f] = self.cum_scale
        self._v[f] = value
        return (<double>value) * value - old * old

    cdef float stored(self, uint64_t f) noexcept nogil:
        """The stored value v[f] (the weight is scale * v[f])."""
        return self._v[f]

    cdef void scale_bucket(self, uint64_t f, double factor) noexcept nogil:
        """w[f] *= factor, flushing f's accumulator first (O(1))."""
        cdef double old = self._v[f]
        if factor == 1.0 or old == 0.0:
            return
        self.sq_norm_v += self._store(f, <float>(old * factor))
        if self.sq_norm_v < 0.0:
            self.sq_norm_v = 0.0

    cdef void assign_ptr(self, const uint64_t* idx, const double* values,
                         Py_ssize_t n) noexcept nogil:
        """w[idx[i]] = values[i] (the stored v is values / scale), flushing
        the accumulators first."""
        cdef double dsq = 0.0
        cdef Py_ssize_t i
        for i in range(n):
            dsq += self._store(idx[i], <float>(values[i] / self.scale))
        self.sq_norm_v += dsq
        if self.sq_norm_v < 0.0:
            self.sq_norm_v = 0.0

    cdef void _flush_all(self) noexcept nogil:
        cdef Py_ssize_t f
        cdef double S = self.cum_scale
        for f in range(self.n_buckets):
            # A zero bucket adds nothing to the sum, and add() re-stamps it
            # before it becomes non-zero: untouched buckets stay untouched.
            if self._v[f] != 0.0 and self._stamp[f] != S:
                self._acc[f] += self._v[f] * (S - self._stamp[f])
                self._stamp[f] = S

    cdef void _renormalize(self) noexcept nogil:
        """O(table): flush, fold the scale into v (s = 1), restart S from 0."""
        cdef Py_ssize_t f
        cdef double s = self.scale
        cdef double S = self.cum_scale
        cdef double sq = 0.0
        cdef float x
        for f in range(self.n_buckets):
            if self._v[f] != 0.0:
                self._acc[f] += self._v[f] * (S - self._stamp[f])
                self._stamp[f] = 0.0
                x = <float>(self._v[f] * s)
                self._v[f] = x
                sq += (<double>x) * x
        # Zero buckets keep stale stamps: harmless, add() re-stamps a bucket
        # before it becomes non-zero and v * (S - stamp) = 0 meanwhile.
        self.scale = 1.0
        self.cum_scale = 0.0
        self.sq_norm_v = sq

    # ------------------------------------------------------------- public API

    cpdef double dot(self, const uint64_t[:] idx, const double[:] val) except? -1.0:
        """Current w . x for a sparse x = (idx, val)."""
        cdef Py_ssize_t n = idx.shape[0]
        cdef Py_ssize_t i
        cdef double total = 0.0
        cdef uint64_t nb = <uint64_t>self.n_buckets
        cdef bint bad = False
        if val.shape[0] != n:
            raise ValueError(f"idx and val differ in length ({n} != {val.shape[0]})")
        with nogil:
            for i in range(n):
                if idx[i] >= nb:
                    bad = True
                    break
                total += self._v[idx[i]] * val[i]
        if bad:
            raise IndexError(f"feature index out of range for {self.n_buckets} buckets")
        return total * self.scale

    cdef Py_ssize_t _checked_length(self, const uint64_t[:] idx, const double[:] val) except -1:
        """len(idx), after checking that val has that length and that every
        index is < n_buckets (IndexError before anything changes)."""
        cdef Py_ssize_t n = idx.shape[0]
        cdef Py_ssize_t i
        cdef uint64_t nb = <uint64_t>self.n_buckets
        cdef bint bad = False
        if val.shape[0] != n:
            raise ValueError(f"idx and values differ in length ({n} != {val.shape[0]})")
        with nogil:
            for i in range(n):
                if idx[i] >= nb:
                    bad = True
                    break
        if bad:
            raise IndexError(f"feature index out of range for {self.n_buckets} buckets")
        return n

    cpdef void add(self, const uint64_t[:] idx, const double[:] val, double step) except *:
        """w += step * x (v += step/s * x), flushing the touched accumulators first.

        Feature vectors are normally sorted unique; a repeated index is simply
        added twice. Raises IndexError (before changing anything) if an index
        is >= n_buckets.
        """
        cdef Py_ssize_t n = self._checked_length(idx, val)
        if step == 0.0 or n == 0:
            return
        with nogil:
            self.add_ptr(&idx[0], &val[0], n, step)

    cpdef void scale_by(self, double factor) except *:
        """w *= factor in O(1) (O(table) if factor == 0 or on renormalisation)."""
        if not isfinite(factor):
            raise ValueError(f"scale factor must be finite, got {factor}")
        if factor == 1.0:
            return
        if factor == 0.0:
            # w becomes 0. Keep the history of the average: flush, then zero v.
            with nogil:
                self._flush_all()
            self._v_arr.fill(0.0)
            self.scale = 1.0
            self.cum_scale = 0.0   # all v = 0: stamps are irrelevant (see _renormalize)
            self.sq_norm_v = 0.0
            return
        self.scale *= factor
        if fabs(self.scale) < _RENORM_LOW or fabs(self.scale) > _RENORM_HIGH:
            with nogil:
                self._renormalize()

    def assign(self, const uint64_t[:] idx, const double[:] values):
        """w[idx] = values (bounds-checked; the average keeps its history)."""
        cdef Py_ssize_t n = self._checked_length(idx, values)
        if n:
            with nogil:
                self.assign_ptr(&idx[0], &values[0], n)

    def scale_buckets(self, const uint64_t[:] idx, const double[:] factors):
        """w[idx[i]] *= factors[i] (bounds-checked)."""
        cdef Py_ssize_t i, n = self._checked_length(idx, factors)
        with nogil:
            for i in range(n):
                self.scale_bucket(idx[i], factors[i])

    def restart_average(self, weights=None):
        """Start a new run from w = ``weights`` (default: the current w):
        scale 1, the average restarted (no tick yet). Used to warm-start
        training from saved weights and by learners with stages (the
        sparseptron's debiasing, the 1-slack SSVM's solution)."""
        v = self.current() if weights is None else weights
        self.set_mixed(v, np.zeros(self.n_buckets, dtype=np.float64), 0)

    def set_mixed(self, weights, totals, long long n_ticks):
        """Hold ``weights`` as the current w, with ``totals`` as the sum of w
        over ``n_ticks`` past ticks (parameter mixing: the driver's mixed
        weights and running sum, McDonald, Hall & Mann 2010), so that the
        average is ``totals / n_ticks`` now and training goes on from it:
        scale 1, every bucket flushed at time 0 (running sum = totals). The
        arrays are copied."""
        v = np.array(weights, dtype=np.float32, copy=True).reshape(-1)
        acc = np.array(totals, dtype=np.float64, copy=True).reshape(-1)
        if v.shape[0] != self.n_buckets or acc.shape[0] != self.n_buckets:
            raise ValueError(f"expected {self.n_buckets} weights and totals, "
                             f"got {v.shape[0]} and {acc.shape[0]}")
        v64 = v.astype(np.float64)
        self._install(v, acc, np.zeros(self.n_buckets, dtype=np.float64), 1.0, 0.0,
                      n_ticks, float(np.dot(v64, v64)))

    @classmethod
    def from_weights(cls, weights):
        """A table holding ``weights`` as its current w, average restarted."""
        table = cls(np.asarray(weights).shape[0])
        table.restart_average(weights)
        return table

    def is_plain(self):
        """Whether the stored values are w itself with no averaging history:
        scale 1 and no tick since creation or the last restart (the average
        is then w). A learner that never ticks (the 1-slack SSVM) can then
        rewrite w bucket by bucket instead of restarting the table."""
        return self.scale == 1.0 and self.n_ticks == 0 and self.cum_scale == 0.0

    def touched_buckets(self):
        """Boolean mask of the buckets holding any state (weight, running
        sum or time stamp non-zero): the buckets some update has reached.
        Lazy averaging leaves every other bucket alone (O(touched) steps)."""
        return (self._v_arr != 0.0) | (self._acc_arr != 0.0) | (self._stamp_arr != 0.0)

    def recompute_sq_norm(self):
        """||v||^2 exactly (O(table)), removing the drift of incremental updates."""
        v = self._v_arr.astype(np.float64)
        self.sq_norm_v = float(np.dot(v, v))
        return self.sq_norm_v

    def renormalize(self):
        """Force the O(table) renormalisation (v *= s, s = 1)."""
        with nogil:
            self._renormalize()

    cpdef void tick(self) noexcept:
        """End one averaging step: the current w is added to the running sum."""
        self.cum_scale += self.scale
        self.n_ticks += 1

    cpdef double sq_norm(self) noexcept:
        """||w||^2 = s^2 ||v||^2 (O(1))."""
        return self.scale * self.scale * self.sq_norm_v

    def current(self):
        """The current weights s * v as a new float32 array (O(table))."""
        if self.scale == 1.0:
            return self._v_arr.copy()
        out = np.empty(self.n_buckets, dtype=np.float32)
        work = np.empty(min(_CHUNK, self.n_buckets), dtype=np.float64)
        for start in range(0, self.n_buckets, _CHUNK):
            stop = min(start + _CHUNK, self.n_buckets)
            part = work[:stop - start]
            part[...] = self._v_arr[start:stop]
            part *= self.scale
            out[start:stop] = part
        return out

    def averaged(self):
        """The averaged weights (1/n_ticks) sum_ticks w as a float32 array (O(table)).

        Equals ``current()`` before the first tick. Does not modify the table.
        Computed a slice at a time in one float64 buffer: the intermediates
        take at most 32 MB, not three times the table.
        """
        if self.n_ticks == 0:
            return self.current()
        out = np.empty(self.n_buckets, dtype=np.float32)
        work = np.empty(min(_CHUNK, self.n_buckets), dtype=np.float64)
        for start in range(0, self.n_buckets, _CHUNK):
            stop = min(start + _CHUNK, self.n_buckets)
            part = work[:stop - start]
            np.subtract(self.cum_scale, self._stamp_arr[start:stop], out=part)
            np.multiply(self._v_arr[start:stop], part, out=part)
            np.add(self._acc_arr[start:stop], part, out=part)
            part /= self.n_ticks
            out[start:stop] = part
        return out

    def __repr__(self):
        return (f"WeightTable(n_buckets={self.n_buckets}, scale={self.scale:g}, "
                f"n_ticks={self.n_ticks})")
