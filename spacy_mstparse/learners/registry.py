"""Registered config functions for the learners, under the ``mst_learners``
spaCy registry (``@mst_learners = "spacy_mstparse.Pegasos.v1"`` in a config).

Perceptron and MIRA follow McDonald et al. (2005), PA follows Crammer et al.
(2006) / Nguyen et al. (2007), Pegasos-DP follows Shalev-Shwartz et al. (2007)
/ Lee et al. (2010). The entry-point group ``spacy_mst_learners`` in
pyproject.toml points at the functions below.
"""
from typing import Optional

import spacy

from .mira import MIRA
from .passive_aggressive import PassiveAggressive
from .pegasos import Pegasos
from .perceptron import Perceptron

if not hasattr(spacy.registry, "mst_learners"):
    spacy.registry.create("mst_learners", entry_points=True)


@spacy.registry.mst_learners("spacy_mstparse.Perceptron.v1")
def make_perceptron() -> Perceptron:
    """Averaged perceptron (one averaging tick per sentence)."""
    return Perceptron()


@spacy.registry.mst_learners("spacy_mstparse.MIRA.v1")
def make_mira(C: Optional[float] = None, k: int = 5) -> MIRA:
    """Averaged k-best MIRA (McDonald et al. 2005: k = 5): one constraint per
    tree of the k best (Hildreth's algorithm); k = 1 is the closed form.
    Non-projective decoders give only the best tree, so they train with k = 1.
    ``C`` clips the dual variables (None = no clipping, as in the paper)."""
    return MIRA(C=float("inf") if C is None else C, k=k)


@spacy.registry.mst_learners("spacy_mstparse.PassiveAggressive.v1")
def make_passive_aggressive(variant: str = "PA-I", C: float = 0.05) -> PassiveAggressive:
    """Averaged passive-aggressive learner: ``variant`` is "PA", "PA-I" or "PA-II"."""
    return PassiveAggressive(variant=variant, C=C)


@spacy.registry.mst_learners("spacy_mstparse.Pegasos.v1")
def make_pegasos(lam: float = 1e-4, k: int = 10, averaged: bool = True) -> Pegasos:
    """Pegasos-DP: mini-batches of ``k`` loss-augmented sentences, regulariser ``lam``."""
    return Pegasos(lam=lam, k=k, averaged=averaged)
