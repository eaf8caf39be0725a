"""Saving a pipeline without the strings of its training words.

spaCy saves the whole ``StringStore`` of the pipeline's vocab
(``vocab/strings.json``): after ``spacy train`` every word, lower-cased
form, shape, prefix and suffix of the training and dev corpora. A pipeline
whose components keep what they need themselves does not read them back:
``mst_parser`` hashes its features from the string ids (which are hashes of
the strings) and keeps its labels in its ``cfg``, the tokenizer its rules in
``tokenizer``, and every ``Doc`` adds the strings of its own words when it is
made (the prefix and lemma features read them from the Doc's vocab). On EWT
the file takes 436 KB; configs/mst_parser_sparse.cfg's whole pipeline,
trimmed, 1,156 KB.

``trimmed_for_saving(nlp)`` gives a shallow copy of ``nlp`` for
``to_disk``: everything is saved as ``nlp`` would save it except
``strings.json``, which holds only the labels of the pipeline's components
(loading adds the strings of a blank pipeline of the same language, as it
always does). ``nlp`` itself, its vocab and the Docs it made are untouched,
so training goes on with all its strings. Used by
``spacy_mstparse.calibrate_before_to_disk.v2`` with ``trim_strings = true``
(``[training.before_to_disk]``, which ``spacy train`` calls on the pipeline
before every save).
"""
import copy
from pathlib import Path
from typing import Iterable, Set

import srsly
from spacy import util
from spacy.language import Language


def kept_strings(nlp: Language) -> Set[str]:
    """The strings a trimmed ``strings.json`` holds: the labels of the
    pipeline's components (``pipe.labels``, where a component has them)."""
    kept: Set[str] = set()
    for _, pipe in nlp.components:
        try:
            labels = getattr(pipe, "labels", ())
        except (AttributeError, ValueError, NotImplementedError, KeyError):
            labels = ()
        kept.update(label for label in labels or () if isinstance(label, str))
    return kept


class _TrimmedStringsVocab:
    """Stands for a ``Vocab`` while its pipeline is saved: ``to_disk``
    writes vectors and lookups as the vocab does, and ``strings.json`` with
    ``kept`` only; everything else is read from the vocab."""

    def __init__(self, vocab, kept: Iterable[str]):
        self._vocab = vocab
        self._kept = sorted(set(kept))

    def __getattr__(self, name):
        return getattr(self._vocab, name)

    def to_disk(self, path, *, exclude=tuple()) -> None:
        path = Path(util.ensure_path(path))
        self._vocab.to_disk(path, exclude=[*exclude, "strings"])
        if "strings" not in exclude:
            srsly.write_json(path / "strings.json", self._kept)

    def to_bytes(self, **kwargs):
        raise NotImplementedError("a trimmed vocab is only for to_disk")


def trimmed_for_saving(nlp: Language) -> Language:
    """A shallow copy of ``nlp`` whose ``to_disk`` saves only
    ``kept_strings(nlp)`` in ``vocab/strings.json`` (see the module)."""
    saved = copy.copy(nlp)
    saved.vocab = _TrimmedStringsVocab(nlp.vocab, kept_strings(nlp))
    return saved
