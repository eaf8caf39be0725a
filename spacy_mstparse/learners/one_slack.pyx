"""1-slack structural SVM trained by cutting planes (Joachims, Finley & Yu
2009, "Cutting-plane training of structural SVMs", Algorithm 3), the
comparison system of Lee et al. (2010).

Primal, with lam = 1/C and x_i(y) = phi(x_i, y_i) - phi(x_i, y):

    min_w  lam/2 ||w||^2 + (1/n) sum_i max_y [Delta(y_i, y) - w . x_i(y)]

(Delta = Hamming loss over heads). Each iteration decodes every training
sentence loss-augmented with the current w (the most violated tree of each),
forms the aggregated constraint (a, g) = ((1/n) sum_i Delta_i, (1/n) sum_i
x_i), adds it to the working set W and re-solves the dual over W,

    max_alpha  sum_j alpha_j a_j - 1/(2 lam) ||sum_j alpha_j g_j||^2,
    alpha >= 0, sum_j alpha_j <= 1,          w = (1/lam) sum_j alpha_j g_j,

by accelerated projected gradient (numpy; W is small) until its Frank-Wolfe
gap is below ``qp_tol``. The duality gap of the full problem at w,
P(w) - D(alpha), is known after each pass (the pass computes P(w) exactly,
since w is fixed during it); training stops when it is below ``eps``.
Constraints whose alpha stayed 0 for ``max_inactive`` iterations are dropped.
Each constraint holds a sparse vector over every bucket a pass touched (tens
of MB on EWT), so ``max_constraints`` bounds the working set: beyond it the
constraints with the smallest alpha are merged into their alpha-weighted
mean (constraint aggregation, as in aggregated bundle methods; a convex
combination of cutting planes is one), which keeps w and D(alpha) exactly.
Dropping active constraints instead stalled: on ten sentences capped at 5
the gap was still 0.3 after 3,000 iterations, against 64 without a cap.

Cutting-plane iterates are not monotone: before convergence w can swing
from pass to pass (on EWT, dev UAS between 66.8 and 83.2 over 30 passes).
With ``keep_best`` (default) the model predicts with the iterate of the
lowest primal objective seen so far (known exactly at the end of each
pass; w = 0, the first pass's, is not a candidate), so a run stopped before
convergence ends at its best iterate by the objective it minimises;
``keep_best = False`` predicts with the last w.

Inside ``spacy train`` the component feeds sentences in batches: the learner
accumulates the constraint over |D| sentences (``begin_training`` tells it
|D|), keeps w fixed meanwhile, and solves at the end of each pass.
``spacy_mstparse.graph.training.train_one_slack`` runs it over a list of
sentences outside a pipeline, through the same training loop.
"""
import time

import numpy

from libc.math cimport isfinite
from libc.stdint cimport uint64_t

from .base cimport Learner
from .one_slack_qp import project_capped_simplex, solve_dual  # noqa: F401
from .weight_table cimport WeightTable


cdef void _scatter_add(double[::1] acc, const uint64_t[:] idx, const double[:] val) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(idx.shape[0]):
        acc[idx[i]] += val[i]


cdef void _scatter_scaled(double[::1] acc, const uint64_t[:] idx, const double[:] val,
                          double coef) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(idx.shape[0]):
        acc[idx[i]] += coef * val[i]


cdef double _gather_dot(const double[::1] dense, const uint64_t[:] idx,
                        const double[:] val) noexcept nogil:
    cdef Py_ssize_t i
    cdef double total = 0.0
    for i in range(idx.shape[0]):
        total += dense[idx[i]] * val[i]
    return total


