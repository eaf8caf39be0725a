from libc.stdint cimport uint64_t

from .base cimport Learner
from .weight_table cimport WeightTable


cdef class OnlineLearner(Learner):
    cdef public bint averaged

    cdef double step_size(self, WeightTable table, const uint64_t[:] idx, const double[:] val,
                          long n_wrong, double sq_norm, double* loss)
    cdef double sentence_step(self, WeightTable table, object item, double* loss,
                              long* n_wrong) except -1.0
