"""Calibration metrics of probabilities against correctness: the expected
calibration error (Naeini et al. 2015; equal-width confidence bins), the
bins of a reliability diagram, and accuracy and coverage above probability
thresholds. spaCy-free.
"""
from typing import Dict, Iterable, List, Sequence

import numpy


def expected_calibration_error(probs: Iterable[float], correct: Iterable[bool],
                               n_bins: int = 15) -> float:
    """ECE: the bin-size-weighted mean |accuracy - mean confidence| over
    ``n_bins`` equal-width confidence bins of [0, 1]."""
    p = numpy.asarray(list(probs), dtype="float64")
    y = numpy.asarray(list(correct), dtype="float64")
    if p.size == 0:
        return float("nan")
    bins = numpy.minimum((p * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in range(n_bins):
        sel = bins == b
        if sel.any():
            total += sel.sum() * abs(y[sel].mean() - p[sel].mean())
    return float(total / p.size)


def reliability_bins(probs, correct, n_bins: int = 15) -> List[Dict[str, float]]:
    """Per bin: its range, count, mean confidence and accuracy (a reliability diagram)."""
    p = numpy.asarray(list(probs), dtype="float64")
    y = numpy.asarray(list(correct), dtype="float64")
    bins = numpy.minimum((p * n_bins).astype(int), n_bins - 1)
    out = []
    for b in range(n_bins):
        sel = bins == b
        out.append({"low": b / n_bins, "high": (b + 1) / n_bins, "count": int(sel.sum()),
                    "confidence": float(p[sel].mean()) if sel.any() else None,
                    "accuracy": float(y[sel].mean()) if sel.any() else None})
    return out


def calibration_report(probs, correct, thresholds: Sequence[float] = (0.9, 0.99),
                       n_bins: int = 15) -> Dict[str, object]:
    """ECE, overall accuracy and, per threshold t, the share of words with
    probability >= t (coverage) and the accuracy among them."""
    p = numpy.asarray(list(probs), dtype="float64")
    y = numpy.asarray(list(correct), dtype=bool)
    report: Dict[str, object] = {
        "words": int(p.size),
        "ece": expected_calibration_error(p, y, n_bins),
        "accuracy": float(y.mean()) if p.size else float("nan"),
        "mean_prob": float(p.mean()) if p.size else float("nan"),
    }
    for t in thresholds:
        sel = p >= t
        report[f"coverage@{t}"] = float(sel.mean()) if p.size else float("nan")
        report[f"accuracy@{t}"] = float(y[sel].mean()) if sel.any() else float("nan")
    return report
