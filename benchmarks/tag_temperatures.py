"""A temperature per coarse tag of the dependent: p(tree) proportional to
exp(sum over its arcs h -> c of s(h, c) / T[tag of c]), a tree distribution
still (``graph.marginals.scaled_scores``), fitted like the single
temperature of Guo et al. 2017's temperature scaling, by coordinate ascent
on the gold heads' log-likelihood. ``bench_probabilities`` measures it;
``calibrate`` does not use it (it did not raise the held-out coverage,
BENCHMARKS.md).
"""
import math
from typing import Dict, Optional, Sequence, Tuple

import numpy

from spacy_mstparse.graph.marginals import Temperature
from spacy_mstparse.graph.temperature import gold_head_log_probs, golden_section_max


def word_temperatures(tags: Sequence[str], temperature: float,
                      tag_temperatures: Optional[Dict[str, float]] = None) -> Temperature:
    """The temperature of every word: ``tag_temperatures[tag]`` of its coarse
    tag (entry 0, the root, unused), ``temperature`` for tags not in the
    table; just ``temperature`` without a table."""
    if not tag_temperatures:
        return float(temperature)
    out = numpy.empty(len(tags) + 1, dtype="float64")
    out[0] = 1.0
    out[1:] = [tag_temperatures.get(tag, temperature) for tag in tags]
    return out


def fit_tag_temperatures(items: Sequence[Tuple[numpy.ndarray, ...]],
                         tags: Sequence[Sequence[str]], projective: bool, temperature: float,
                         min_words: int = 200, sweeps: int = 2, span: float = 4.0,
                         steps: int = 12) -> Dict[str, float]:
    """One temperature per coarse tag of the dependent (p(tree) proportional
    to exp(sum over its arcs h -> c of s(h, c) / T[tag of c])), maximising
    the gold heads' log-likelihood: coordinate ascent from ``temperature``
    for every tag with at least ``min_words`` words (rarer tags keep
    ``temperature``), a golden-section search over log T in
    [T / span, T * span] per tag, on the sentences holding the tag,
    ``sweeps`` times. ``tags[i]``: the tags of item i's words."""
    counts: Dict[str, int] = {}
    for sent in tags:
        for tag in sent:
            counts[tag] = counts.get(tag, 0) + 1
    table: Dict[str, float] = {}
    fitted = [tag for tag, c in sorted(counts.items(), key=lambda kv: -kv[1]) if c >= min_words]
    for _ in range(sweeps):
        for tag in fitted:
            sel = [i for i, sent in enumerate(tags) if tag in sent]
            part = [items[i] for i in sel]

            def f(log_t, tag=tag, sel=sel, part=part):
                trial = {**table, tag: math.exp(log_t)}
                temps = [word_temperatures(tags[i], temperature, trial) for i in sel]
                return gold_head_log_probs(part, temps, projective)[0]

            centre = math.log(table.get(tag, temperature))
            x, _ = golden_section_max(f, centre - math.log(span), centre + math.log(span), steps)
            table[tag] = float(math.exp(x))
    return table
