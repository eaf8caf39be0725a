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
