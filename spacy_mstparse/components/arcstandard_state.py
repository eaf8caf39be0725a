"""The state of an ``arcstandard_svm`` component besides its weights: the
settings (``DEFAULT_CONFIG``, the one source of its defaults), the inventory
learned by ``initialize()`` and the training progress, in model formats 1
(one flat ``cfg``) and 2 (three sections); and the checks a loaded state
passes before it replaces the component's (a damaged part raises
``ModelDataError`` naming the part)."""
from typing import Callable, Dict, Tuple

import numpy

from ..transition.features import ALL_GROUPS
from . import serialization
from .serialization import ModelDataError

MOVES = {"S": 0, "L": 1, "R": 2}

DEFAULT_CONFIG = {
    "lam": 1e-5,
    "delta": 0.001,
    "feature_groups": list(ALL_GROUPS),
    "word_distance": "binned",
    "word_pair_limit": 100000,
    "rare_word_cutoff": 2,
    "average": True,
    "tag_column": "xpos",
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
# Parts of model format 1 (files ``<name>.npy`` on disk, keys ``<name>`` in bytes).
LEGACY_ARRAYS = ("weights", "vocab", "valence", "pairs")


def empty_inventory() -> dict:
    return {
        "labels": [],
        "root_label": None,
        "classes": [],
        "lifted_labels": None,
        "unk_valence": [0.0, 0.0],
        "epoch_configs": 0,
        "n_train_trees": 0,
        "n_nonprojective_trees": 0,
        "vocab_size": 0,
    }


def fresh_progress() -> dict:
    return {
        "svm_t": 0,
        "epochs_done": 0,
        "error_history": [],
        "converged": False,
        "epoch_progress": [0, 0],  # configurations and errors in the current epoch
    }


def empty_lexicon():
    return (numpy.zeros(0, dtype="uint64"), numpy.zeros((2, 0), dtype="float32"),
            numpy.zeros(0, dtype="uint64"))


def section(saved: dict, key: str, where: str) -> dict:
    value = saved.get(key)
    if not isinstance(value, dict):
        raise ModelDataError(f"{where}: no {key!r} object")
    return value


def split_format1_cfg(saved: dict) -> Tuple[dict, dict, dict]:
    """Model format 1 kept settings, inventory and progress in one dict (the
    SVM step count as ``svm_t``)."""
    settings = {key: saved[key] for key in SETTINGS if key in saved}
    inventory = {key: saved[key] for key in empty_inventory() if key in saved}
    progress = {key: saved[key] for key in fresh_progress() if key in saved}
    return settings, inventory, progress


def checked_cfg(settings: dict, inventory: dict, progress: dict, where: str):
    """The three sections with their keys present (a damaged cfg names the
    first missing key); unknown keys are dropped."""
    out = []
    for name, section, keys in (("settings", settings, SETTINGS),
                                ("inventory", inventory, tuple(empty_inventory())),
                                ("progress", progress, tuple(fresh_progress()))):
        missing = [key for key in keys if key not in section]
        if missing:
            raise ModelDataError(f"{where}: the {name} lack {', '.join(missing)}")
        out.append({key: section[key] for key in keys})
    settings, inventory, progress = out
    classes = inventory["classes"]
    n_labels = len(inventory["labels"])
    if (not isinstance(classes, list) or not classes or classes[0] != ["S", -1]
            or any(not isinstance(c, list) or len(c) != 2 or c[0] not in MOVES
                   or not -1 <= c[1] < n_labels for c in classes)):
        raise ModelDataError(f"{where}: the transition classes are damaged")
    return settings, inventory, progress


def legacy_array(parts: Dict[str, bytes], key: str, where: Callable[[str], str]):
    """An array of model format 1: ``<key>.npy`` on disk, ``<key>`` (already
    an array) in bytes; None if absent."""
    if f"{key}.npy" in parts:
        return serialization.load_npy(parts[f"{key}.npy"], where(f"{key}.npy"))
    if key in parts:
        value = parts[key]
        if isinstance(value, numpy.ndarray):
            return value
        raise ModelDataError(f"{where(key)}: expected an array, got {type(value).__name__}")
    return None


def checked_lexicon(lexicon: Dict[str, numpy.ndarray], inventory: dict, where: str):
    vocab = numpy.asarray(lexicon["vocab"])
    valence = numpy.asarray(lexicon["valence"])
    pairs = numpy.asarray(lexicon["pairs"])
    if vocab.ndim != 1 or vocab.dtype.kind not in "ui" or pairs.ndim != 1 or pairs.dtype.kind not in "ui":
        raise ModelDataError(f"{where}: the vocabulary and word pairs must be 1-d integer arrays")
    if vocab.shape[0] != inventory["vocab_size"]:
        raise ModelDataError(
            f"{where}: {vocab.shape[0]} vocabulary words, but the cfg says {inventory['vocab_size']}"
        )
    if valence.size != 2 * vocab.shape[0]:
        raise ModelDataError(f"{where}: valence of {valence.size} values for {vocab.shape[0]} words")
    vocab = numpy.ascontiguousarray(vocab, dtype="uint64")
    pairs = numpy.ascontiguousarray(pairs, dtype="uint64")
    if numpy.any(vocab[1:] <= vocab[:-1]) or numpy.any(pairs[1:] <= pairs[:-1]):
        raise ModelDataError(f"{where}: the vocabulary and word pairs must be sorted and unique")
    valence = numpy.ascontiguousarray(valence, dtype="float32").reshape(2, -1)
    return vocab, valence, pairs
