"""Evaluate a pipeline's dependency parser on a treebank (parsing files:
``parsing.py``; both share the pipeline loading and tag planning here).

``evaluate`` reads a gold CoNLL-U / CoNLL-X file (one sentence per Doc),
builds fresh input Docs on the gold words, whitespace and sentence starts
(``make_input_docs``; with ``gold_tags`` also the gold UPOS, XPOS, FEATS and
lemmas), runs every pipeline component in order and times the dependency
parser(s) alone: the components whose factory meta ``assigns`` contains
``token.dep``, each run with ``component.pipe(docs, batch_size=...)`` over all
docs once the earlier components have annotated them. Earlier components
(taggers, a senter...) run unchanged, so they may overwrite the gold
sentence starts. The metrics are ``scoring.attachment_scores`` over all words
(with and without punctuation) plus spaCy's own ``dep_uas`` / ``dep_las``
(``Scorer.score_deps`` as in ``nlp.evaluate``, punctuation left out on both
sides) for comparison, and the CoNLL 2018 shared task's UAS / LAS
(``conll18_scores``: every word, universal relations without subtypes;
Zeman et al. 2018). ``METRIC_CONVENTIONS`` says what each number counts.

Tags: ``plan_tags`` decides where the parser's tag inputs come from: the
file with ``gold_tags``; else the pipeline's components, and the file's
columns for the ones a parser reads but no earlier component predicts
(warned); missing in both is an ``EvaluationError`` naming the remedies.

Expected input problems raise ``EvaluationError`` (or ``ConllFormatError`` /
``EmptyInputError`` from the reader, ``OutputIsInputError`` for an output
path naming the input, ``PipelineLoadError`` when the pipeline cannot be
loaded); nothing is written until everything has been computed, and files
are written atomically.
"""
import copy
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

import spacy
from spacy.language import Language
from spacy.scorer import Scorer
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab
from tqdm import tqdm
from wasabi import msg

from . import __version__
from .corpus.atomic import atomic_write_text
from .corpus.byte_ranges import ByteRange
from .corpus.conll import (
    FORMATS,
    USER_DATA_KEY,
    EmptyInputError,
    read_conll,
    read_conll_docs,
    sentence_bounds,
)
from .scoring import PUNCT_LABELS, attachment_scores

# Registers the mst_parser and arcstandard_svm factories (and the learners and
# features), so that spacy.load finds them even when the package is not
# installed with its entry points.
from .components import mst_parser as _mst_parser  # noqa: F401
from .components import arcstandard_svm as _arcstandard_svm  # noqa: F401

PathLike = Union[str, Path]


class EvaluationError(ValueError):
    """An input the evaluation or parsing cannot work with."""


class PipelineLoadError(EvaluationError):
    """``spacy.load`` failed for the given model name or path."""


# ---------------------------------------------------------------------------
# Pipeline and input docs
# ---------------------------------------------------------------------------


def load_pipeline(model: PathLike) -> Language:
    """``spacy.load(model)``: a pipeline directory or an installed package."""
    try:
        return spacy.load(model)
    except (OSError, ValueError) as err:  # E050 (not found), bad config, ...
        raise PipelineLoadError(f"Could not load the pipeline '{model}': {err}") from err


def parser_components(nlp: Language, model: PathLike = "the pipeline") -> List[str]:
    """Names of the enabled components that assign ``token.dep``."""
    names = [
        name for name in nlp.pipe_names if "token.dep" in nlp.get_pipe_meta(name).assigns
    ]
    if not names:
        raise EvaluationError(
            f"{model} has no dependency parser component (no component assigns 'token.dep'; "
            f"pipeline: {', '.join(nlp.pipe_names) or 'empty'})"
        )
    return names


# The token attributes a parser may read, the CoNLL column each comes from,
# and the factory-meta ``assigns`` entry of a component that predicts it.
TAG_COLUMNS = {"POS": "UPOS", "TAG": "XPOS", "MORPH": "FEATS", "LEMMA": "LEMMA"}
_ASSIGNS = {"token.pos": "POS", "token.tag": "TAG", "token.morph": "MORPH", "token.lemma": "LEMMA"}
TAGGED_CONFIG_HINT = "a pipeline with a tagger (e.g. one trained with configs/mst_parser_tagged.cfg)"


