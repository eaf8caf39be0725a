"""Hildreth's algorithm for the small quadratic programs of k-best MIRA
(Crammer & Singer 2003; McDonald, Crammer & Pereira 2005, Section 2.3.1;
Censor & Zenios 1997).

k-best MIRA asks for the smallest change of w that gives the gold tree a
margin over each of the k best trees at least as large as its loss:

    min ||w' - w||^2  s.t.  w'.x_i >= L_i  (i = 1..k),  x_i = phi(gold) - phi(y_i).

With w' = w + sum_i alpha_i x_i its dual is

    max_alpha  sum_i alpha_i b_i - 1/2 alpha' G alpha,   0 <= alpha_i <= C,

with G_ij = x_i . x_j and b_i = L_i - w.x_i. Hildreth's method is
coordinate ascent on this dual: at each step take the coordinate whose
KKT condition is most violated and maximise exactly along it (clipped to
[0, C]), keeping the gradient up to date in O(k). It stops when no
violation exceeds ``eps`` (or after ``max_iter`` steps).
"""
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

import numpy as np


cdef int hildreth_solve(const double* G, const double* b, int k, double C,
                        double* alpha, int max_iter, double eps) noexcept nogil:
    """Solve the dual into ``alpha`` (length k). Returns the number of
    coordinate steps, or -1 if memory could not be allocated."""
    cdef double* grad = <double*>malloc(k * sizeof(double))
    cdef int i, j, it, best
    cdef double viol, best_viol, new, delta
    if grad is NULL:
        return -1
    for i in range(k):
        alpha[i] = 0.0
        grad[i] = b[i]
    it = 0
    while it < max_iter:
        best = -1
        best_viol = eps
        for i in range(k):
            if G[i * k + i] <= 0.0:
                continue   # x_i = 0: the constraint cannot be served
            if grad[i] > 0.0 and alpha[i] < C:
                viol = grad[i]
            elif grad[i] < 0.0 and alpha[i] > 0.0:
                viol = -grad[i]
            else:
                continue
            if viol > best_viol:
                best_viol = viol
                best = i
        if best < 0:
            break
        new = alpha[best] + grad[best] / G[best * k + best]
        if new < 0.0:
            new = 0.0
        elif new > C:
            new = C
        delta = new - alpha[best]
        alpha[best] = new
        for j in range(k):
            grad[j] -= G[j * k + best] * delta
        it += 1
    free(grad)
    return it


def hildreth(G, b, double C=INFINITY, int max_iter=10000, double eps=1e-8):
    """Solve max sum(alpha*b) - alpha'G alpha/2 s.t. 0 <= alpha <= C.

    G: (k, k) Gram matrix of the constraint vectors; b: (k,) losses minus
    margins. Returns alpha as a float64 array.
    """
    cdef double[:, ::1] g = np.ascontiguousarray(G, dtype=np.float64)
    cdef double[::1] bb = np.ascontiguousarray(b, dtype=np.float64)
    cdef int k = bb.shape[0]
    if g.shape[0] != k or g.shape[1] != k:
        raise ValueError(f"G must be ({k}, {k}), got ({g.shape[0]}, {g.shape[1]})")
    if not C > 0.0:
        raise ValueError(f"C must be > 0, got {C}")
    alpha = np.zeros(k, dtype=np.float64)
    if k == 0:
        return alpha
    cdef double[::1] a = alpha
    cdef int rc
    with nogil:
        rc = hildreth_solve(&g[0, 0], &bb[0], k, C, &a[0], max_iter, eps)
    if rc < 0:
        raise MemoryError()
    return alpha
