"""The gold trees ``arcstandard_svm`` learns from, and its targets per doc.

Arc-standard with one root builds trees with exactly one root word and no
crossing arcs, so a gold sentence is kept only with one root word, and a
non-projective one is lifted (pseudo-projective parsing, Nivre & Nilsson
2005, the HEAD label encoding, with spaCy's ``nonproj.projectivize``) or
dropped, as the component's ``nonprojective`` setting says. ``doc_targets``
turns a doc's kept sentences into the gold heads and transition classes the
SVM training (``transition.parser``) reads.

Heads here are 0..n with the root at 0 (``heads[0]`` unused), as
``DependencyPipe.gold_sentences`` gives them.
"""
from collections import Counter
from typing import Callable, Iterable, List, Optional, Set, Tuple

import numpy
from spacy.pipeline._parser_internals import nonproj

from ..decoders.trees import is_projective

GoldSentence = Tuple[int, numpy.ndarray, List[str]]   # (start, heads, deps)


def lift(heads: numpy.ndarray, deps: List[str]) -> Tuple[numpy.ndarray, List[str]]:
    """Pseudo-projective lifting (HEAD encoding) with spaCy's
    ``nonproj.projectivize``: heads 0..n with the root at 0 -> spaCy's
    convention (root word heads itself) and back."""
    n = len(heads) - 1
    root_word = int(numpy.flatnonzero(heads[1:] == 0)[0])
    spacy_heads = [root_word if heads[i] == 0 else int(heads[i]) - 1 for i in range(1, n + 1)]
    proj_heads, proj_deps = nonproj.projectivize(spacy_heads, deps[1:])
    out = numpy.full(n + 1, -1, dtype="int32")
    for i, h in enumerate(proj_heads):
        out[i + 1] = 0 if h == i else h + 1
    return out, [""] + list(proj_deps)


def learnable_trees(sentences: Iterable[GoldSentence], nonprojective: str,
                    lifted_labels: Optional[Set[str]], counts: Counter,
                    warn: Callable[[str, str], None], name: str):
    """The sentences arc-standard can learn from: exactly one root word,
    non-projective trees lifted (``nonprojective = "lift"``; decorated labels
    not in ``lifted_labels`` go back to the plain label, all are kept while
    it is None) or skipped (``"drop"``). ``counts["nonprojective"]`` counts
    the non-projective trees seen; ``warn(key, message)`` reports skips."""
    for start, heads, deps in sentences:
        if len(heads) > 1 and int(numpy.count_nonzero(heads[1:] == 0)) != 1:
            warn("roots", f"[{name}] skipping gold sentences with more than one root word "
                          "(arc-standard with one root builds trees with exactly one)")
            continue
        if not is_projective(heads):
            counts["nonprojective"] += 1
            if nonprojective == "drop":
                continue
            heads, deps = lift(heads, deps)
            if lifted_labels is not None:
                deps = [d if d in lifted_labels else d.split(nonproj.DELIMITER)[0] for d in deps]
        yield start, heads, deps


def doc_targets(gold: Iterable[GoldSentence], n_tokens: int, classes_of,
                warn: Callable[[str, str], None], name: str):
    """(gold heads, gold transition classes, sentence bounds) of one doc's
    learnable sentences, as arrays over the doc's tokens; ``classes_of``
    (``training_scan.GoldClasses``) gives a sentence's classes, None when a
    label was not seen at initialization (the sentence is skipped)."""
    gold_heads = numpy.zeros(n_tokens, dtype="int32")
    gold_classes = numpy.zeros(n_tokens, dtype="int32")
    bounds = []
    for start, heads, deps in gold:
        n = len(heads) - 1
        classes = classes_of(heads, deps)
        if classes is None:
            warn("labels", f"[{name}] skipping gold sentences with a label (or label and "
                           "direction) not seen at initialization")
            continue
        gold_heads[start : start + n] = heads[1:]
        gold_classes[start : start + n] = classes
        bounds.append((start, start + n))
    return gold_heads, gold_classes, numpy.array(bounds, dtype="int32").reshape(-1, 2)
