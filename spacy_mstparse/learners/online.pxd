from libc.stdint cimport uint64_t

from .weight_table cimport WeightTable


cdef class OnlineLearner:
    cdef readonly int batch_size
    cdef readonly bint loss_augmented
    cdef public bint averaged

    cdef double step_size(self, WeightTable table, const uint64_t[:] idx, const double[:] val,
                          long n_wrong, double sq_norm, double* loss)
    cdef double sentence_step(self, WeightTable table, object item, double* loss,
                              long* n_wrong) except -1.0
