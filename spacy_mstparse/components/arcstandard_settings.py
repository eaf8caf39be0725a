"""The settings of an ``arcstandard_svm`` component: the factory's
``DEFAULT_CONFIG`` (the one source of every default, for the factory, the
component's constructor and the saved state), the settings a trained model
fixes, and the checks a setting passes."""
from ..tag_columns import SINGLE_TAG_COLUMNS
from ..transition.features import ALL_GROUPS, group_mask

DEFAULT_CONFIG = {
    "lam": 1e-5,
    "delta": 0.001,
    "feature_groups": list(ALL_GROUPS),
    "word_distance": "binned",
    "word_pair_limit": 100000,
    "rare_word_cutoff": 2,
    "average": True,
    "tag_column": SINGLE_TAG_COLUMNS[0],
    "n_buckets": 2**18,
    "nonprojective": "lift",
    "min_lifted_label_count": 5,
    "max_sentence_length": 250,
    "scorer": {"@scorers": "spacy_mstparse.parser_scorer.v1"},
}
SETTINGS = tuple(key for key in DEFAULT_CONFIG if key != "scorer")
# Settings the saved weights depend on: a saved model must agree with the
# config it is loaded into.
MODEL_SETTINGS = ("feature_groups", "word_distance", "word_pair_limit", "rare_word_cutoff",
                  "tag_column", "n_buckets")
NONPROJECTIVE = ("lift", "drop")


def checked_settings(name: str, *, lam, delta, feature_groups, word_distance, word_pair_limit,
                     rare_word_cutoff, average, tag_column, n_buckets, nonprojective,
                     min_lifted_label_count, max_sentence_length) -> dict:
    """The component's settings as saved, after checking them (a ValueError
    names the component and the setting)."""
    group_mask(feature_groups, word_distance)  # validates the names
    if tag_column not in SINGLE_TAG_COLUMNS:
        raise ValueError(f"[{name}] tag_column must be 'xpos' or 'upos', got {tag_column!r}")
    if nonprojective not in NONPROJECTIVE:
        raise ValueError(f"[{name}] nonprojective must be 'lift' or 'drop', got {nonprojective!r}")
    if not lam > 0:
        raise ValueError(f"[{name}] lam must be > 0, got {lam}")
    if delta < 0:
        raise ValueError(f"[{name}] delta must be >= 0, got {delta}")
    if n_buckets < 1 or n_buckets & (n_buckets - 1):
        raise ValueError(f"[{name}] n_buckets must be a power of two, got {n_buckets}")
    if max_sentence_length < 1:
        raise ValueError(f"[{name}] max_sentence_length must be >= 1")
    if word_pair_limit < 0 or rare_word_cutoff < 0:
        raise ValueError(f"[{name}] word_pair_limit and rare_word_cutoff must be >= 0")
    return {
        "lam": float(lam),
        "delta": float(delta),
        "feature_groups": list(feature_groups),
        "word_distance": word_distance,
        "word_pair_limit": int(word_pair_limit),
        "rare_word_cutoff": int(rare_word_cutoff),
        "average": bool(average),
        "tag_column": tag_column,
        "n_buckets": int(n_buckets),
        "nonprojective": nonprojective,
        "min_lifted_label_count": int(min_lifted_label_count),
        "max_sentence_length": int(max_sentence_length),
    }
