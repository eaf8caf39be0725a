"""The settings of an ``arcstandard_svm`` component: the factory's
``DEFAULT_CONFIG`` (the one source of every default, for the factory, the
component's constructor and the saved state), the settings a trained model
fixes, and the type of each setting (which spaCy's config validation checks,
and ``checked_settings`` too: ``setting_types``)."""
from typing import Callable, List, Optional

from ..setting_types import (
    TABLE_SIZE, check_settings, non_negative_int, non_negative_number, one_of, positive_int,
    positive_number,
)
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
# The factory's type hints (a new setting gets its type here).
SETTING_TYPES = {
    "lam": positive_number,
    "delta": non_negative_number,
    "feature_groups": List[one_of(*ALL_GROUPS)],
    "word_distance": one_of("value", "binned"),
    "word_pair_limit": non_negative_int,
    "rare_word_cutoff": non_negative_int,
    "average": bool,
    "tag_column": one_of(*SINGLE_TAG_COLUMNS),
    "n_buckets": TABLE_SIZE,
    "nonprojective": one_of(*NONPROJECTIVE),
    "min_lifted_label_count": non_negative_int,
    "max_sentence_length": positive_int,
    "scorer": Optional[Callable],
}


def checked_settings(name: str, *, lam, delta, feature_groups, word_distance, word_pair_limit,
                     rare_word_cutoff, average, tag_column, n_buckets, nonprojective,
                     min_lifted_label_count, max_sentence_length) -> dict:
    """The component's settings as saved, after checking them against
    ``SETTING_TYPES`` (a ValueError names the component and the setting)."""
    try:
        group_mask(feature_groups, word_distance)  # names the unknown feature group
    except ValueError as err:
        raise ValueError(f"[{name}] {err}") from None
    check_settings(name, dict(locals()), SETTING_TYPES)
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
