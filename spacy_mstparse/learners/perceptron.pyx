"""Averaged structured perceptron (Collins 2002), as the simplest online learner
of McDonald et al. (2005), Figure 3: w += phi(gold) - phi(pred) on every
mistake, and one averaging tick per training sentence.
"""
from libc.stdint cimport uint64_t

from .weight_table cimport WeightTable


cdef class Perceptron:
    """Averaged perceptron. ``step`` updates on each sentence with n_wrong > 0."""

    cdef readonly int batch_size
    cdef readonly bint loss_augmented
    cdef public bint averaged

    def __init__(self, bint averaged=True):
        self.batch_size = 1
        self.loss_augmented = False
        self.averaged = averaged

    def step(self, WeightTable table, list batch):
        """One update per sentence: if n_wrong > 0: w += x; then tick."""
        cdef const uint64_t[:] idx
        cdef const double[:] val
        cdef long n_wrong
        cdef long total_wrong = 0
        cdef long n_updates = 0
        for item in batch:
            idx, val, n_wrong = item[0], item[1], item[2]
            if n_wrong > 0 and idx.shape[0] > 0:
                table.add(idx, val, 1.0)
                n_updates += 1
            total_wrong += n_wrong
            table.tick()
        return {
            "n_sentences": len(batch),
            "n_wrong": total_wrong,
            "n_updates": n_updates,
        }

    def __repr__(self):
        return f"Perceptron(averaged={self.averaged})"
