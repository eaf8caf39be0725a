"""The sparseptron: perceptron steps with a group budget, then debiasing.

Smith & Martins (2013), "Linguistic Structure Prediction with the
Sparseptron", Figure 3 (after Martins et al. 2011): after each perceptron
step, the L2 norm of each feature group's weights is divided by
log2 |F_g|; sigma is the mid-point between the B-th and (B+1)-th largest of
these scaled norms; every group is shrunk,

    w_g <- max(0, (||w_g|| - sigma log2 |F_g|) / ||w_g||) w_g,

so at most B groups stay non-zero. A group is a feature template with its
direction/distance conjunctions (``features/feature_groups.pyx``); |F_g| is
the number of buckets of the weight table seen in that group (gold trees at
``begin_training``, predicted trees as training meets them), and
log2 |F_g| is taken as at least 1.

Step size. The figure's "eta <- t / |D|^{-1/2}" is garbled; we read it as
eta_t = (t / |D|)^{-1/2} = sqrt(|D| / t), one over the square root of the
number of epochs done, the usual O(1/sqrt(t)) schedule of online proximal
subgradient methods (it gives the O(1/eps^2) rate the text quotes). The
perceptron step and the budgeted shrink are both invariant to scaling w, so
only the 1/sqrt(t) decay matters, not the constant.

Cost. The perceptron step is O(touched buckets) on the ``WeightTable``, and
the squared norm of every group is kept incrementally there, so sigma costs
O(groups). Shrinking, however, rescales every non-zero weight of the kept
groups, O(table). It is done every ``shrink_every`` = m sentences (m = 1 is
Figure 3 exactly); between two shrinks up to m perceptron steps may re-open
dropped groups, which the next shrink closes again. Larger m: less time,
a looser budget during training (never in the returned model, which is
shrunk at the end of the sparse stage and masked to the kept groups).

Overlap. The weight table is hashed and shared by all templates, so one
bucket can serve several groups (on full EWT with 2^22 buckets the dense model
fills 68% of the table and the groups meet tens of millions of collisions).
Figure 3 assumes non-overlapping groups. ``overlap`` says how a shared bucket
is treated:

* ``"first"`` (default): it belongs to the first group that met it (training order).
  Groups are then disjoint as in the figure, but a kept group loses every
  shared bucket whose first owner is dropped: its weights there are zeroed at
  each shrink and are not updated while debiasing.
* ``"any"``: each bucket records every group that met it (a 64-bit
  membership mask). Group norms and |F_g| run over all member buckets (the
  groups overlap), and a bucket is shrunk by the largest factor among its
  groups, so it is zero only when every group using it is dropped; debiasing
  updates every bucket of a kept group. The model keeps exactly the buckets
  of the selected templates; the non-zero count says what that costs.
* ``"refill"``: the sparse stage as ``"first"`` (disjoint groups, so the
  same selection rule as Figure 3), then debiasing as ``"any"``: every
  bucket that a kept group uses is trained and kept, including the shared
  buckets whose first group was dropped (zero after the sparse stage).

Support. With ``support = "all"`` (default) a bucket joins the feature
space when any tree of an update reaches it, gold or predicted, as for the
dense learners; most of the dense model's non-zeros are then features of
wrong arcs. With ``support = "gold"`` the feature space is fixed at
``begin_training`` to the buckets of the gold training trees (as MSTParser
builds its feature alphabet from the gold parses), and updates skip every
other bucket, in both stages; the debiased model then has at most the kept
groups' gold-tree buckets non-zero.

Debiasing (the paper's recommendation): after ``sparse_epochs`` passes the
learner keeps the selected groups fixed, restarts the averaging from the
current weights (warm start) and trains on with single-constraint MIRA
(Crammer et al. 2006; McDonald et al. 2005) or PA-I, with every update
restricted to the selected groups. With ``k`` > 1 the parser decodes the k
best trees and debiasing MIRA solves the k-constraint QP over them (as the
dense MIRA learner, McDonald et al. 2005, Section 2.3.1); the sparse stage
steps on the best tree only. The averaged weights are then exactly
zero outside them. At the switch w is rescaled by the mean of
n_wrong / (eta ||x||^2) over the sparse-stage updates: the sparse stage does
not depend on the scale of w but MIRA does (its margin target is the loss),
and without the rescaling the debiasing steps are negligible against w
(MIRA's steps are about n_wrong / ||x||^2, far smaller than eta).
"""
from libc.math cimport INFINITY, isfinite, log2, sqrt
from libc.stdint cimport uint8_t, uint64_t

