"""The online update loop shared by the perceptron, MIRA and PA learners.

One step per sentence, as in Figure 3 of McDonald et al. (2005): compute the
step size tau for x = phi(gold) - phi(predicted), set w += tau x, then tick
the averaging clock (every sentence counts in the average, updated or not).
Subclasses define only ``step_size``.
"""
from libc.stdint cimport uint64_t

from .sparse cimport sparse_sq_norm
from .weight_table cimport WeightTable


cdef class OnlineLearner:
    """Base class: one update per sentence; subclasses give the step size."""

    def __init__(self, bint averaged=True):
        self.batch_size = 1
        self.loss_augmented = False
        self.averaged = averaged

    cdef double step_size(self, WeightTable table, const uint64_t[:] idx, const double[:] val,
                          long n_wrong, double sq_norm, double* loss):
        loss[0] = 0.0
        return 0.0

    def step(self, WeightTable table, list batch):
        """For each ``(idx, val, n_wrong)``: w += tau x, then tick. Returns the
        number of sentences, wrong heads and updates, the mean tau and the
        mean loss (the learner's own: margin loss for MIRA/PA)."""
        cdef const uint64_t[:] idx
        cdef const double[:] val
        cdef long n_wrong, total_wrong = 0, n_updates = 0
        cdef double sq, tau, loss, tau_sum = 0.0, loss_sum = 0.0
        for item in batch:
            idx, val, n_wrong = item[0], item[1], item[2]
            total_wrong += n_wrong
            sq = sparse_sq_norm(val)
            if sq > 0.0:
                tau = self.step_size(table, idx, val, n_wrong, sq, &loss)
                loss_sum += loss
                if tau > 0.0:
                    table.add(idx, val, tau)
                    n_updates += 1
                    tau_sum += tau
            table.tick()
        n = len(batch)
        return {
            "n_sentences": n,
            "n_wrong": total_wrong,
            "n_updates": n_updates,
            "tau": tau_sum / n if n else 0.0,
            "loss": loss_sum / n if n else 0.0,
        }
