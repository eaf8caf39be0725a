"""The online update loop shared by the perceptron, MIRA and PA learners.

One step per sentence, as in Figure 3 of McDonald et al. (2005): compute the
step size tau for x = phi(gold) - phi(predicted), set w += tau x, then tick
the averaging clock (every sentence counts in the average, updated or not).
Subclasses define ``step_size``; a learner whose step items are not single
``(idx, val, n_wrong)`` tuples (k-best MIRA) overrides ``sentence_step``.
"""
from libc.stdint cimport uint64_t

from .base cimport Learner
from .sparse cimport sparse_sq_norm
from .weight_table cimport WeightTable


cdef class OnlineLearner(Learner):
    """Base class: one update per sentence; subclasses give the step size.
    ``averaged`` (default): predict with the averaged weights, else the last."""

    def __init__(self, bint averaged=True):
        self.averaged = averaged

    def predicts_with_average(self):
        return self.averaged

    cdef double step_size(self, WeightTable table, const uint64_t[:] idx, const double[:] val,
                          long n_wrong, double sq_norm, double* loss):
        loss[0] = 0.0
        return 0.0

    cdef double sentence_step(self, WeightTable table, object item, double* loss,
                              long* n_wrong) except -1.0:
        """Update w for one sentence's ``(idx, val, n_wrong)`` (no tick).
        Returns the step taken (0 when w is unchanged); sets the learner's
        loss and the number of wrong heads."""
        cdef const uint64_t[:] idx = item[0]
        cdef const double[:] val = item[1]
        cdef double sq = sparse_sq_norm(val)
        cdef double tau = 0.0
        n_wrong[0] = item[2]
        loss[0] = 0.0
        if sq > 0.0:
            tau = self.step_size(table, idx, val, n_wrong[0], sq, loss)
            if tau > 0.0:
                table.add(idx, val, tau)
            else:
                tau = 0.0
        return tau

    def step(self, WeightTable table, list batch):
        """For each sentence's item: w += tau x, then tick. Returns the
        number of sentences, wrong heads and updates, the mean tau and the
        mean loss (the learner's own: margin loss for MIRA/PA)."""
        cdef long n_wrong, total_wrong = 0, n_updates = 0
        cdef double tau, loss, tau_sum = 0.0, loss_sum = 0.0
        for item in batch:
            tau = self.sentence_step(table, item, &loss, &n_wrong)
            total_wrong += n_wrong
            loss_sum += loss
            if tau > 0.0:
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
