"""The working set of the plain 1-slack structural SVM (no cache): the
aggregated cutting planes of Joachims, Finley & Yu (2009, "Cutting-plane
training of structural SVMs", Algorithm 3) and their dual.

A decoding pass sums the loss-augmented differences x_i = phi(x_i, y_i) -
phi(x_i, y) of its violated sentences (``accumulate``); at the pass end
(``add``) the sum / n is the new constraint g with offset a (the mean
loss) and the dual over the working set W,

    max_alpha  sum_j alpha_j a_j - 1/(2 lam) ||sum_j alpha_j g_j||^2,
    alpha >= 0, sum_j alpha_j <= 1,          w = (1/lam) sum_j alpha_j g_j,

is re-solved by accelerated projected gradient (one_slack_qp.py) until its
Frank-Wolfe gap is below ``qp_tol``, warm-started from the last alpha.

Memory: at most ``max_constraints`` constraints (0: no bound) of uint32
buckets and float32 values, the Gram matrix H of the constraints, one dense
float64 pass sum and a bool mask of the buckets any constraint touched.
Constraints beyond the bound are merged into their alpha-weighted mean, as
in aggregated bundle methods, which keeps w and the dual value exactly;
constraints whose alpha stayed 0 for ``max_inactive`` solves are dropped.
"""
import numpy

from libc.stdint cimport uint32_t, uint64_t

from .one_slack_qp import solve_dual


cdef void _scatter_add(double[::1] acc, const uint64_t[:] idx, const double[:] val) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(idx.shape[0]):
        acc[idx[i]] += val[i]


cdef void _scatter_scaled(double[::1] acc, const uint32_t[::1] idx, const float[::1] val,
                          double coef) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(idx.shape[0]):
        acc[idx[i]] += coef * val[i]


cdef double _gather_dot(const double[::1] dense, const uint32_t[::1] idx,
                        const float[::1] val) noexcept nogil:
    cdef Py_ssize_t i
    cdef double total = 0.0
    for i in range(idx.shape[0]):
        total += dense[idx[i]] * val[i]
    return total