cdef class OneSlackSSVM(Learner):
    """1-slack structural SVM (cutting planes) with regulariser ``lam`` (C = 1/lam)."""

    cdef readonly double lam
    cdef readonly double eps
    cdef readonly double qp_tol
    cdef readonly int max_inactive
    cdef readonly int max_constraints
    cdef readonly long long n_train
    cdef readonly long long n_seen      # sentences of the current pass
    cdef readonly bint converged
    cdef readonly int iteration
    cdef object _pass_sum_arr
    cdef double[::1] _pass_sum
    cdef double _loss_sum
    cdef double _margin_sum
    cdef list _constraints              # (idx, val, a)
    cdef list _inactive
    cdef object _H
    cdef object _alpha
    cdef double _dual
    cdef object _t0
    cdef public list history
    cdef readonly bint keep_best
    cdef readonly double best_primal
    cdef readonly int best_iteration
    cdef object _best_w

    def __init__(self, double lam=1e-3, double eps=0.01, double qp_tol=-1.0,
                 int max_inactive=50, bint keep_best=True, int max_constraints=0):
        if not isfinite(lam) or lam <= 0.0:
            raise ValueError(f"OneSlackSSVM: lam must be finite and > 0, got {lam}")
        if not (eps > 0.0):
            raise ValueError(f"OneSlackSSVM: eps must be > 0, got {eps}")
        if max_inactive < 1:
            raise ValueError(f"OneSlackSSVM: max_inactive must be >= 1, got {max_inactive}")
        self.lam = lam
        self.eps = eps
        self.qp_tol = qp_tol if qp_tol > 0.0 else eps / 100.0
        if max_constraints < 0:
            raise ValueError(f"OneSlackSSVM: max_constraints must be >= 0, got {max_constraints}")
        self.max_inactive = max_inactive
        self.max_constraints = max_constraints
        self.keep_best = keep_best
        self.loss_augmented = True
        self.n_train = 0
        self._pass_sum_arr = None
        self.history = []
        self.best_primal = float("inf")
        self.best_iteration = -1

    @property
    def C(self):
        return 1.0 / self.lam

    def begin_training(self, features, list gold, int order=1):
        """Called at initialization: a pass is ``len(gold)`` sentences."""
        if not gold:
            raise ValueError("OneSlackSSVM: no gold training sentences")
        self.begin(features.n_buckets, len(gold))

    def begin(self, long long n_buckets, long long n_train):
        """Start training over ``n_train`` sentences per pass."""
        if n_train < 1:
            raise ValueError(f"OneSlackSSVM: n_train must be >= 1, got {n_train}")
        self.n_train = n_train
        self._pass_sum_arr = numpy.zeros(n_buckets, dtype=numpy.float64)
        self._pass_sum = self._pass_sum_arr
        self.n_seen = 0
        self._loss_sum = 0.0
        self._margin_sum = 0.0
        self._constraints = []
        self._inactive = []
        self._H = numpy.zeros((0, 0))
        self._alpha = numpy.zeros(0)
        self._dual = 0.0
        self.converged = False
        self.iteration = 0
        self.history = []
        self.best_primal = float("inf")
        self.best_iteration = -1
        self._best_w = None
        self._t0 = time.perf_counter()

    def step(self, WeightTable table, list batch):
        """Accumulate the loss-augmented differences of a batch; w stays fixed
        until the pass of |D| sentences is complete, then the QP is solved."""
        cdef const uint64_t[:] idx
        cdef const double[:] val
        cdef long n_wrong, total_wrong = 0
        if self._pass_sum_arr is None:
            raise ValueError(
                "OneSlackSSVM: call begin_training() first (nlp.initialize does it for mst_parser)")
        if table.n_buckets != self._pass_sum_arr.shape[0]:
            raise ValueError("OneSlackSSVM: weight table size differs from begin()")
        cdef double margin
        info = None
        for item in batch:
            idx, val, n_wrong = item[0], item[1], item[2]
            total_wrong += n_wrong
            if idx.shape[0] > 0:
                margin = table.dot(idx, val)
                # The gold tree is a candidate too (violation 0): when the
                # decoder's tree violates less, e.g. a non-projective gold
                # tree that Eisner cannot return, the gold tree is this
                # sentence's part of the most violated joint labelling.
                if n_wrong - margin > 0.0:
                    self._loss_sum += n_wrong
                    self._margin_sum += margin
                    with nogil:
                        _scatter_add(self._pass_sum, idx, val)
            self.n_seen += 1
            if self.n_seen == self.n_train:
                info = self.end_pass(table)
        return {"n_sentences": len(batch), "n_wrong": total_wrong, "pass_end": info}

    def end_pass(self, WeightTable table):
        """Close the pass: record P(w), D(alpha) and the gap; unless converged,
        add the aggregated constraint, re-solve the dual and set w."""
        cdef double n = <double>self.n_seen
        if self.n_seen == 0:
            raise ValueError("OneSlackSSVM: end_pass() before any sentence of the pass")
        a_new = self._loss_sum / n
        hinge = max(0.0, a_new - self._margin_sum / n)   # every term is > 0 (step)
        sq_w = table.sq_norm()
        primal = 0.5 * self.lam * sq_w + hinge
        gap = primal - self._dual
        record = {"iteration": self.iteration, "primal": primal, "dual": self._dual,
                  "gap": gap, "hinge": hinge, "loss": a_new,
                  "n_constraints": len(self._constraints),
                  "seconds": time.perf_counter() - self._t0}
        self.history.append(record)
        # (w = 0 before the first constraint is not a candidate)
        if self.keep_best and self.iteration > 0 and primal < self.best_primal:
            self.best_primal = primal
            self.best_iteration = self.iteration
            self._best_w = table.current()
        if gap <= self.eps:
            self.converged = True
        elif not self.converged:
            self._add_constraint(table, a_new, n)
        self._pass_sum_arr.fill(0.0)
        self.n_seen = 0
        self._loss_sum = 0.0
        self._margin_sum = 0.0
        return record

    def _add_constraint(self, WeightTable table, double a_new, double n):
        # The buckets of w now (every constraint's support) are cleared
        # before w is rewritten from the new alpha (_set_w).
        self._clear_w(table)
        idx = numpy.flatnonzero(self._pass_sum_arr).astype(numpy.uint64)
        val = self._pass_sum_arr[idx] / n
        m = len(self._constraints)
        row = numpy.empty(m + 1)
        cdef const uint64_t[:] ci
        cdef const double[:] cv
        for j, (cidx, cval, _) in enumerate(self._constraints):
            ci = cidx
            cv = cval
            row[j] = _gather_dot(self._pass_sum, ci, cv) / n
        row[m] = float(val @ val)
        H = numpy.empty((m + 1, m + 1))
        H[:m, :m] = self._H
        H[m, :] = row
        H[:, m] = row
        self._constraints.append((idx, val, a_new))
        self._inactive.append(0)
        a = numpy.array([c[2] for c in self._constraints])
        alpha0 = numpy.append(self._alpha, 0.0)
        alpha, dual, _, _ = solve_dual(H, a, self.lam, alpha0, self.qp_tol)
        # Drop constraints unused for max_inactive iterations.
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
        self._pass_sum_arr[idx] = 0.0     # the pass sum, now stored in the new constraint
        if self.max_constraints and len(self._constraints) > self.max_constraints:
            H, alpha = self._aggregate(H, alpha)
        self._H = H
        self._alpha = alpha
        self._dual = dual
        self.iteration += 1
        self._set_w(table)

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
        if total <= 0.0:   # all inactive: drop them
            merged_rows = []
        else:
            coef = alpha[merged] / total
            idx = numpy.unique(numpy.concatenate([self._constraints[j][0] for j in merged]))
            dense = self._pass_sum_arr   # zero between passes: scratch space
            for c, j in zip(coef, merged):
                cidx, cval, _ = self._constraints[j]
                dense[cidx] += c * cval
            val = dense[idx].copy()
            dense[idx] = 0.0
            a = float(coef @ numpy.array([self._constraints[j][2] for j in merged]))
            merged_rows = [(idx[val != 0.0], val[val != 0.0], a)]
            h = coef @ H[merged, :]
            h_self = float(h[merged] @ coef)
        order = rest
        new_H = H[numpy.ix_(order, order)]
        new_alpha = alpha[order]
        constraints = [self._constraints[j] for j in order]
        inactive = [self._inactive[j] for j in order]
        if merged_rows:
            row = h[order]
            new_H = numpy.block([[new_H, row[:, None]], [row[None, :], numpy.array([[h_self]])]])
            new_alpha = numpy.append(new_alpha, total)
            constraints += merged_rows
            inactive.append(0)
        self._constraints, self._inactive = constraints, inactive
        return new_H, new_alpha

    def _clear_w(self, WeightTable table):
        """Zero the table on the support of every constraint in W (where w
        can be non-zero), in O(total constraint size)."""
        if table.is_plain():
            if not self._constraints:
                # First constraint: w is 0 + nothing learnt yet, whatever the
                # table held before (O(table), once).
                table.scale_by(0.0)
            for cidx, _, _ in self._constraints:
                table.assign(cidx, numpy.zeros(cidx.shape[0]))

    def _set_w(self, WeightTable table):
        """w = (1/lam) sum_j alpha_j g_j written into the table: accumulated
        in float64 on the constraints' supports (cleared by _clear_w), so
        O(total constraint size) rather than O(table) per iteration."""
        active = [(cidx, cval, alpha) for (cidx, cval, _), alpha
                  in zip(self._constraints, self._alpha) if alpha > 0.0]
        if not table.is_plain():
            # The learner never ticks or rescales the table; if someone else
            # did, the O(table) rewrite.
            w = numpy.zeros(table.n_buckets, dtype=numpy.float64)
            for idx, val, alpha in active:
                w[idx] += (alpha / self.lam) * val
            table.restart_average(w)
            return
        # The pass accumulator (all zero between passes) holds the float64 sum.
        cdef double[::1] acc = self._pass_sum
        cdef double coef
        for cidx, cval, alpha in active:
            coef = alpha / self.lam
            _scatter_scaled(acc, cidx, cval, coef)
        if active:
            support = numpy.unique(numpy.concatenate([idx for idx, _, _ in active]))
            table.assign(support, self._pass_sum_arr[support])
            self._pass_sum_arr[support] = 0.0

    def predicts_with_average(self):
        """Never: the model is the QP's solution w (the table is not ticked)."""
        return False

    def finalize_weights(self, weights):
        """The weights to predict with: with ``keep_best``, those of the pass
        with the lowest primal objective so far (else ``weights``, the last w)."""
        if self.keep_best and self._best_w is not None:
            return self._best_w
        return weights

    @property
    def dual(self):
        return self._dual

    @property
    def alpha(self):
        return numpy.array(self._alpha)

    def __repr__(self):
        return (f"OneSlackSSVM(lam={self.lam}, eps={self.eps}, qp_tol={self.qp_tol}, "
                f"keep_best={self.keep_best})")
