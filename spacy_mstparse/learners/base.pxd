from .weight_table cimport WeightTable


cdef class Learner:
    cdef public int batch_size
    cdef public bint loss_augmented
    cdef public int k_best
    cdef public bint sparse_weights