cdef class WorkingSet:
    """The cutting planes of the plain 1-slack SSVM over ``n_buckets`` features."""

    cdef readonly double lam
    cdef readonly double qp_tol
    cdef readonly int max_inactive
    cdef readonly int max_constraints
    cdef readonly double dual
    cdef object _pass_sum_arr
    cdef double[::1] _pass_sum
    cdef object _touched
    cdef object _support
    cdef list _constraints              # (idx uint32, val float32, a)
    cdef list _inactive
    cdef object _H
    cdef object _alpha

    def __init__(self, Py_ssize_t n_buckets, double lam, double qp_tol, int max_inactive,
                 int max_constraints):
        if n_buckets > (1 << 32):
            raise ValueError(f"WorkingSet: at most 2^32 buckets, got {n_buckets}")
        self.lam = lam
        self.qp_tol = qp_tol
        self.max_inactive = max_inactive
        self.max_constraints = max_constraints
        self.dual = 0.0
        self._pass_sum_arr = numpy.zeros(n_buckets, dtype=numpy.float64)
        self._pass_sum = self._pass_sum_arr
        self._touched = numpy.zeros(n_buckets, dtype=bool)
        self._support = None
        self._constraints = []
        self._inactive = []
        self._H = numpy.zeros((0, 0))
        self._alpha = numpy.zeros(0)

    def __len__(self):
        return len(self._constraints)

    @property
    def alpha(self):
        return numpy.array(self._alpha)

    @property
    def nbytes(self):
        """Bytes of the stored constraints (buckets and values)."""
        return sum(i.nbytes + v.nbytes for i, v, _ in self._constraints)

    def accumulate(self, const uint64_t[:] idx, const double[:] val):
        """Add a sentence's loss-augmented difference to the pass sum."""
        with nogil:
            _scatter_add(self._pass_sum, idx, val)

    def clear_pass(self):
        """Forget the pass sum (a pass that adds no constraint)."""
        self._pass_sum_arr.fill(0.0)

    def add(self, double a_new, double n):
        """The pass sum / n joins W with offset ``a_new`` (the pass sum is
        cleared); the dual is re-solved. Returns the dual value."""
        idx64 = numpy.flatnonzero(self._pass_sum_arr)
        idx = idx64.astype(numpy.uint32)
        val = (self._pass_sum_arr[idx64] / n).astype(numpy.float32)
        m = len(self._constraints)
        row = numpy.empty(m + 1)
        cdef const uint32_t[::1] ci
        cdef const float[::1] cv
        for j, (cidx, cval, _) in enumerate(self._constraints):
            ci = cidx
            cv = cval
            row[j] = _gather_dot(self._pass_sum, ci, cv) / n
        val64 = val.astype(numpy.float64)
        row[m] = float(val64 @ val64)
        H = numpy.empty((m + 1, m + 1))
        H[:m, :m] = self._H
        H[m, :] = row
        H[:, m] = row
        self._constraints.append((idx, val, a_new))
        self._inactive.append(0)
        self._pass_sum_arr[idx64] = 0.0   # now stored in the new constraint
        self._touched[idx64] = True
        self._support = None
        a = numpy.array([c[2] for c in self._constraints])
        alpha0 = numpy.append(self._alpha, 0.0)
        alpha, dual, _, _ = solve_dual(H, a, self.lam, alpha0, self.qp_tol)
        # Drop constraints unused for max_inactive solves.
        keep = []
        for j in range(len(self._constraints)):
            self._inactive[j] = 0 if alpha[j] > 1e-12 else self._inactive[j] + 1
            if self._inactive[j] <= self.max_inactive:
                keep.append(j)
        if len(keep) < len(self._constraints):
            self._constraints = [self._constraints[j] for j in keep]
            self._inactive = [self._inactive[j] for j in keep]
            H = H[numpy.ix_(keep, keep)]
            alpha = alpha[keep]
        if self.max_constraints and len(self._constraints) > self.max_constraints:
            H, alpha = self._aggregate(H, alpha)
        self._H = H
        self._alpha = alpha
        self.dual = dual
        return dual

    def _aggregate(self, H, alpha):
        """Merge the constraints with the smallest alpha (the newest excluded)
        into one, their alpha-weighted mean (a cutting plane too, as every
        convex combination of cutting planes): w and the dual value are
        unchanged, and the working set has ``max_constraints`` constraints."""
        m = len(self._constraints)
        ranked = sorted(range(m - 1), key=lambda j: (alpha[j], j))
        merged = sorted(ranked[:m - self.max_constraints + 1])
        rest = [j for j in range(m) if j not in set(merged)]
        total = float(alpha[merged].sum())
        h, h_self = None, 0.0
        if total <= 0.0:   # all inactive: drop them
            merged_rows = []
        else:
            coef = alpha[merged] / total
            dense = self._pass_sum_arr   # zero here: scratch space
            for c, j in zip(coef, merged):
                cidx, cval, _ = self._constraints[j]
                _scatter_scaled(dense, cidx, cval, c)
            idx = numpy.flatnonzero(dense).astype(numpy.uint32)
            val = dense[idx].astype(numpy.float32)
            dense[idx] = 0.0
            a = float(coef @ numpy.array([self._constraints[j][2] for j in merged]))
            merged_rows = [(idx[val != 0.0], val[val != 0.0], a)]
            h = coef @ H[merged, :]
            h_self = float(h[merged] @ coef)
        new_H = H[numpy.ix_(rest, rest)]
        new_alpha = alpha[rest]
        constraints = [self._constraints[j] for j in rest]
        inactive = [self._inactive[j] for j in rest]
        if merged_rows:
            row = h[rest]
            new_H = numpy.block([[new_H, row[:, None]], [row[None, :], numpy.array([[h_self]])]])
            new_alpha = numpy.append(new_alpha, total)
            constraints += merged_rows
            inactive.append(0)
        self._constraints, self._inactive = constraints, inactive
        return new_H, new_alpha

    def weights_into(self, w):
        """w = (1/lam) sum_j alpha_j g_j, accumulated densely in float64 into
        ``w`` (overwritten); returns the buckets any constraint ever touched
        (uint64: elsewhere w is 0)."""
        w.fill(0.0)
        cdef double[::1] acc = w
        for (cidx, cval, _), alpha in zip(self._constraints, self._alpha):
            if alpha > 0.0:
                _scatter_scaled(acc, cidx, cval, alpha / self.lam)
        if self._support is None:
            self._support = numpy.flatnonzero(self._touched).astype(numpy.uint64)
        return self._support

    def slack(self):
        """The working set's slack at its w: max(0, max_j a_j - w . g_j)."""
        if not self._constraints:
            return 0.0
        a = numpy.array([c[2] for c in self._constraints])
        return max(0.0, float((a - self._H @ self._alpha / self.lam).max()))