import numpy

from ..features import feature_groups as _fg
from .mira import k_constraint_alphas, single_constraint_tau
from .passive_aggressive import pa_tau
from .base cimport Learner
from .weight_table cimport WeightTable

DEF NG = 64          # at most 64 groups: one bit each in a bucket's mask
DEF NO_GROUP = 255
DEF N_IDS = 256      # group ids (feature_groups.pyx) are < 128

DEBIAS = ("MIRA", "PA-I", "none")
OVERLAP = ("first", "any", "refill")
SUPPORT = ("all", "gold")

cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil


cdef inline double _mask_factor(uint64_t m, const double* factor) noexcept nogil:
    """The largest shrink factor among the groups of mask ``m``."""
    cdef double best = 0.0
    cdef int b
    while m:
        b = __builtin_ctzll(m)
        if factor[b] > best:
            best = factor[b]
        m &= m - 1
    return best


cdef inline void _mask_add_sq(uint64_t m, double* sq, double x2) noexcept nogil:
    cdef int b
    while m:
        b = __builtin_ctzll(m)
        sq[b] += x2
        m &= m - 1


cdef class Sparseptron(Learner):
    """Group-budgeted perceptron (Figure 3 of Smith & Martins 2013) followed
    by debiasing with MIRA or PA-I on the selected groups.

    B: group budget. shrink_every: sentences between two shrink steps.
    sparse_epochs: passes of the sparse stage. debias: "MIRA", "PA-I" or
    "none". C: clip of the debiasing step (MIRA: None/inf = unclipped).
    k: trees decoded per sentence, the constraints of debiasing MIRA.
    overlap: "first", "any" or "refill", how a bucket shared by several
    groups counts. support: "all" or "gold", which buckets make up the
    feature space (module docstring).
    """

    cdef readonly int B
    cdef readonly int shrink_every
    cdef readonly int sparse_epochs
    cdef readonly str debias
    cdef readonly str overlap
    cdef readonly str support
    cdef readonly double C
    cdef readonly int k
    cdef readonly long long t            # sentences seen in the sparse stage
    cdef readonly long long n_train      # sentences per epoch
    cdef readonly bint debiasing         # in the second stage
    cdef readonly long long n_shrinks
    cdef readonly long long collisions
    cdef object _order
    cdef object _features
    cdef object _map_arr                 # first group of each bucket (uint8 id)
    cdef uint8_t[::1] _map
    cdef object _mask_arr                # groups of each bucket (uint64, one bit each)
    cdef uint64_t[::1] _mask
    cdef uint8_t _bit_of[N_IDS]          # group id -> bit (NO_GROUP = not met yet)
    cdef uint8_t _id_of[NG]              # bit -> group id
    cdef int _n_bits
    cdef double _sq[NG]                  # ||v_g||^2 of each group (by bit)
    cdef long long _size[NG]             # |F_g|: buckets of g
    cdef double _factor[NG]
    cdef uint8_t _kept[NG]               # 1 = group survived the last shrink
    cdef uint64_t _kept_bits
    cdef bint _norm_first                # norms, |F_g|, shrink: first group only
    cdef bint _mask_all                  # the mask records every group
    cdef bint _frozen                    # support = "gold" after begin_training
    cdef WeightTable _table              # the table of the last step (for new members)
    cdef bint _shrunk
    cdef double _ratio_sum               # sum of n_wrong / (||x||^2 eta) over updates
    cdef long long _n_ratio

    def __init__(self, int B=20, int shrink_every=32, int sparse_epochs=5,
                 str debias="MIRA", double C=INFINITY, str overlap="first",
                 str support="all", int k=1):
        if B < 1:
            raise ValueError(f"Sparseptron: B (group budget) must be >= 1, got {B}")
        if shrink_every < 1:
            raise ValueError(f"Sparseptron: shrink_every must be >= 1, got {shrink_every}")
        if sparse_epochs < 1:
            raise ValueError(f"Sparseptron: sparse_epochs must be >= 1, got {sparse_epochs}")
        if debias not in DEBIAS:
            raise ValueError(f"Sparseptron: debias must be one of {DEBIAS}, got {debias!r}")
        if k < 1:
            raise ValueError(f"Sparseptron: k must be >= 1, got {k}")
        if k > 1 and debias != "MIRA":
            raise ValueError(f"Sparseptron: k > 1 needs debias = 'MIRA', got {debias!r}")
        if not (C > 0.0):
            raise ValueError(f"Sparseptron: C must be > 0, got {C}")
        if overlap not in OVERLAP:
            raise ValueError(f"Sparseptron: overlap must be one of {OVERLAP}, got {overlap!r}")
        if support not in SUPPORT:
            raise ValueError(f"Sparseptron: support must be one of {SUPPORT}, got {support!r}")
        self.overlap = overlap
        self.support = support
        self._norm_first = overlap != "any"
        self._mask_all = overlap != "first"
        self.B = B
        self.shrink_every = shrink_every
        self.sparse_epochs = sparse_epochs
        self.debias = debias
        self.C = C
        self.k = k
        self.k_best = k
        self.sparse_weights = True   # saved as bitmap + non-zero values
        self.n_train = 0
        self._map_arr = None
        self._reset()

    cdef void _reset(self):
        cdef int g
        self.t = 0
        self.debiasing = False
        self.n_shrinks = 0
        self.collisions = 0
        self._shrunk = False
        self._frozen = False
        self._ratio_sum = 0.0
        self._n_ratio = 0
        self._n_bits = 0
        self._kept_bits = ~(<uint64_t>0)
        for g in range(N_IDS):
            self._bit_of[g] = NO_GROUP
        for g in range(NG):
            self._id_of[g] = NO_GROUP
            self._sq[g] = 0.0
            self._size[g] = 0
            self._factor[g] = 1.0
            self._kept[g] = 1

    # ---------------------------------------------------------- component hooks

    def begin_training(self, features, list gold, int order=1):
        """Called at initialization with the first-order features and the
        list of ``(Sentence, gold heads)`` of the training set: fixes |D|,
        builds the group map from the complete gold trees (a partially
        annotated sentence, with -1 heads, adds no bucket: its tree is not
        known yet) and resets the learner."""
        if order != 1:
            raise ValueError(
                "Sparseptron: only first-order features have feature groups; set order = 1")
        if not gold:
            raise ValueError("Sparseptron: no gold training sentences")
        self.begin(features, len(gold))
        for sentence, heads in gold:
            if min(heads[1:]) >= 0:
                self.note_tree(sentence, heads)
        self.freeze_support()

    def freeze_support(self):
        """End of the gold trees: with ``support = "gold"`` no bucket joins
        the feature space after this (``note_tree`` becomes a no-op)."""
        self._frozen = self.support == "gold"

    def begin(self, features, long long n_train):
        """Start training with ``features`` (FirstOrderFeatures) and |D| =
        ``n_train`` sentences per epoch (the Python-level entry point)."""
        if n_train < 1:
            raise ValueError(f"Sparseptron: n_train must be >= 1, got {n_train}")
        self._features = features
        self.n_train = n_train
        self._map_arr = numpy.full(features.n_buckets, NO_GROUP, dtype=numpy.uint8)
        self._map = self._map_arr
        self._mask_arr = numpy.zeros(features.n_buckets, dtype=numpy.uint64)
        self._mask = self._mask_arr
        self._table = None
        self._reset()

    def note_tree(self, sentence, heads):
        """Give the buckets of a tree's features their groups (called by the
        component for every gold and predicted tree it builds an update from)."""
        if self._map_arr is None or self._frozen:
            return
        ids, groups = _fg.tree_features_grouped(self._features, sentence, heads)
        self.assign_groups(ids, groups)

    def assign_groups(self, const uint64_t[::1] ids, const uint8_t[::1] groups):
        """Assign ``groups[i]`` to bucket ``ids[i]`` unless it has a group."""
        cdef Py_ssize_t i
        cdef uint8_t old
        cdef uint64_t nb
        if self._map_arr is None:
            raise ValueError("Sparseptron: call begin_training() (nlp.initialize) first")
        if ids.shape[0] != groups.shape[0]:
            raise ValueError("ids and groups differ in length")
        cdef uint64_t bit, m
        cdef double x
        cdef bint first = not self._mask_all
        cdef bint has_table = self._table is not None
        nb = <uint64_t>self._map.shape[0]
        for i in range(ids.shape[0]):
            if ids[i] >= nb or groups[i] == NO_GROUP:
                raise ValueError(f"invalid bucket {ids[i]} or group {groups[i]}")
            if self._bit_of[groups[i]] == NO_GROUP:
                if self._n_bits == NG:
                    raise ValueError(f"Sparseptron: more than {NG} feature groups")
                self._bit_of[groups[i]] = self._n_bits
                self._id_of[self._n_bits] = groups[i]
                self._n_bits += 1
        with nogil:
            for i in range(ids.shape[0]):
                old = self._map[ids[i]]
                bit = (<uint64_t>1) << self._bit_of[groups[i]]
                m = self._mask[ids[i]]
                if old == NO_GROUP:
                    self._map[ids[i]] = groups[i]
                elif old != groups[i]:
                    self.collisions += 1
                if m & bit or (first and m):
                    continue
                self._mask[ids[i]] = m | bit
                if m and self._norm_first:
                    continue   # refill: norms and |F_g| count the first group only
                # A new member: the bucket's weight joins the group's norm.
                self._size[self._bit_of[groups[i]]] += 1
                if has_table:
                    x = self._table.stored(ids[i])
                    self._sq[self._bit_of[groups[i]]] += x * x

    def predicts_with_average(self):
        """The averaged weights in the debiasing stage only; the sparse stage
        predicts with its current w, as Figure 3."""
        return self.debiasing

    def finalize_weights(self, weights):
        """The prediction weights with every group outside the budget set to
        zero (a no-op before the first shrink)."""
        if not self._shrunk or self._map_arr is None:
            return weights
        out = numpy.array(weights, dtype=numpy.float32, copy=True)
        out[~self.kept_buckets()] = 0.0
        return out

    def kept_buckets(self):
        """Boolean mask of the buckets that belong to a kept group (all
        buckets with a group before the first shrink)."""
        if self._map_arr is None:
            raise ValueError("Sparseptron: call begin_training() (nlp.initialize) first")
        return (self._mask_arr & numpy.uint64(self._kept_bits)) != 0

    def bucket_groups(self, uint64_t bucket):
        """The group ids that met ``bucket`` (with overlap = "first": its first)."""
        cdef uint64_t m = self._mask[bucket]
        return [int(self._id_of[b]) for b in range(NG) if (m >> b) & 1]

    # ----------------------------------------------------------------- learning

    def step(self, WeightTable table, list batch):
        """One sentence at a time: a perceptron step (sparse stage) or a masked
        MIRA/PA-I step (debiasing), then one averaging tick."""
        cdef const uint64_t[:] idx
        cdef const double[:] val
        cdef long n_wrong, total_wrong = 0, n_updates = 0
        if self._map_arr is None:
            raise ValueError(
                "Sparseptron: call begin_training() first (nlp.initialize does it for mst_parser)")
        if <uint64_t>table.n_buckets != <uint64_t>self._map.shape[0]:
            raise ValueError("Sparseptron: weight table and group map differ in size")
        self._table = table
        for item in batch:
            trees = item if isinstance(item, list) else [item]
            idx, val, n_wrong = trees[0][0], trees[0][1], trees[0][2]
            total_wrong += n_wrong
            if self.debiasing and len(trees) > 1:
                n_updates += self._debias_k_step(table, trees)
            elif self.debiasing:
                n_updates += self._debias_step(table, idx, val, n_wrong)
            else:
                self.t += 1
                if n_wrong > 0 and idx.shape[0] > 0:
                    eta = sqrt(<double>self.n_train / self.t)
                    sq = self._perceptron_step(table, idx, val, eta)
                    if sq > 0.0:
                        self._ratio_sum += n_wrong / (eta * sq)
                        self._n_ratio += 1
                        n_updates += 1
                end = self.t == <long long>self.sparse_epochs * self.n_train
                if end or self.t % self.shrink_every == 0:
                    self.shrink(table)
                if end and self.debias != "none":
                    self._start_debiasing(table)
            table.tick()
        return {"n_sentences": len(batch), "n_wrong": total_wrong, "n_updates": n_updates,
                "n_groups": self.n_active_groups()}

    cdef double _perceptron_step(self, WeightTable table, const uint64_t[:] idx,
                                 const double[:] val, double eta) except -1.0:
        """w += eta * val on the buckets of idx (those in the feature space);
        returns ||val||^2 over the buckets updated."""
        cdef Py_ssize_t i, n
        cdef double x, sq = 0.0
        if self._frozen:
            idx, val = self._in_support(idx, val)
        n = idx.shape[0]
        if n == 0:
            return 0.0
        for i in range(n):
            if self._mask[idx[i]] == 0:
                raise ValueError(
                    f"Sparseptron: bucket {idx[i]} has no feature group; the trees of each "
                    "update must go through note_tree()")
        with nogil:
            for i in range(n):
                x = table.stored(idx[i])
                _mask_add_sq(self._norm_mask(idx[i]), self._sq, -x * x)
            table.add_ptr(&idx[0], &val[0], n, eta)
            for i in range(n):
                x = table.stored(idx[i])
                _mask_add_sq(self._norm_mask(idx[i]), self._sq, x * x)
                sq += val[i] * val[i]
        return sq

    def _in_support(self, const uint64_t[:] idx, const double[:] val):
        """The entries of an update whose bucket is in the feature space."""
        ids = numpy.asarray(idx)
        keep = self._mask_arr[ids] != 0
        return (numpy.ascontiguousarray(ids[keep]),
                numpy.ascontiguousarray(numpy.asarray(val)[keep]))

    cdef long _debias_step(self, WeightTable table, const uint64_t[:] idx,
                           const double[:] val, long n_wrong) except -1:
        cdef Py_ssize_t i, k = 0, n = idx.shape[0]
        cdef double sq = 0.0, margin, tau
        if n_wrong == 0 or n == 0:
            return 0
        fidx = numpy.empty(n, dtype=numpy.uint64)
        fval = numpy.empty(n, dtype=numpy.float64)
        cdef uint64_t[::1] fi = fidx
        cdef double[::1] fv = fval
        for i in range(n):
            if self._mask[idx[i]] & self._kept_bits:
                fi[k] = idx[i]
                fv[k] = val[i]
                sq += val[i] * val[i]
                k += 1
        if k == 0:
            return 0
        margin = table.dot_ptr(&fi[0], &fv[0], k)
        if self.debias == "MIRA":
            tau = single_constraint_tau(<double>n_wrong, margin, sq, self.C)
        else:
            tau = pa_tau(1, max(0.0, sqrt(<double>n_wrong) - margin), sq, self.C)
        if tau <= 0.0:
            return 0
        table.add_ptr(&fi[0], &fv[0], k, tau)
        return 1

    def _kept_part(self, const uint64_t[:] idx, const double[:] val):
        """The entries of an update whose bucket belongs to a kept group."""
        ids = numpy.asarray(idx)
        keep = (self._mask_arr[ids] & numpy.uint64(self._kept_bits)) != 0
        return (numpy.ascontiguousarray(ids[keep]),
                numpy.ascontiguousarray(numpy.asarray(val, dtype=numpy.float64)[keep]))

    def _debias_k_step(self, WeightTable table, list trees):
        """Debiasing MIRA over the k best trees: the k-constraint QP on the
        kept groups' part of each tree's update (one constraint: the closed
        form of ``_debias_step``)."""
        constraints = []
        for idx, val, n_wrong in trees:
            if n_wrong > 0 and idx.shape[0] > 0:
                fi, fv = self._kept_part(idx, val)
                if fi.shape[0] > 0:
                    constraints.append((fi, fv, n_wrong))
        if not constraints:
            return 0
        if len(constraints) == 1:
            fi, fv, n_wrong = constraints[0]
            return self._debias_step(table, fi, fv, n_wrong)
        alpha, _ = k_constraint_alphas(table, constraints, self.C)
        for (fi, fv, _), a in zip(constraints, alpha):
            if a > 0.0:
                table.add(fi, fv, a)
        return 1 if alpha.sum() > 0.0 else 0

    def shrink(self, WeightTable table):
        """The budgeted group shrink of Figure 3 (O(table)); returns sigma."""
        cdef int g, j
        cdef double sigma, r
        cdef double[::1] scaled
        norms = numpy.zeros(NG, dtype=numpy.float64)
        logs = numpy.ones(NG, dtype=numpy.float64)
        for g in range(NG):
            if self._size[g] > 0:
                norms[g] = sqrt(max(self._sq[g], 0.0))
                logs[g] = max(1.0, log2(<double>self._size[g]))
        scaled_arr = numpy.sort(norms / logs)[::-1]
        scaled = numpy.ascontiguousarray(scaled_arr)
        # r_j = 0 beyond the number of groups, as for empty groups.
        sigma = 0.5 * ((scaled[self.B - 1] if self.B - 1 < NG else 0.0)
                       + (scaled[self.B] if self.B < NG else 0.0))
        for g in range(NG):
            if norms[g] > 0.0:
                r = norms[g] / logs[g]
                self._factor[g] = max(0.0, 1.0 - sigma / r)
            else:
                self._factor[g] = 0.0 if sigma > 0.0 else 1.0
            self._kept[g] = 1 if (self._factor[g] > 0.0 and norms[g] > 0.0) else 0
        self._kept_bits = 0
        for g in range(NG):
            if self._kept[g]:
                self._kept_bits |= (<uint64_t>1) << g
        with nogil:
            self._apply_factors(table)
        table.recompute_sq_norm()
        self._shrunk = True
        self.n_shrinks += 1
        return sigma

    cdef inline uint64_t _norm_mask(self, uint64_t f) noexcept nogil:
        """The groups whose norm bucket f counts in (and whose shrink factor
        applies to it): all of them, or the first with overlap first/refill."""
        if self._norm_first:
            return (<uint64_t>1) << self._bit_of[self._map[f]]
        return self._mask[f]

    cdef void _apply_factors(self, WeightTable table) noexcept nogil:
        """w_f *= factor of f for every non-zero w_f (the table flushes the
        averaging accumulator first), recomputing the group norms exactly.
        The factor of a bucket is the largest among its groups (one group
        with overlap = "first")."""
        cdef uint64_t f
        cdef int g
        cdef double fac
        cdef float x
        cdef uint64_t m
        for g in range(NG):
            self._sq[g] = 0.0
        for f in range(<uint64_t>table.n_buckets):
            if table.stored(f) == 0.0:
                continue
            m = self._norm_mask(f)
            fac = _mask_factor(m, self._factor)
            table.scale_bucket(f, fac)
            x = table.stored(f)
            _mask_add_sq(m, self._sq, (<double>x) * x)

    def _start_debiasing(self, WeightTable table):
        """Warm start: w, rescaled to the size of MIRA steps, and the
        averaging restarts from it.

        The sparse stage is invariant to the scale of w, MIRA is not: its
        step makes the margin equal the loss, about n_wrong / ||x||^2 per
        update, while the perceptron's step was eta. Multiplying w by the
        mean of n_wrong / (eta ||x||^2) over the sparse-stage updates puts the
        warm start on the scale MIRA would have reached with the same steps
        (without it the debiasing steps are negligible against w)."""
        if self._n_ratio:
            table.scale_by(self._ratio_sum / self._n_ratio)
        table.restart_average()
        self.debiasing = True

    # ---------------------------------------------------------------- reporting

    def n_active_groups(self):
        """Groups with non-zero weights now (after a shrink: the kept ones)."""
        cdef int g, n = 0
        for g in range(NG):
            if self._size[g] > 0 and self._sq[g] > 0.0 and (
                    self._kept[g] or not self._shrunk):
                n += 1
        return n

    def groups(self, row_names=()):
        """One dict per group met in training: id, name, |F_g|, ||v_g||
        (table units), kept. ``row_names``: what each tag row holds
        (``FeatureConfig.tag_row_names``), for names such as ``hp+cp/xpos``
        instead of ``hp+cp/tag2``."""
        cdef int g
        rows = []
        for g in range(NG):
            if self._size[g] > 0:
                rows.append({"id": int(self._id_of[g]),
                             "name": _fg.group_name(self._id_of[g], row_names),
                             "size": int(self._size[g]),
                             "norm": sqrt(max(self._sq[g], 0.0)),
                             "kept": bool(self._kept[g]) if self._shrunk else True})
        return rows

    @property
    def group_map(self):
        return self._map_arr

    def __repr__(self):
        return (f"Sparseptron(B={self.B}, shrink_every={self.shrink_every}, "
                f"sparse_epochs={self.sparse_epochs}, debias={self.debias!r}, C={self.C}, "
                f"overlap={self.overlap!r}, support={self.support!r}, k={self.k})")
