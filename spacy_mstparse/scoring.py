"""Attachment scores: spaCy's convention (punctuation excluded) and CoNLL 2018's
(every word counted).

``score_parse`` is the component scorer: spaCy's own ``parser_score`` (labels
lower-cased, ``punct``/``p`` left out, sentence boundaries scored) plus
``dep_uas_with_punct`` / ``dep_las_with_punct`` that count every token.
``attachment_scores`` compares gold and predicted heads/labels of aligned
word sequences directly (used by the CLI and the benchmarks);
``conll18_scores`` as the CoNLL 2018 shared task counts them (Zeman et al.
2018).
"""
from typing import Dict, Iterable, Sequence

from spacy.pipeline.dep_parser import parser_score
from spacy.scorer import Scorer
from spacy.training import Example
from spacy.util import registry

PUNCT_LABELS = ("p", "punct")


def dep_getter(token, attr):
    return token.vocab.strings.as_string(getattr(token, attr)).lower()


def score_parse(examples: Iterable[Example], **kwargs) -> Dict[str, object]:
    examples = list(examples)
    results = parser_score(examples, **kwargs)
    kwargs.pop("getter", None)
    kwargs.pop("ignore_labels", None)
    with_punct = Scorer.score_deps(
        examples, "dep", getter=dep_getter, ignore_labels=(), **kwargs
    )
    results["dep_uas_with_punct"] = with_punct["dep_uas"]
    results["dep_las_with_punct"] = with_punct["dep_las"]
    return results


@registry.scorers("spacy_mstparse.parser_scorer.v1")
def make_parser_scorer():
    return score_parse


def attachment_scores(
    gold_heads: Sequence[int],
    gold_labels: Sequence[str],
    pred_heads: Sequence[int],
    pred_labels: Sequence[str],
) -> Dict[str, float]:
    """UAS/LAS over aligned words, without (``uas``, ``las``) and with
    (``uas_all``, ``las_all``) punctuation; a word is punctuation when its gold
    label is ``punct`` (UD) or ``p``. Labels compare case-insensitively, without
    subtypes being stripped. Scores are percentages; counts are included."""
    if not (len(gold_heads) == len(gold_labels) == len(pred_heads) == len(pred_labels)):
        raise ValueError("gold and predicted sequences must have the same length")
    counts = {"n": 0, "n_all": 0, "head": 0, "head_all": 0, "label": 0, "label_all": 0}
    for gh, gl, ph, pl in zip(gold_heads, gold_labels, pred_heads, pred_labels):
        head_ok = gh == ph
        label_ok = head_ok and gl.lower() == (pl or "").lower()
        counts["n_all"] += 1
        counts["head_all"] += head_ok
        counts["label_all"] += label_ok
        if gl.lower() not in PUNCT_LABELS:
            counts["n"] += 1
            counts["head"] += head_ok
            counts["label"] += label_ok

    def pct(a, b):
        return 100.0 * a / b if b else 0.0

    return {
        "uas": pct(counts["head"], counts["n"]),
        "las": pct(counts["label"], counts["n"]),
        "uas_all": pct(counts["head_all"], counts["n_all"]),
        "las_all": pct(counts["label_all"], counts["n_all"]),
        "words": counts["n_all"],
        "words_without_punct": counts["n"],
    }


def universal_relation(label: str) -> str:
    """The universal part of a UD relation: ``nmod:poss`` -> ``nmod``."""
    return label.split(":", 1)[0]


def conll18_scores(
    gold_heads: Sequence[int],
    gold_labels: Sequence[str],
    pred_heads: Sequence[int],
    pred_labels: Sequence[str],
) -> Dict[str, float]:
    """UAS and LAS as the CoNLL 2018 shared task defines them for gold
    tokenization (Zeman et al. 2018): every word counts, punctuation
    included, and a label is right when its universal relation is (subtypes
    are ignored). Heads are absolute indices (-1 for a root); a predicted
    root's label counts as ``root`` whatever the parser called it, as in the
    CoNLL-U it writes. Percentages."""
    gold = [universal_relation(label) for label in gold_labels]
    pred = [
        "root" if head == -1 else universal_relation(label or "")
        for head, label in zip(pred_heads, pred_labels)
    ]
    scores = attachment_scores(gold_heads, gold, pred_heads, pred)
    return {"uas": scores["uas_all"], "las": scores["las_all"]}
