"""Time the arc marginals against the 1-best decoders on random score matrices.

For each sentence length, draws random float32 (n+1) x (n+1) matrices
(standard normal scores) and prints the mean time per sentence of eisner,
projective_marginals, chu_liu_edmonds and nonprojective_marginals (single
root, T = 1), and the ratios marginals / decoder.

    python benchmarks/bench_marginals.py [--lengths 20,40] [--sentences 200]
"""
import argparse
import time

import numpy as np

from spacy_mstparse.decoders import (
    chu_liu_edmonds,
    eisner,
    nonprojective_marginals,
    projective_marginals,
)


def mean_time(fn, matrices, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for m in matrices:
            fn(m)
        best = min(best, time.perf_counter() - t0)
    return best / len(matrices)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="20,40")
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3, help="best of this many passes")
    args = parser.parse_args()
    rs = np.random.RandomState(0)
    print(f"{'n':>4} {'eisner':>10} {'proj marg':>10} {'ratio':>6} {'cle':>10} {'nonproj marg':>12} {'ratio':>6}")
    for n in (int(x) for x in args.lengths.split(",")):
        matrices = [rs.randn(n + 1, n + 1).astype(np.float32) for _ in range(args.sentences)]
        t_e = mean_time(eisner, matrices, args.repeats)
        t_pm = mean_time(projective_marginals, matrices, args.repeats)
        t_c = mean_time(chu_liu_edmonds, matrices, args.repeats)
        t_nm = mean_time(nonprojective_marginals, matrices, args.repeats)
        print(
            f"{n:>4} {t_e * 1e6:>8.1f}us {t_pm * 1e6:>8.1f}us {t_pm / t_e:>6.1f} "
            f"{t_c * 1e6:>8.1f}us {t_nm * 1e6:>10.1f}us {t_nm / t_c:>6.1f}"
        )


if __name__ == "__main__":
    main()
