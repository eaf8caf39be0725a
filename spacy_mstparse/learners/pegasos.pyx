"""Pegasos-DP: mini-batch stochastic sub-gradient training of a structural SVM
for dependency parsing, Lee et al. (2010), Algorithm 2, after Pegasos
(Shalev-Shwartz et al. 2007).

Each step t uses k sentences decoded with the same weights and Hamming-loss
augmented scores (``loss_augmented = True``), x_i = phi(gold_i) - phi(pred_i):
    eta_t     = 1 / (lam t)
    w_{t+1/2} = (1 - eta_t lam) w_t + (eta_t / k) sum_i x_i
    w_{t+1}   = min(1, r / ||w_{t+1/2}||) w_{t+1/2},   r = 1/sqrt(lam)
followed by one averaging tick (the averaged model is the mean of w_{t+1}).
The shrink and the projection are O(1) on the scaled ``WeightTable``.

Two departures, both measured in BENCHMARKS.md (1-slack S-SVM vs
Pegasos-DP):

* ``radius``: the paper's ball r = 1/sqrt(lam) assumes a loss of at most 1
  at w = 0 (Shalev-Shwartz et al.'s binary hinge loss). With the Hamming
  loss the objective at w = 0 is L(0), up to the mean sentence length, and
  the optimum only satisfies lam/2 ||w*||^2 <= L(0): r = sqrt(2 L(0) / lam)
  keeps it inside the ball. ``radius`` sets r; None (the default): r =
  sqrt(2 L(0) / lam) with L(0) the mean Hamming loss at w = 0 of the
  training set given to ``begin_training`` (every word of a sentence of two
  or more words; the component always calls it), the paper's 1/sqrt(lam)
  until then. On EWT dev it is also the more accurate (BENCHMARKS.md).
* A sentence whose decoded tree violates less than its gold tree (a
  non-projective gold tree under Eisner) adds no sub-gradient: the maximum
  of the structured hinge over all trees includes the gold tree, at 0.
"""
from libc.math cimport isfinite, sqrt
from libc.stdint cimport uint64_t

from .base cimport Learner
from .weight_table cimport WeightTable

# The default regulariser (the registry's too): the best of Lee et al.'s grid
# on EWT dev, with the default (Hamming-loss) ball (BENCHMARKS.md).
DEFAULT_LAM = 3.3e-3


cdef class Pegasos(Learner):
    """Pegasos-DP with regulariser ``lam`` and mini-batches of ``k`` sentences;
    ``averaged`` (default): predict with the averaged weights, else the last."""

    cdef public bint averaged
    cdef readonly double lam
    cdef readonly int k
    cdef readonly long long t
    cdef readonly double radius
    cdef readonly bint radius_from_data

    def __init__(self, double lam=DEFAULT_LAM, int k=10, bint averaged=True, radius=None):
        if not isfinite(lam) or lam <= 0.0:
            raise ValueError(f"Pegasos: lam must be finite and > 0, got {lam}")
        if k < 1:
            raise ValueError(f"Pegasos: k must be >= 1, got {k}")
        self.radius_from_data = radius is None
        if radius is None:
            radius = 1.0 / sqrt(lam)
        if not isfinite(radius) or radius <= 0.0:
            raise ValueError(f"Pegasos: radius must be finite and > 0, got {radius}")
        self.radius = radius
        self.lam = lam
        self.k = k
        self.batch_size = k
        self.loss_augmented = True
        self.averaged = averaged
        self.t = 0

    def begin_training(self, features, list gold, int order=1):
        """With ``radius`` None: r = sqrt(2 L(0) / lam), L(0) the mean number
        of words of the gold sentences (those of one word have no wrong tree)."""
        if not self.radius_from_data or not gold:
            return
        cdef double loss = 0.0
        for item in gold:
            n = len(item[1]) - 1
            loss += n if n >= 2 else 0
        loss /= len(gold)
        if loss > 0.0:
            self.radius = sqrt(2.0 * loss / self.lam)

    def predicts_with_average(self):
        return self.averaged

    def step(self, WeightTable table, list batch):
        """One Pegasos step on a mini-batch (may be shorter than k), then tick."""
        cdef const uint64_t[:] idx
        cdef const double[:] val
        cdef long n_wrong
        cdef long total_wrong = 0
        cdef Py_ssize_t n = len(batch)
        cdef double eta, step_size, norm, hinge, hinge_sum = 0.0
        cdef double radius = self.radius
        cdef bint projected = False
        if n == 0:
            return {"n_sentences": 0, "n_wrong": 0, "eta": 0.0, "hinge": 0.0,
                    "norm": sqrt(table.sq_norm()), "projected": False}
        # Structured hinge loss at w_t (x_i from loss-augmented decoding);
        # only sentences with a positive hinge give a sub-gradient.
        active = []
        for item in batch:
            idx, val, n_wrong = item[0], item[1], item[2]
            total_wrong += n_wrong
            hinge = n_wrong - table.dot(idx, val)
            if hinge > 0.0:
                hinge_sum += hinge
                active.append(item)
        self.t += 1
        eta = 1.0 / (self.lam * self.t)
        table.scale_by(1.0 - eta * self.lam)   # = 1 - 1/t; 0 at t = 1
        step_size = eta / n
        for item in active:
            idx, val = item[0], item[1]
            if idx.shape[0] > 0:
                table.add(idx, val, step_size)
        norm = sqrt(table.sq_norm())
        if norm > radius:
            table.scale_by(radius / norm)
            projected = True
            norm = radius
        table.tick()
        return {
            "n_sentences": n,
            "n_wrong": total_wrong,
            "eta": eta,
            "hinge": hinge_sum / n,
            "norm": norm,
            "projected": projected,
        }

    def __repr__(self):
        return (f"Pegasos(lam={self.lam}, k={self.k}, averaged={self.averaged}, "
                f"radius={self.radius})")
