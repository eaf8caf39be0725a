"""Averaged structured perceptron (Collins 2002), as the simplest online learner
of McDonald et al. (2005), Figure 3: w += phi(gold) - phi(pred) on every
mistake, and one averaging tick per training sentence.
"""
from libc.stdint cimport uint64_t

from .online cimport OnlineLearner
from .weight_table cimport WeightTable


cdef class Perceptron(OnlineLearner):
    """Averaged perceptron: w += x whenever the predicted tree is wrong."""

    def __init__(self, bint averaged=True):
        OnlineLearner.__init__(self, averaged)

    cdef double step_size(self, WeightTable table, const uint64_t[:] idx, const double[:] val,
                          long n_wrong, double sq_norm, double* loss):
        loss[0] = <double>n_wrong
        return 1.0 if n_wrong > 0 else 0.0

    def __repr__(self):
        return f"Perceptron(averaged={self.averaged})"
