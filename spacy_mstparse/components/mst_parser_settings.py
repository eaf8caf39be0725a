"""The settings of an ``mst_parser`` component: the factory's
``DEFAULT_CONFIG`` (the one source of every default, for the factory, the
component's constructor and the docs) and the settings a trained model fixes.
"""
from spacy import registry

from .. import registry as _registry  # noqa: F401  (@mst_learners, @mst_features)
from ..features.config import DEFAULT_N_BUCKETS
from ..graph.training import DEFAULT_PARALLEL_BATCH

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
    # arc pruning in prediction: the keep_heads best heads per word (0: none; graph/model.py)
    "keep_heads": 0,
    "scorer": {"@scorers": "spacy_mstparse.parser_scorer.v1"},
}


def default_setting(key: str):
    """A setting's default, from the factory's ``DEFAULT_CONFIG`` (the one source)."""
    value = DEFAULT_CONFIG[key]
    if isinstance(value, dict):
        return registry.resolve({key: value})[key]
    return value


def check_counts(cfg: dict) -> None:
    """ValueError naming the setting unless the count settings of ``cfg``
    are integers in range: max_sentence_length, n_best, n_threads and
    parallel_batch >= 1; keep_heads >= 0 (0: no arc pruning)."""
    for key, least in (("max_sentence_length", 1), ("n_best", 1), ("n_threads", 1),
                       ("parallel_batch", 1), ("keep_heads", 0)):
        value = cfg[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{key} must be an integer >= {least}, got {value!r}")
