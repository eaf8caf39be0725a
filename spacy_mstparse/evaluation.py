"""What the CLI's ``evaluate`` does: parse a treebank's words with a
pipeline and score its dependency parser(s) against the gold trees; print
and write the metrics.

``evaluate`` reads a gold CoNLL-U / CoNLL-X file (one sentence per Doc),
builds the input Docs, plans the tags and runs the pipeline as
``pipeline_input`` does for every command, timing the parser(s) alone. The
metrics are ``scoring.attachment_scores`` over all words (with and without
punctuation) plus spaCy's own ``dep_uas`` / ``dep_las`` (``Scorer.score_deps``
as in ``nlp.evaluate``, punctuation left out on both sides) for comparison,
and the CoNLL 2018 shared task's UAS / LAS (``scoring.conll18_scores``:
every word, universal relations without subtypes; Zeman et al. 2018).
``METRIC_CONVENTIONS`` says what each number counts.

Expected input problems raise ``EvaluationError`` (or ``ConllFormatError`` /
``EmptyInputError`` from the reader, ``PipelineLoadError`` when the pipeline
cannot be loaded); the metrics file is written atomically.
"""
import json
from typing import Any, Dict, List, Optional, Tuple

import spacy
from spacy.language import Language
from spacy.scorer import Scorer
from spacy.tokens import Doc
from spacy.training import Example
from wasabi import msg

from . import __version__
from .corpus.atomic import atomic_write_text
from .corpus.conll import sentence_bounds
from .pipeline_input import (EvaluationError, PathLike, load_pipeline, parser_components,
                             plan_tags, read_gold, run_on_gold, sentence_name)
from .scoring import PUNCT_LABELS, attachment_scores, conll18_scores, dep_getter
from .tag_columns import CONLL_COLUMNS


def _arcs(doc: Doc) -> Tuple[List[int], List[str]]:
    """Absolute head indices (-1 for a root) and labels of every token."""
    heads = [-1 if token.head.i == token.i else token.head.i for token in doc]
    return heads, [token.dep_ for token in doc]


# ---------------------------------------------------------------------------
# evaluate
# ---------------------------------------------------------------------------


def evaluate(
    model: PathLike,
    gold_path: PathLike,
    gold_tags: bool = False,
    fmt: str = "conllu",
    batch_size: int = 64,
    nlp: Optional[Language] = None,
    progress: Optional[bool] = None,
) -> Dict[str, Any]:
    """Parse the gold file's words with the pipeline ``model`` and score the
    parser against the gold trees. ``nlp`` (an already loaded ``model``)
    skips loading. Returns the metrics (percentages on a 0-100 scale)."""
    if batch_size < 1:
        raise EvaluationError(f"batch_size must be >= 1, got {batch_size}")
    if nlp is None:
        nlp = load_pipeline(model)
    parsers = parser_components(nlp, model)
    gold_docs = read_gold(gold_path, nlp.vocab, fmt, progress=progress)
    for k, gold in enumerate(gold_docs, 1):
        if not gold.has_annotation("DEP"):
            raise EvaluationError(
                f"{gold_path}: {sentence_name(gold, k)} has no gold tree "
                "(HEAD and DEPREL are all '_'); every sentence needs one to be scored"
            )
    plan = plan_tags(nlp, parsers, gold_docs, gold_tags, gold_path, model)
    docs, parser_seconds, total_seconds = run_on_gold(
        nlp, gold_docs, plan.copy_attrs, batch_size, timed=parsers, progress=progress)

    gold_heads: List[int] = []
    gold_labels: List[str] = []
    pred_heads: List[int] = []
    pred_labels: List[str] = []
    examples = []
    for gold, pred in zip(gold_docs, docs):
        heads, labels = _arcs(gold)
        gold_heads.extend(heads)
        gold_labels.extend(labels)
        heads, labels = _arcs(pred)
        pred_heads.extend(heads)
        pred_labels.extend(labels)
        examples.append(Example(pred, gold))
    scores = attachment_scores(gold_heads, gold_labels, pred_heads, pred_labels)
    conll18 = conll18_scores(gold_heads, gold_labels, pred_heads, pred_labels)
    spacy_scores = Scorer.score_deps(
        examples, "dep", getter=dep_getter, ignore_labels=PUNCT_LABELS
    )

    def pct(value):
        return None if value is None else 100.0 * float(value)

    n_tokens = len(gold_heads)
    return {
        "uas": scores["uas"],
        "las": scores["las"],
        "uas_all": scores["uas_all"],
        "las_all": scores["las_all"],
        "conll18_uas": conll18["uas"],
        "conll18_las": conll18["las"],
        "spacy_dep_uas": pct(spacy_scores.get("dep_uas")),
        "spacy_dep_las": pct(spacy_scores.get("dep_las")),
        "sentences": sum(len(sentence_bounds(gold)) for gold in gold_docs),
        "tokens": n_tokens,
        "tokens_without_punct": scores["words_without_punct"],
        "tokens_per_second": n_tokens / parser_seconds if parser_seconds > 0 else None,
        "parser_seconds": parser_seconds,
        "pipeline_seconds": total_seconds,
        "parser_components": list(parsers),
        "pipeline": list(nlp.pipe_names),
        "gold_tags": bool(gold_tags),
        "tags": plan.description,
        "tags_from_file": [CONLL_COLUMNS[a] for a in plan.copy_attrs],
        "conventions": dict(METRIC_CONVENTIONS),
        "batch_size": batch_size,
        "model": str(model),
        "gold": str(gold_path),
        "format": fmt,
        "spacy_version": spacy.__version__,
        "spacy_mstparse_version": __version__,
    }


