"""Compact storage of a weight vector with few non-zero entries.

Used by ``mst_parser`` to save its label weights (about 5% non-zero) and the
arc weights of sparse learners (the sparseptron: Smith & Martins 2013 report
the share of non-zero coefficients and the model size): a bitmap of the
non-zero positions (``numpy.packbits``, n/8 bytes) plus the non-zero float32
values in index order, so the file takes n/8 + 4 nnz bytes instead of 4 n.
"""
from typing import Dict

import numpy


def pack(weights: numpy.ndarray) -> Dict[str, numpy.ndarray]:
    """``{"n", "nonzero_bits", "values"}`` for a 1-d float32 array."""
    weights = numpy.ascontiguousarray(weights, dtype="float32")
    if weights.ndim != 1:
        raise ValueError(f"expected a 1-d weight vector, got shape {weights.shape}")
    nonzero = weights != 0.0
    return {
        "n": numpy.array([weights.shape[0]], dtype="int64"),
        "nonzero_bits": numpy.packbits(nonzero),
        "values": weights[nonzero],
    }


def unpack(data, where: str = "sparse weights") -> numpy.ndarray:
    """The dense float32 vector back from ``pack``'s dict (or an npz file)."""
    for key in ("n", "nonzero_bits", "values"):
        if key not in data:
            raise ValueError(f"{where}: missing field {key!r}")
    n = int(numpy.asarray(data["n"]).reshape(-1)[0])
    bits = numpy.asarray(data["nonzero_bits"], dtype="uint8")
    values = numpy.asarray(data["values"], dtype="float32")
    if n < 0 or bits.shape != ((n + 7) // 8,):
        raise ValueError(f"{where}: bitmap of {bits.shape} bytes does not fit n = {n}")
    nonzero = numpy.unpackbits(bits, count=n).astype(bool)
    if int(nonzero.sum()) != values.shape[0]:
        raise ValueError(
            f"{where}: the bitmap marks {int(nonzero.sum())} non-zero weights but "
            f"{values.shape[0]} values are stored"
        )
    weights = numpy.zeros(n, dtype="float32")
    weights[nonzero] = values
    return weights


def prune(weights: numpy.ndarray, density: float) -> numpy.ndarray:
    """``weights`` with at most ``density`` of its entries non-zero: the
    largest magnitudes are kept (ties broken by position), the rest set to
    0. A vector already that sparse is returned as it is, so pruning a
    pruned vector changes nothing."""
    weights = numpy.ascontiguousarray(weights, dtype="float32").reshape(-1)
    if not 0.0 < density <= 1.0:
        raise ValueError(f"density must be in (0, 1], got {density!r}")
    keep = int(density * weights.shape[0])
    where = numpy.flatnonzero(weights)
    if where.shape[0] <= keep:
        return weights
    magnitude = numpy.abs(weights[where])
    # stable order: the smallest magnitudes first, among equal ones the first positions
    dropped = where[numpy.argsort(magnitude, kind="stable")[: where.shape[0] - keep]]
    out = weights.copy()
    out[dropped] = 0.0
    return out


# (arc density, label density, magnitude levels per sign): nothing dropped or rounded.
NO_COMPACTION = (1.0, 1.0, 127)


def check_compaction(compaction) -> tuple:
    """``(arc_density, label_density, levels)`` checked: densities in (0, 1],
    levels 2 to 127."""
    arc_density, label_density, levels = compaction
    for name, density in (("arc_density", arc_density), ("label_density", label_density)):
        if not 0.0 < density <= 1.0:
            raise ValueError(f"{name} must be in (0, 1], got {density!r}")
    if not 2 <= levels <= NO_COMPACTION[2]:
        raise ValueError(f"weight_levels must be 2 to {NO_COMPACTION[2]}, got {levels!r}")
    return (float(arc_density), float(label_density), int(levels))


def compact(weights: numpy.ndarray, density: float, levels: int) -> numpy.ndarray:
    """``weights`` pruned to ``density`` (``prune``) and, with fewer than 127
    ``levels``, rounded to the values of their ``levels``-magnitude codebook
    (``features.weights.quantize``). Compacting compacted weights changes
    nothing (so a loaded model's weights stay as saved)."""
    if density < 1.0:
        weights = prune(weights, density)
    if levels < NO_COMPACTION[2]:
        from ..features.weights import quantize

        weights = quantize(weights, levels).dequantize()
    return weights
