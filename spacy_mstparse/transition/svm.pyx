"""One-vs-rest binary linear SVMs over one hashed sparse feature space.

Choo & Shivaditya (the Cornell CS 5740 report, 2020, section 4)
train one binary SVM per transition class, y = +1 for configurations whose
oracle transition is that class and -1 otherwise, on
lambda/2 ||w||^2 + hinge loss, by sub-gradient descent with learning rate
1/(lambda t) (the Pegasos step; Shalev-Shwartz et al. 2007), stopping when an
epoch lowers the training error by less than delta.

One stochastic step on example (x, y) at step t (t = 1, 2, ...) is, for every
class c with y_c = +1 if c is the gold class else -1::

    violated_c = y_c * (w_c . x) < 1
    w_c <- (1 - 1/t) w_c + 1/(lambda t) * violated_c * y_c * x

All classes share t, so they shrink by the same factor, and unrolling gives
w_c(after t steps) = S_c / (lambda t) with S_c the running sum of
y_c * x over the steps where class c violated its margin. The table stores S
(``n_buckets x n_classes`` float32, one contiguous row of class weights per
hashed feature): a step adds to the rows of the example's features only,
never touches the rest of the table, and prediction (an argmax over classes)
reads S directly, since the positive factor 1/(lambda t) changes no
ranking. The intercept is the weight of a bias feature (regularized like
the others).

For prediction only, ``compact_svm`` holds just the non-zero rows of a
table plus an int32 index bucket -> row (-1: an all-zero row, skipped when
scoring): after training on EWT a third of the hashed rows are zero, and a
loaded parser needs 2/3 of the dense table's memory.

With ``average=True`` the SVMs also keep the t-weighted average of the
iterates w_t0+1 .. w_T, sum_k k w_k / sum_k k (not in the seed, which used the
last iterate; weights k as in Lacoste-Julien, Schmidt & Bach 2012 for
strongly convex objectives: a uniform average would be dominated by the
first iterates, whose norm grows like 1/(lambda k)). Since k w_k = S_k /
lambda, this is the averaged-perceptron sum of S, accumulated lazily per row
(a row's S is constant between its updates), so a step still costs
O(touched rows).
"""
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memset


cdef extern from *:
    void __builtin_prefetch(const void* addr) nogil

import numpy