def make_input_docs(
    gold_docs: Iterable[Doc],
    vocab: Vocab,
    gold_tags: bool = False,
    copy_attrs: Optional[Iterable[str]] = None,
) -> List[Doc]:
    """Fresh Docs with the gold words, whitespace and sentence starts (every
    token set to start / not start) and, with ``gold_tags``, the gold UPOS
    (``pos``), XPOS (``tag``), FEATS (``morph``) and lemmas; never heads or
    labels. ``copy_attrs`` (a subset of "POS", "TAG", "MORPH", "LEMMA")
    copies only those. ``vocab`` is the pipeline's (the gold docs may use
    another)."""
    attrs = set(TAG_COLUMNS) if gold_tags else set(copy_attrs or ())
    unknown = attrs - set(TAG_COLUMNS)
    if unknown:
        raise ValueError(f"unknown attributes to copy: {sorted(unknown)}")
    docs = []
    for gold in gold_docs:
        starts = [False] * len(gold)
        for start, _ in sentence_bounds(gold):
            starts[start] = True
        kwargs: Dict[str, Any] = {}
        if "POS" in attrs:
            kwargs["pos"] = [token.pos_ for token in gold]
        if "TAG" in attrs:
            kwargs["tags"] = [token.tag_ for token in gold]
        if "MORPH" in attrs:
            kwargs["morphs"] = [str(token.morph) for token in gold]
        if "LEMMA" in attrs:
            kwargs["lemmas"] = [token.lemma_ for token in gold]
        docs.append(
            Doc(
                vocab,
                words=[token.text for token in gold],
                spaces=[bool(token.whitespace_) for token in gold],
                sent_starts=starts if len(gold) else None,
                **kwargs,
            )
        )
    return docs


def parser_tag_inputs(nlp: Language, parsers: Sequence[str]) -> Dict[str, List[str]]:
    """Which token attributes ("POS", "TAG", "MORPH") the parser components'
    features read (their ``tag_attrs``), each with the names of the parsers
    reading it. Other parsers (e.g. spaCy's) are taken to read no tags."""
    from .components.base import DependencyPipe

    reads: Dict[str, List[str]] = {}
    for name in parsers:
        proc = nlp.get_pipe(name)
        attrs = list(proc.tag_attrs) if isinstance(proc, DependencyPipe) else []
        for attr in attrs:
            reads.setdefault(attr, [])
            if name not in reads[attr]:
                reads[attr].append(name)
    return reads


def unpredicted_tag_inputs(nlp: Language, parsers: Sequence[str]) -> Dict[str, List[str]]:
    """The attributes of ``parser_tag_inputs`` that no component before the
    parser reading them predicts (by its factory meta ``assigns``)."""
    missing: Dict[str, List[str]] = {}
    for attr, readers in parser_tag_inputs(nlp, parsers).items():
        for name in readers:
            before = nlp.pipe_names[: nlp.pipe_names.index(name)]
            predicted = {
                _ASSIGNS[a] for b in before for a in nlp.get_pipe_meta(b).assigns if a in _ASSIGNS
            }
            if attr not in predicted:
                missing.setdefault(attr, []).append(name)
    return missing


class TagPlan(NamedTuple):
    """Where the parser's tag inputs come from."""

    copy_attrs: Tuple[str, ...]  # copied from the input file into the input docs
    description: str  # for messages and the metrics' header


def _columns(attrs: Iterable[str]) -> str:
    return ", ".join(TAG_COLUMNS[a] for a in sorted(attrs, key=list(TAG_COLUMNS).index))


def plan_tags(
    nlp: Language,
    parsers: Sequence[str],
    gold_docs: Optional[Sequence[Doc]],
    gold_tags: bool,
    input_path: PathLike,
    model: PathLike = "the pipeline",
    first_doc: int = 1,
) -> TagPlan:
    """Decide which tag columns of the input file the parser gets.

    With ``gold_tags`` all of them. Otherwise the file's columns for the
    attributes a parser reads but no earlier component predicts (with a
    warning saying so). Raises ``EvaluationError`` when such an attribute is
    missing from the file (or the input is plain text, ``gold_docs=None``);
    ``first_doc``: the number in the file of ``gold_docs[0]`` (messages).
    The plan and the warning depend on the pipeline and ``gold_tags`` only,
    the error on the docs."""
    missing = unpredicted_tag_inputs(nlp, parsers)
    if missing:
        readers = sorted({name for names in missing.values() for name in names})
        need = (
            f"{', '.join(readers)} reads {_columns(missing)} "
            f"({', '.join('token.' + a.lower() for a in missing)}), which no component "
            f"before it in {model} predicts"
        )
        if gold_docs is None:
            raise EvaluationError(
                f"{need}, and plain text ({input_path}) has no tags. Parse a CoNLL-U / "
                f"CoNLL-X file with those columns (--format conllu|conllx, with --gold-tags), "
                f"or use {TAGGED_CONFIG_HINT}."
            )
        lacking = [
            attr for attr in missing
            if any(len(doc) and not doc.has_annotation(attr) for doc in gold_docs)
        ]
        if lacking:
            first = next(
                k for k, doc in enumerate(gold_docs, first_doc)
                if len(doc) and not all(doc.has_annotation(a) for a in lacking)
            )
            raise EvaluationError(
                f"{need}, and {input_path} has no {_columns(lacking)} (first in "
                f"sentence {first}). Give a file with those columns, or use "
                f"{TAGGED_CONFIG_HINT}."
            )
        if not gold_tags:
            warnings.warn(
                f"{need}: using the {_columns(missing)} column(s) of {input_path} as the "
                f"parser's input. Pass --gold-tags to use the file's tags explicitly (all "
                f"of UPOS, XPOS, FEATS, LEMMA), or use {TAGGED_CONFIG_HINT} to parse with "
                "predicted tags."
            )
            return TagPlan(
                tuple(sorted(missing, key=list(TAG_COLUMNS).index)),
                f"{_columns(missing)} from the file: no component predicts them",
            )
    if gold_tags:
        return TagPlan(tuple(TAG_COLUMNS), "gold tags from the file (--gold-tags)")
    if parser_tag_inputs(nlp, parsers):
        return TagPlan((), "tags predicted by the pipeline")
    return TagPlan((), "the parser reads no tags")