# What each score counts; printed as the row names and kept in the JSON.
METRIC_CONVENTIONS = {
    "uas": "UAS, punctuation (gold label punct/p) left out",
    "las": "LAS, punctuation left out, full labels (subtypes such as nmod:poss kept)",
    "uas_all": "UAS over every word",
    "las_all": "LAS over every word, full labels (subtypes kept)",
    "conll18_uas": "CoNLL 2018 shared task UAS: every word",
    "conll18_las": "CoNLL 2018 shared task LAS: every word, universal labels (nmod:poss counts as nmod)",
    "spacy_dep_uas": "spaCy's Scorer.score_deps UAS: punct left out on both sides",
    "spacy_dep_las": "spaCy's Scorer.score_deps LAS: punct left out on both sides, labels lower-cased",
}


def print_metrics(metrics: Dict[str, Any]) -> None:
    """Print the metrics as a wasabi table (stdout)."""

    def num(value, digits=2):
        return "-" if value is None else f"{value:.{digits}f}"

    rows = [
        ("uas: UAS (no punct)", num(metrics["uas"])),
        ("las: LAS (no punct, full labels)", num(metrics["las"])),
        ("uas_all: UAS (all words)", num(metrics["uas_all"])),
        ("las_all: LAS (all words, full labels)", num(metrics["las_all"])),
        ("conll18_uas: CoNLL 2018 UAS (all words)", num(metrics["conll18_uas"])),
        ("conll18_las: CoNLL 2018 LAS (all words, universal labels)", num(metrics["conll18_las"])),
        ("spacy_dep_uas: spaCy dep_uas (no punct)", num(metrics["spacy_dep_uas"])),
        ("spacy_dep_las: spaCy dep_las (no punct)", num(metrics["spacy_dep_las"])),
        ("Sentences", str(metrics["sentences"])),
        ("Tokens", str(metrics["tokens"])),
        ("Parser seconds", num(metrics["parser_seconds"], 3)),
        ("Parser tokens/s", num(metrics["tokens_per_second"], 0)),
    ]
    tags = metrics.get("tags") or ("gold tags" if metrics["gold_tags"] else "predicted tags")
    msg.divider(f"{metrics['model']} on {metrics['gold']} ({tags})")
    msg.table(rows, aligns=("l", "r"), max_col=80)


def write_metrics(metrics: Dict[str, Any], path: PathLike) -> None:
    """Write ``metrics`` as JSON, atomically (parent folders created)."""
    atomic_write_text(path, json.dumps(metrics, indent=2) + "\n")
