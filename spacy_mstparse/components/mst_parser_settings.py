"""The settings of an ``mst_parser`` component: the factory's
``DEFAULT_CONFIG`` (the one source of every default, for the factory, the
component's constructor and the docs), the type of each setting (which
spaCy's config validation checks: ``setting_types``) and the settings a
trained model fixes.

decoder: "eisner" (projective), "chu_liu_edmonds" (non-projective) or "auto"
    (Chu-Liu-Edmonds when more than ``nonprojective_threshold`` of the
    training arcs are non-projective, at second order also more than 1%;
    graph/decoder_choice.py). With ``order = 2`` the non-projective decoder
    is the approximate second-order one.
order: 1 (arcs), 2 (+ adjacent siblings) or 3 (+ grandparents; projective only).
learner: a learner from the ``mst_learners`` registry.
features: a feature set from the ``mst_features`` registry.
label_buckets: rows of the labeler's hashed weight table (a power of two).
max_sentence_length: longest word sequence decoded as one tree.
replicas: weight copies trained on reordered streams (graph/replicas.py).
Run-time settings: probabilities (token._.head_prob / dep_prob, calibrated
at the end of training: components/mst_calibration.py), n_best, n_threads,
quantize_weights, parallel_batch (training), keep_heads (arc pruning in
prediction: the best heads kept per word, 0 = none; graph/model.py).
filter_arcs: fit the arc filter at ``initialize`` (features/arc_filter.pyx),
    saved with the model, and predict with it: arcs longer than the training
    trees show for their head tag, child tag and direction are not scored
    (false at load time: every arc scored).
arc_density, label_density, weight_levels: compaction of the prediction
    weights, saved as they are (graph/model.py, learners/sparse_weights.py):
    at most that share of the arc / label table non-zero (the largest
    magnitudes kept), and with weight_levels < 127 every weight rounded to
    one of that many magnitudes per sign, so that with quantize_weights the
    saved codes compress further. Training keeps the full tables; defaults
    1.0, 1.0, 127: nothing dropped or rounded.
final_to_root: learn the final-word rule at ``initialize`` (graph/final_word.pyx),
    saved with the model, and apply it to the best tree of every parse
    without constraints: a sentence-final word whose tag the training trees
    attach to the root word (UD's final punctuation) is attached to the
    parsed tree's root word (false at load time: no rule).
"""
from typing import Callable, Optional

from spacy import registry

from .. import registry as _registry  # noqa: F401  (@mst_learners, @mst_features)
from ..decoders.dispatch import DECODERS
from ..features.config import DEFAULT_N_BUCKETS, FeatureConfig
from ..graph.constraints import POLICIES, check_policy
from ..graph.training import DEFAULT_PARALLEL_BATCH
from ..setting_types import (  # noqa: F401  (check_settings, config_errors: for mst_parser)
    TABLE_SIZE, at_least, check_settings, config_errors, int_in, number_in, one_of, positive_int,
    unit_share,
)

# Settings the saved cfg leaves out: the compaction is in the saved weights (and
# the pipeline's config.cfg), which compacting again leaves as they are.
UNSAVED = ("arc_density", "label_density", "weight_levels")
# Settings that define the trained model: a load-time config must match.
MODEL_SETTINGS = ("order", "label_buckets")

DEFAULT_CONFIG = {
    "decoder": "eisner",
    "order": 1,
    "learner": {"@mst_learners": "spacy_mstparse.MIRA.v1", "k": 5, "C": None},
    "features": {
        "@mst_features": "spacy_mstparse.GraphFeatures.v2",
        "tag_columns": "auto",
        "use_morph": "auto",
        "n_buckets": DEFAULT_N_BUCKETS,
        "direction_backoff": True,
        "lemma": "auto",
    },
    "label_buckets": 2**17,
    "max_sentence_length": 250,
    "nonprojective_threshold": 0.003,  # non-projective arc share; see graph/decoder_choice.py
    # runtime settings (mst_parser.py, graph/batch.pyx, features/weights.pyx, graph/training.py):
    "probabilities": False, "n_best": 1, "n_threads": 1, "quantize_weights": False,
    "parallel_batch": DEFAULT_PARALLEL_BATCH, "replicas": 1,
    # fixed / forbidden heads no tree of the decoder satisfies (graph/constraints.py)
    "constraints": "nonprojective",
    # arc pruning in prediction: the keep_heads best heads per word (0: none; graph/model.py)
    "keep_heads": 0,
    # predict scoring only arcs as long as the training trees show for their tags
    # (features/arc_filter.pyx)
    "filter_arcs": True,
    # attach a final word to the root word where the training trees do (graph/final_word.pyx)
    "final_to_root": True,
    # compaction of the prediction weights (learners/sparse_weights.py): none
    "arc_density": 1.0, "label_density": 1.0, "weight_levels": 127,
    "scorer": {"@scorers": "spacy_mstparse.parser_scorer.v1"},
}


# The factory's type hints (a new setting gets its type here; setting_types.py
# says how). The learner is any @mst_learners object.
SETTING_TYPES = {
    "decoder": one_of(*sorted(DECODERS), "auto"),
    "order": one_of(1, 2, 3),
    "features": FeatureConfig,
    "label_buckets": TABLE_SIZE,
    "max_sentence_length": positive_int,
    "nonprojective_threshold": number_in(0, 1),
    "scorer": Optional[Callable],
    "probabilities": bool,
    "n_best": positive_int,
    "n_threads": positive_int,
    "quantize_weights": bool,
    "parallel_batch": positive_int,
    "replicas": positive_int,
    "constraints": one_of(*POLICIES),
    "keep_heads": at_least(0),
    "filter_arcs": bool,
    "final_to_root": bool,
    "arc_density": unit_share,
    "label_density": unit_share,
    "weight_levels": int_in(2, 127),
}


def default_setting(key: str):
    """A setting's default, from the factory's ``DEFAULT_CONFIG`` (the one source)."""
    value = DEFAULT_CONFIG[key]
    if isinstance(value, dict):
        return registry.resolve({key: value})[key]
    return value


def compaction(cfg) -> tuple:
    """GraphModel's ``compaction`` from a cfg: (arc_density, label_density, weight_levels)."""
    return tuple(cfg[key] for key in UNSAVED)


def constraint_policy(value=None) -> str:
    """The ``constraints`` setting (None: the default), checked: one of
    ``graph.constraints.POLICIES``."""
    return check_policy(default_setting("constraints") if value is None else value)
