"""The dual QP of the 1-slack structural SVM (Joachims, Finley & Yu 2009) over
its working set W of aggregated constraints (a_j, g_j), with H_jk = g_j . g_k:

    max_alpha  a . alpha - alpha' H alpha / (2 lam),  alpha >= 0, sum(alpha) <= 1.

W holds tens to a few hundred constraints, so plain numpy suffices:
accelerated projected gradient (FISTA, Beck & Teboulle 2009, with adaptive
restart) with the exact Euclidean projection onto the capped simplex, stopped
by the Frank-Wolfe gap, an upper bound on the distance to the optimal value.
"""
import numpy


def project_capped_simplex(v):
    """Euclidean projection of v onto {alpha >= 0, sum(alpha) <= 1}."""
    x = numpy.maximum(v, 0.0)
    if x.sum() <= 1.0:
        return x
    u = numpy.sort(v)[::-1]
    css = numpy.cumsum(u) - 1.0
    k = numpy.arange(1, len(v) + 1)
    rho = numpy.nonzero(u - css / k > 0)[0][-1]
    theta = css[rho] / (rho + 1.0)
    return numpy.maximum(v - theta, 0.0)


def solve_dual(H, a, lam, alpha0=None, tol=1e-6, max_iter=200000):
    """Maximise a.alpha - alpha'H alpha / (2 lam) over {alpha >= 0, sum <= 1}.

    Accelerated projected gradient (FISTA with restarts), stopped when the
    Frank-Wolfe gap (an upper bound on the distance to the optimum) is below
    ``tol``. Returns (alpha, dual value, gap, iterations).
    """
    H = numpy.asarray(H, dtype=numpy.float64)
    a = numpy.asarray(a, dtype=numpy.float64)
    m = a.shape[0]
    if H.shape != (m, m):
        raise ValueError(f"H has shape {H.shape}, expected {(m, m)}")

    def value(x):
        return float(a @ x - x @ (H @ x) / (2.0 * lam))

    def fw_gap(x):
        grad = a - H @ x / lam
        return max(0.0, float(grad.max())) - float(grad @ x)

    L = float(numpy.linalg.eigvalsh(H)[-1]) / lam if m else 0.0
    if L <= 0.0:
        L = 1.0
    x = numpy.zeros(m) if alpha0 is None else project_capped_simplex(numpy.asarray(alpha0, float))
    y = x.copy()
    t = 1.0
    fx = value(x)
    gap = fw_gap(x)
    it = 0
    while gap > tol and it < max_iter:
        it += 1
        x_new = project_capped_simplex(y + (a - H @ y / lam) / L)
        f_new = value(x_new)
        if f_new < fx and t > 1.0:
            # Adaptive restart: the momentum overshot; retry from x without
            # it. (A plain step from x, t = 1, is monotone up to rounding.)
            y = x.copy()
            t = 1.0
            continue
        t_new = 0.5 * (1.0 + (1.0 + 4.0 * t * t) ** 0.5)
        y = x_new + ((t - 1.0) / t_new) * (x_new - x)
        x, fx, t = x_new, f_new, t_new
        gap = fw_gap(x)
    gap = fw_gap(x)
    return x, fx, gap, it