cdef class OneVsRestSVM:
    """n_classes binary SVMs over ``n_buckets`` hashed features (a power of two)."""

    def __init__(self, uint64_t n_buckets, int n_classes, double lam, bint average=False):
        if n_buckets == 0 or (n_buckets & (n_buckets - 1)) != 0:
            raise ValueError(f"n_buckets must be a power of two, got {n_buckets}")
        if n_classes < 1:
            raise ValueError(f"n_classes must be >= 1, got {n_classes}")
        if not lam > 0:
            raise ValueError(f"lambda must be > 0, got {lam}")
        self.n_buckets = n_buckets
        self.n_classes = n_classes
        self.lam = lam
        self.average = average
        self.compact = False
        self.index = NULL
        self.t = 0
        self._set_table(numpy.zeros((n_buckets, n_classes), dtype="float32"))
        self._reset_average()

    def _set_table(self, table):
        table = numpy.ascontiguousarray(table, dtype="float32")
        if not self.compact and table.shape != (self.n_buckets, self.n_classes):
            raise ValueError(
                f"SVM table has shape {table.shape}, expected ({self.n_buckets}, {self.n_classes})"
            )
        if not table.flags.writeable:
            table = table.copy()
        self._table = table
        cdef float[:, ::1] view = table
        self.S = &view[0, 0] if table.shape[0] else NULL

    def _reset_average(self):
        """Average the iterates from the current step on."""
        self.t0 = self.t
        if not self.average:
            self._acc = self._stamp = None
            self.acc = NULL
            self.stamp = NULL
            return
        self._set_average(
            numpy.zeros((self.n_buckets, self.n_classes), dtype="float32"),
            numpy.full(self.n_buckets, self.t, dtype="int64"),
        )

    def _set_average(self, acc, stamp):
        acc = numpy.ascontiguousarray(acc, dtype="float32")
        stamp = numpy.ascontiguousarray(stamp, dtype="int64")
        if acc.shape != (self.n_buckets, self.n_classes) or stamp.shape != (self.n_buckets,):
            raise ValueError("averaging state does not match the table")
        self._acc, self._stamp = acc, stamp
        cdef float[:, ::1] av = acc
        cdef int64_t[:] sv = stamp
        self.acc = &av[0, 0]
        self.stamp = &sv[0]

    cdef void raw_scores(self, const uint64_t* ids, const float* vals, int nf,
                         float* out) noexcept nogil:
        """out[c] = S_c . x (the decision values times lambda t)."""
        cdef int C = self.n_classes
        cdef uint64_t mask = self.n_buckets - 1
        cdef int f, c
        cdef const float* row
        cdef float v
        memset(out, 0, C * sizeof(float))
        if self.index != NULL:
            self._compact_scores(ids, vals, nf, out)
            return
        for f in range(nf):
            # rows are scattered over a large table: ask for all their cache
            # lines before summing
            row = self.S + (ids[f] & mask) * C
            for c in range(0, C, 16):
                __builtin_prefetch(row + c)
        for f in range(nf):
            row = self.S + (ids[f] & mask) * C
            v = vals[f]
            for c in range(C):
                out[c] += v * row[c]

    cdef void _compact_scores(self, const uint64_t* ids, const float* vals, int nf,
                              float* out) noexcept nogil:
        # raw_scores through the row index (rows of index -1 are zero)
        cdef int C = self.n_classes
        cdef uint64_t mask = self.n_buckets - 1
        cdef int f, c, r
        cdef const float* row
        cdef float v
        for f in range(nf):
            r = self.index[ids[f] & mask]
            if r >= 0:
                row = self.S + <size_t>r * C
                for c in range(0, C, 16):
                    __builtin_prefetch(row + c)
        for f in range(nf):
            r = self.index[ids[f] & mask]
            if r < 0:
                continue
            row = self.S + <size_t>r * C
            v = vals[f]
            for c in range(C):
                out[c] += v * row[c]

    cdef int step(self, const uint64_t* ids, const float* vals, int nf, int gold,
                  const float* raw, float* coef, double* hinge) noexcept nogil:
        """One sub-gradient step of every binary SVM on (x, gold class), given
        raw = S . x. Returns the number of classes whose margin was violated
        and adds their hinge losses to hinge[0]."""
        cdef int C = self.n_classes
        cdef uint64_t mask = self.n_buckets - 1
        cdef double inv = 1.0 / (self.lam * self.t) if self.t > 0 else 0.0
        cdef int f, c, n_viol = 0
        cdef uint64_t b
        cdef double y, margin
        cdef float v, dt
        cdef float* row
        cdef float* arow
        for c in range(C):
            y = 1.0 if c == gold else -1.0
            margin = y * raw[c] * inv
            if margin < 1.0:
                coef[c] = <float>y
                hinge[0] += 1.0 - margin
                n_viol += 1
            else:
                coef[c] = 0.0
        if n_viol:
            for f in range(nf):
                b = ids[f] & mask
                row = self.S + b * C
                if self.average and self.stamp[b] != self.t:
                    # this is step t + 1: add the row's S for steps stamp+1 .. t
                    dt = <float>(self.t - self.stamp[b])
                    arow = self.acc + b * C
                    for c in range(C):
                        arow[c] += dt * row[c]
                    self.stamp[b] = self.t
                v = vals[f]
                for c in range(C):
                    row[c] += coef[c] * v
        self.t += 1
        return n_viol

    # -- Python access (tests, serialization) ---------------------------------
    def partial_fit(self, const int64_t[:] indptr, const uint64_t[:] idx,
                    const float[:] val, const int[:] y):
        """One pass of stochastic steps over the rows of a CSR matrix, in
        order; y holds the gold class of each row. Returns (number of rows
        whose argmax class was wrong before its step, summed hinge loss)."""
        self.check_trainable()
        cdef Py_ssize_t n_rows = y.shape[0]
        if indptr.shape[0] != n_rows + 1:
            raise ValueError("indptr must have one entry more than y")
        if idx.shape[0] != val.shape[0] or indptr[n_rows] > idx.shape[0]:
            raise ValueError("idx and val must have the same length, covering indptr")
        for r in range(n_rows):
            if not 0 <= y[r] < self.n_classes:
                raise ValueError(f"y[{r}] = {y[r]} is not a class in 0..{self.n_classes - 1}")
        raw = numpy.zeros(self.n_classes, dtype="float32")
        coef = numpy.zeros(self.n_classes, dtype="float32")
        cdef float[:] rv = raw
        cdef float[:] cv = coef
        cdef double hinge = 0.0
        cdef long errors = 0
        cdef Py_ssize_t i
        cdef int c, best, start, nf
        with nogil:
            for i in range(n_rows):
                start = indptr[i]
                nf = indptr[i + 1] - start
                self.raw_scores(&idx[start] if nf else NULL, &val[start] if nf else NULL, nf, &rv[0])
                best = 0
                for c in range(1, self.n_classes):
                    if rv[c] > rv[best]:
                        best = c
                if best != y[i]:
                    errors += 1
                self.step(&idx[start] if nf else NULL, &val[start] if nf else NULL, nf, y[i],
                          &rv[0], &cv[0], &hinge)
        return int(errors), float(hinge)

    def decision_function(self, const int64_t[:] indptr, const uint64_t[:] idx,
                          const float[:] val):
        """w_c . x with the current weights, for every row and class
        ((n_rows, n_classes) float64)."""
        cdef Py_ssize_t n_rows = indptr.shape[0] - 1
        out = numpy.zeros((n_rows, self.n_classes), dtype="float32")
        cdef float[:, ::1] ov = out
        cdef Py_ssize_t i
        cdef int start, nf
        for i in range(n_rows):
            start = indptr[i]
            nf = indptr[i + 1] - start
            if nf:
                self.raw_scores(&idx[start], &val[start], nf, &ov[i, 0])
        return out.astype("float64") * self.scale

    def check_trainable(self):
        if self.compact:
            raise ValueError("a compact SVM (compact_svm) only predicts; it cannot be trained")

    def dense_table(self):
        """The table as n_buckets x n_classes (expanded if compact)."""
        if not self.compact:
            return self._table
        dense = numpy.zeros((self.n_buckets, self.n_classes), dtype="float32")
        present = self._index >= 0
        dense[present] = self._table[self._index[present]]
        return dense

    @property
    def row_index(self):
        """The compact SVM's int32 index bucket -> row of ``table`` (-1: zero
        row); None for a dense one."""
        return self._index

    @property
    def scale(self) -> float:
        """1 / (lambda t): w = scale * S (0 before the first step)."""
        return 1.0 / (self.lam * self.t) if self.t > 0 else 0.0

    @property
    def table(self):
        """S, the running sums (the array itself, not a copy; only the
        non-zero rows if compact)."""
        return self._table

    @property
    def weights(self):
        """The current SVM weights w = S / (lambda t), (n_buckets, n_classes) float64."""
        return self.dense_table().astype("float64") * self.scale

    def averaged_weights(self):
        """sum_k k w_k / sum_k k over the steps k = t0+1 .. t as float32 (the
        current weights when averaging is off or no step was taken)."""
        if not self.average or self.t == self.t0:
            return (self.dense_table() * self.scale).astype("float32")
        dt = (self.t - self._stamp).astype("float32")
        total = self._acc + self._table * dt[:, None]
        weight_sum = (self.t * (self.t + 1) - self.t0 * (self.t0 + 1)) / 2.0
        return (total / (self.lam * weight_sum)).astype("float32")

    def prediction_weights(self):
        """What the parser predicts with: the averaged weights if averaging
        is on, else the current ones (float32)."""
        return self.averaged_weights()

    def set_weights(self, weights, t):
        """Start from the given weights w as if after t steps (warm start):
        S = w lambda t, computed in float64 a block of rows at a time (no
        float64 copy of a large table); averaging restarts at step t."""
        weights = numpy.asarray(weights)
        if weights.shape != (self.n_buckets, self.n_classes):
            raise ValueError(
                f"weights have shape {weights.shape}, expected ({self.n_buckets}, {self.n_classes})"
            )
        self._set_index(None)
        self.t = int(t)
        factor = self.lam * self.t
        table = numpy.empty((self.n_buckets, self.n_classes), dtype="float32")
        block = max(1, (1 << 20) // self.n_classes)
        for start in range(0, self.n_buckets, block):
            table[start : start + block] = weights[start : start + block].astype("float64") * factor
        self._set_table(table)
        self._reset_average()

    def get_state(self):
        return {"table": self._table, "t": int(self.t), "t0": int(self.t0), "lam": self.lam,
                "average": bool(self.average), "acc": self._acc, "stamp": self._stamp,
                "index": self._index}

    def set_state(self, state):
        self.lam = float(state["lam"])
        self.average = bool(state.get("average", False))
        self._set_index(state.get("index"))
        self._set_table(state["table"])
        self.t = int(state["t"])
        self.t0 = int(state.get("t0", 0))
        if self.average:
            self._set_average(state["acc"], state["stamp"])
        else:
            self._acc = self._stamp = None
            self.acc = NULL
            self.stamp = NULL

    def __reduce__(self):
        return (_rebuild, (self.n_buckets, self.n_classes, self.lam, self.get_state()))


    def _set_index(self, index):
        cdef const int[:] iv
        if index is None:
            self.compact = False
            self._index = None
            self.index = NULL
            return
        index = numpy.ascontiguousarray(index, dtype="int32")
        if index.shape != (self.n_buckets,):
            raise ValueError(f"row index has shape {index.shape}, expected ({self.n_buckets},)")
        self.compact = True
        self._index = index
        iv = index
        self.index = &iv[0]


def compact_svm(rows, index, double lam, t=1):
    """A prediction-only SVM over the non-zero rows of a table: ``rows``
    (k, n_classes) float32 and ``index`` (n_buckets,) int32 giving each
    bucket's row in ``rows`` or -1 for an all-zero row."""
    rows = numpy.ascontiguousarray(rows, dtype="float32")
    index = numpy.ascontiguousarray(index, dtype="int32")
    if rows.ndim != 2 or index.ndim != 1:
        raise ValueError("rows must be 2-d and index 1-d")
    n_buckets = index.shape[0]
    if n_buckets == 0 or (n_buckets & (n_buckets - 1)) != 0:
        raise ValueError(f"the index must have a power of two entries, got {n_buckets}")
    if index.size and (index.max(initial=-1) >= rows.shape[0] or index.min(initial=-1) < -1):
        raise ValueError(f"row index out of range for {rows.shape[0]} rows")
    return _rebuild(n_buckets, rows.shape[1], lam,
                    {"table": rows, "t": int(t), "lam": lam, "index": index})


def _rebuild(n_buckets, n_classes, lam, state):
    cdef OneVsRestSVM svm = OneVsRestSVM.__new__(OneVsRestSVM)
    svm.n_buckets = n_buckets
    svm.n_classes = n_classes
    svm.set_state(state)
    return svm