def _progress(docs: Sequence[Doc], desc: str, show: Optional[bool]):
    # show=None: a bar on terminals only (tqdm's own test), never on pipes.
    return tqdm(
        total=len(docs), desc=desc, unit="doc", file=sys.stderr, leave=False,
        disable=None if show is None else not show,
    )


def run_pipeline(
    nlp: Language,
    docs: List[Doc],
    batch_size: int = 64,
    timed: Sequence[str] = (),
    progress: Optional[bool] = None,
) -> Tuple[List[Doc], float]:
    """Run every enabled component in order, each over all ``docs``
    (``component.pipe(docs, batch_size=...)`` when it has one). Returns the
    annotated docs and the wall-clock seconds spent in the ``timed``
    components (their output consumed, nothing else)."""
    seconds = 0.0
    for name, proc in nlp.pipeline:
        with _progress(docs, name, progress) as bar:
            start = time.perf_counter()
            if hasattr(proc, "pipe"):
                stream = proc.pipe(docs, batch_size=batch_size)
            else:
                stream = (proc(doc) for doc in docs)
            out = []
            for doc in stream:
                out.append(doc)
                bar.update()
            if name in timed:
                seconds += time.perf_counter() - start
        if len(out) != len(docs):
            raise EvaluationError(
                f"component '{name}' returned {len(out)} docs for {len(docs)} inputs"
            )
        docs = out
    return docs, seconds


def read_gold(path: PathLike, vocab: Vocab, fmt: str,
              byte_range: Optional[ByteRange] = None) -> List[Doc]:
    """One Doc per sentence of a CoNLL file, or of a byte range of it (a part
    of ``byte_ranges.split_file``, which may hold no sentence)."""
    if fmt not in FORMATS:
        raise EvaluationError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if byte_range is not None:
        return list(read_conll(path, vocab, format=fmt, n_sents=1, byte_range=byte_range))
    # The whole file is read (and validated) before anything else happens;
    # a file without sentences raises EmptyInputError.
    return read_conll_docs(path, vocab, format=fmt, n_sents=1)


def _sentence_name(gold: Doc, k: int) -> str:
    data = gold.user_data.get(USER_DATA_KEY) or {}
    for sent in data.get("sents") or ():
        for comment in sent.get("comments") or ():
            if comment.startswith("# sent_id"):
                return f"sentence {k} ({comment.lstrip('# ').strip()})"
    return f"sentence {k}"


def check_same_words(gold: Doc, pred: Doc, k: int, nlp: Language) -> None:
    if len(gold) != len(pred) or any(g.text != p.text for g, p in zip(gold, pred)):
        raise EvaluationError(
            f"{_sentence_name(gold, k)}: the pipeline changed the tokenization "
            f"({len(gold)} gold words, {len(pred)} after the pipeline "
            f"{', '.join(nlp.pipe_names)}); words cannot be aligned for scoring"
        )


def _arcs(doc: Doc) -> Tuple[List[int], List[str]]:
    """Absolute head indices (-1 for a root) and labels of every token."""
    heads = [-1 if token.head.i == token.i else token.head.i for token in doc]
    return heads, [token.dep_ for token in doc]


def _spacy_dep_getter(token, attr):
    return token.vocab.strings.as_string(getattr(token, attr)).lower()


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
    gold_docs = read_gold(gold_path, nlp.vocab, fmt)
    for k, gold in enumerate(gold_docs, 1):
        if not gold.has_annotation("DEP"):
            raise EvaluationError(
                f"{gold_path}: {_sentence_name(gold, k)} has no gold tree "
                "(HEAD and DEPREL are all '_'); every sentence needs one to be scored"
            )
    plan = plan_tags(nlp, parsers, gold_docs, gold_tags, gold_path, model)
    docs = make_input_docs(gold_docs, nlp.vocab, copy_attrs=plan.copy_attrs)
    start = time.perf_counter()
    docs, parser_seconds = run_pipeline(nlp, docs, batch_size, timed=parsers, progress=progress)
    total_seconds = time.perf_counter() - start

    gold_heads: List[int] = []
    gold_labels: List[str] = []
    pred_heads: List[int] = []
    pred_labels: List[str] = []
    examples = []
    for k, (gold, pred) in enumerate(zip(gold_docs, docs), 1):
        check_same_words(gold, pred, k, nlp)
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
        examples, "dep", getter=_spacy_dep_getter, ignore_labels=PUNCT_LABELS
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
        "tags_from_file": [TAG_COLUMNS[a] for a in plan.copy_attrs],
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
