"""Online learners for MST dependency parsing, on a scaled, lazily averaged
weight table: averaged perceptron and MIRA (McDonald et al. 2005), PA / PA-I /
PA-II (Crammer et al. 2006; Nguyen et al. 2007) and Pegasos-DP
(Shalev-Shwartz et al. 2007; Lee et al. 2010).

Every learner is a ``Learner`` (``base.pyx``: the contract with the training
loop). The config functions live in ``spacy_mstparse.registry``; nothing here
imports spaCy.
"""
from .base import Learner
from .hildreth import hildreth
from .mira import MIRA, single_constraint_tau
from .passive_aggressive import PassiveAggressive, pa_tau
from .pegasos import Pegasos
from .perceptron import Perceptron
from .sparse import sparse_difference
from .weight_table import WeightTable

# Learners whose whole training state is the weight table: copies of their
# weights can be trained apart and combined (parameter mixing, replicas).
# Pegasos (step counter, radius), the sparseptron (feature groups) and the
# 1-slack SSVM (working set) keep more.
WEIGHT_ONLY_LEARNERS = (Perceptron, MIRA, PassiveAggressive)


def is_weight_only(learner) -> bool:
    """Whether ``learner``'s training state is its weight table alone."""
    return type(learner) in WEIGHT_ONLY_LEARNERS


__all__ = [
    "WEIGHT_ONLY_LEARNERS",
    "is_weight_only",
    "Learner",
    "WeightTable",
    "Perceptron",
    "MIRA",
    "PassiveAggressive",
    "Pegasos",
    "sparse_difference",
    "single_constraint_tau",
    "hildreth",
    "pa_tau",
]
