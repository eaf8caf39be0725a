"""The state of an ``arcstandard_svm`` component besides its weights: the
settings (``DEFAULT_CONFIG``, the one source of its defaults), the inventory
learned by ``initialize()`` and the training progress, in the model format
(a ``cfg`` of three sections); and the checks a loaded state
passes before it replaces the component's (a damaged part raises
``ModelDataError`` naming the part).

State, in three dicts (saved together as the JSON part ``cfg``):

* ``cfg``: the settings, i.e. the factory's arguments (``arcstandard_settings``);
* ``inventory``: what ``initialize()`` learned from the training data besides
  the weights: labels, root label, transition classes, kept decorated labels,
  UNK valence, epoch size, tree counts, vocabulary size (the vocabulary,
  valence and word-pair arrays themselves are the part ``lexicon.npz``,
  readable as ``vocabulary``, ``valence`` and ``word_pairs``);
* ``progress``: training progress: the SVM step count ``svm_t``, epochs done,
  per-epoch training errors, ``converged``, and the current epoch's counts.

Saved parts (the same names on disk and in ``to_bytes``):
``cfg`` (JSON: format header, ``settings``, ``inventory``, ``progress``),
``weights.npz`` (the prediction weights, n_buckets x classes float32, as a
bitmap of the non-zero rows plus a bitmap of those rows' non-zero entries
and their values: on EWT 2/3 of the rows and 4% of the entries are non-zero,
10 MB instead of 118 MB) and ``lexicon.npz``. After loading,
the parser predicts with exactly the saved weights, kept as their non-zero
rows plus a row index (``transition.svm.compact_svm``); the trainable SVMs
are built from them (a warm start, S = w lambda t) only when ``update()``
is called.
"""
from typing import Callable, Dict, Tuple

import numpy

from ..transition.model import MOVES, empty_inventory
from ..transition.svm import compact_svm
from ..transition.training import fresh_progress
from . import serialization
from .arcstandard_settings import SETTINGS
from .serialization import ModelDataError

# The files that hold the weights and the lexicon.
WEIGHTS_PART, LEXICON_PART = "weights.npz", "lexicon.npz"


def section(saved: dict, key: str, where: str) -> dict:
    value = saved.get(key)
    if not isinstance(value, dict):
        raise ModelDataError(f"{where}: no {key!r} object")
    return value


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


def read_cfg(saved: dict, where: str) -> Tuple[dict, dict, dict]:
    """Settings, inventory and progress of a saved ``cfg`` (its format
    already checked by the component), each with its keys checked."""
    settings, inventory, progress = (
        section(saved, key, where) for key in ("settings", "inventory", "progress"))
    return checked_cfg(settings, inventory, progress, where)


def read_arrays(parts: Dict[str, bytes], shape: Tuple[int, int], settings: dict,
                progress: dict, where: Callable[[str], str]):
    """The prediction SVM (weights of ``shape``: buckets x classes) and the
    lexicon arrays ``{"vocab", "valence", "pairs"}`` of saved ``parts``;
    None for what the parts do not hold."""
    t = max(1, int(progress["svm_t"]))
    pred_svm = lexicon = None
    if WEIGHTS_PART in parts:
        rows, index = serialization.load_sparse_rows(  # frees the bytes early
            parts.pop(WEIGHTS_PART), where(WEIGHTS_PART), shape)
        pred_svm = compact_svm(rows, index, settings["lam"], t)
    if LEXICON_PART in parts:
        lexicon = serialization.load_arrays(
            parts[LEXICON_PART], where(LEXICON_PART), ("vocab", "valence", "pairs"))
    return pred_svm, lexicon
