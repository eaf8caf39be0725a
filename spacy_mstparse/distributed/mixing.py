"""Iterative parameter mixing of the graph parser's weight tables.

McDonald, Hall & Mann (2010), "Distributed training strategies for the
structured perceptron", Figure 3: the training set is split into shards;
every epoch each shard trains one pass of the online learner starting from
the same weights w, then the shard weights are mixed,

    w <- sum_i mu_i w_i,   mu_i = 1/N (uniform) or n_i / sum_j n_j (shard size),

and the mixture is where every shard starts the next epoch. Their Theorem 3
bounds the mistakes of the mixed perceptron like the serial one's; the same
argument holds for any learner whose update depends on the current w and the
sentence alone (MIRA and k-best MIRA, McDonald et al. 2005; PA, Crammer et
al. 2006). Learners with state besides w (Pegasos' step counter and radius,
the sparseptron's feature groups, the 1-slack SSVM's working set) are
refused: ``check_mixable``.

Averaging (the prediction weights, Collins 2002): every shard restarts its
average at the start of an epoch and returns the mean of its weights over
the epoch's ticks with the tick count; the driver keeps the float64 sum of
the weights over every tick of every shard and epoch, so the prediction
weights are the mean of all the weight vectors the shards held, and with one
shard they equal serial training's up to float32 rounding of the epoch means.

Vectors travel ``pack``ed: the arc table is dense, but only about 5 % of
the labeler's table is non-zero (EWT), which goes as indices and values.
This module holds the driver's state and the arithmetic (numpy only, no
spaCy, no Ray); ``GraphTrainer.restart_from`` / ``epoch_state`` /
``set_mixed_state`` are the trainer's side.
"""
from typing import Dict, Mapping, Optional, Sequence

import numpy

from ..learners import WEIGHT_ONLY_LEARNERS, is_weight_only

WEIGHTINGS = ("uniform", "shard-size")
MIXABLE_LEARNERS = tuple(cls.__name__ for cls in WEIGHT_ONLY_LEARNERS)


class UnmixableLearnerError(ValueError):
    """A learner whose training state is more than its weight vector."""


def check_mixable(learner) -> None:
    """Raise ``UnmixableLearnerError`` unless parameter mixing is sound for
    ``learner`` (the perceptron, MIRA with any k, PA / PA-I / PA-II)."""
    if not is_weight_only(learner):
        raise UnmixableLearnerError(
            f"distributed training mixes weight vectors, which supports the "
            f"{', '.join(MIXABLE_LEARNERS)} learners only; {type(learner).__name__} keeps "
            "training state besides its weights (use spacy train for it)")


def mixture_coefficients(sizes: Sequence[int], weighting: str = "uniform") -> numpy.ndarray:
    """mu_i of each shard: 1/N, or proportional to its size (its ticks)."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"unknown weighting {weighting!r}: expected one of {', '.join(WEIGHTINGS)}")
    sizes = numpy.asarray(sizes, dtype="float64")
    if sizes.ndim != 1 or sizes.shape[0] == 0:
        raise ValueError("no shard to mix")
    if weighting == "uniform" or sizes.sum() == 0:
        return numpy.full(sizes.shape[0], 1.0 / sizes.shape[0])
    return sizes / sizes.sum()


def mix_vectors(vectors: Sequence[numpy.ndarray], coefficients: Sequence[float]) -> numpy.ndarray:
    """sum_i mu_i vectors[i] as float32 (accumulated in float64)."""
    if len(vectors) != len(coefficients):
        raise ValueError(f"{len(vectors)} vectors for {len(coefficients)} coefficients")
    total = numpy.zeros(numpy.asarray(vectors[0]).shape[0], dtype="float64")
    for vector, mu in zip(vectors, coefficients):
        total += float(mu) * numpy.asarray(vector, dtype="float64")
    return total.astype("float32")


SPARSE_BELOW = 0.25  # pack a vector as (indices, values) when under this share is non-zero


def pack(vector: numpy.ndarray) -> tuple:
    """A float32 vector as sent between driver and workers: ``("sparse", n,
    indices, values)`` when few entries are non-zero (the labeler's table:
    about 5 % on EWT), else ``("dense", vector)``."""
    vector = numpy.ascontiguousarray(vector, dtype="float32")
    nonzero = numpy.flatnonzero(vector)
    if nonzero.shape[0] < SPARSE_BELOW * vector.shape[0]:
        index_type = "uint32" if vector.shape[0] <= 2**32 else "uint64"
        return ("sparse", vector.shape[0], nonzero.astype(index_type), vector[nonzero])
    return ("dense", vector)


def unpack(packed: tuple) -> numpy.ndarray:
    """The dense float32 vector of ``pack``'s output."""
    if packed[0] == "dense":
        return numpy.asarray(packed[1], dtype="float32")
    _, n, indices, values = packed
    vector = numpy.zeros(n, dtype="float32")
    vector[numpy.asarray(indices, dtype="int64")] = values
    return vector


def packed_nbytes(packed: tuple) -> int:
    return sum(part.nbytes for part in packed[1:] if isinstance(part, numpy.ndarray))


class MixedWeights:
    """The driver's side of parameter mixing, per weight table (``arc``,
    ``label``): the mixed weights every shard starts the next epoch from,
    the float64 sum of the weights over all ticks so far and their count."""

    def __init__(self, weights: Mapping[str, numpy.ndarray],
                 totals: Optional[Mapping[str, numpy.ndarray]] = None,
                 n_ticks: Optional[Mapping[str, int]] = None):
        self.weights = {k: numpy.ascontiguousarray(v, dtype="float32") for k, v in weights.items()}
        self.totals = {k: numpy.zeros(v.shape[0], dtype="float64") if totals is None
                       else numpy.asarray(totals[k], dtype="float64")
                       for k, v in self.weights.items()}
        self.n_ticks = {k: 0 if n_ticks is None else int(n_ticks[k]) for k in self.weights}

    def mix(self, shard_states: Sequence[dict], weighting: str = "uniform") -> None:
        """Mix one epoch's shard states (``GraphTrainer.epoch_state()``
        dicts): w <- sum_i mu_i w_i; totals += sum_i n_i * mean_i."""
        if not shard_states:
            raise ValueError("no shard to mix")
        for name in self.weights:
            ticks = [int(state["n_ticks"][name]) for state in shard_states]
            mu = mixture_coefficients(ticks, weighting)
            self.weights[name] = mix_vectors([s["weights"][name] for s in shard_states], mu)
            for state, n in zip(shard_states, ticks):
                if n:
                    self.totals[name] += n * numpy.asarray(state["averages"][name], dtype="float64")
            self.n_ticks[name] += sum(ticks)

    def averaged(self, name: str) -> numpy.ndarray:
        """The mean of the weights over every tick (the mixed weights before any)."""
        if self.n_ticks[name] == 0:
            return self.weights[name].copy()
        return (self.totals[name] / self.n_ticks[name]).astype("float32")

    def state(self) -> Dict[str, dict]:
        """What ``GraphTrainer.set_mixed_state`` takes."""
        return {"weights": self.weights, "totals": self.totals, "n_ticks": self.n_ticks}
