"""What the CLI commands that run a pipeline on a file share (``evaluate``,
``parse``, ``show``, ``calibrate``): loading the pipeline, finding its
dependency parsers, reading a treebank, building the input Docs, deciding
where the parsers' tag inputs come from, and running the components.

Input Docs (``make_input_docs``) hold the gold words, whitespace and
sentence starts, with ``gold_tags`` also the gold UPOS, XPOS, FEATS and
lemmas, never heads or labels. The dependency parsers are the components
whose factory meta ``assigns`` contains ``token.dep``; ``run_pipeline`` runs
every component in order, each with ``component.pipe(docs, batch_size=...)``
over all docs, and times the parsers alone. Earlier components (taggers, a
senter...) run unchanged, so they may overwrite the gold sentence starts.

Tags: ``plan_tags`` decides where the parser's tag inputs come from: the
file with ``gold_tags``; else the pipeline's components, and the file's
columns for the ones a parser reads but no earlier component predicts
(warned); missing in both is an ``EvaluationError`` naming the remedies.
``PipelineLoadError`` says the pipeline cannot be loaded.
"""
import time
import warnings
from pathlib import Path
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.vocab import Vocab

from .corpus.byte_ranges import ByteRange
from .corpus.conll import FORMATS, USER_DATA_KEY, read_conll, read_conll_docs, sentence_bounds
from .progress import progress_bar
from .tag_columns import ASSIGNS, CONLL_COLUMNS

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
    attrs = set(CONLL_COLUMNS) if gold_tags else set(copy_attrs or ())
    unknown = attrs - set(CONLL_COLUMNS)
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
                ASSIGNS[a] for b in before for a in nlp.get_pipe_meta(b).assigns if a in ASSIGNS
            }
            if attr not in predicted:
                missing.setdefault(attr, []).append(name)
    return missing


class TagPlan(NamedTuple):
    """Where the parser's tag inputs come from."""

    copy_attrs: Tuple[str, ...]  # copied from the input file into the input docs
    description: str  # for messages and the metrics' header


def _columns(attrs: Iterable[str]) -> str:
    return ", ".join(CONLL_COLUMNS[a] for a in sorted(attrs, key=list(CONLL_COLUMNS).index))


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
                tuple(sorted(missing, key=list(CONLL_COLUMNS).index)),
                f"{_columns(missing)} from the file: no component predicts them",
            )
    if gold_tags:
        return TagPlan(tuple(CONLL_COLUMNS), "gold tags from the file (--gold-tags)")
    if parser_tag_inputs(nlp, parsers):
        return TagPlan((), "tags predicted by the pipeline")
    return TagPlan((), "the parser reads no tags")


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
        with progress_bar(total=len(docs), desc=name, unit=" docs", show=progress) as bar:
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
              byte_range: Optional[ByteRange] = None, progress: Optional[bool] = None) -> List[Doc]:
    """One Doc per sentence of a CoNLL file, or of a byte range of it (a part
    of ``byte_ranges.split_file``, which may hold no sentence); ``progress``:
    a bar while a whole file is read (None: on a terminal)."""
    if fmt not in FORMATS:
        raise EvaluationError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if byte_range is not None:
        return list(read_conll(path, vocab, format=fmt, n_sents=1, byte_range=byte_range))
    # The whole file is read (and validated) before anything else happens;
    # a file without sentences raises EmptyInputError.
    return read_conll_docs(path, vocab, format=fmt, n_sents=1, progress=progress)


def sentence_name(gold: Doc, k: int) -> str:
    data = gold.user_data.get(USER_DATA_KEY) or {}
    for sent in data.get("sents") or ():
        for comment in sent.get("comments") or ():
            if comment.startswith("# sent_id"):
                return f"sentence {k} ({comment.lstrip('# ').strip()})"
    return f"sentence {k}"


def check_same_words(gold: Doc, pred: Doc, k: int, nlp: Language) -> None:
    if len(gold) != len(pred) or any(g.text != p.text for g, p in zip(gold, pred)):
        raise EvaluationError(
            f"{sentence_name(gold, k)}: the pipeline changed the tokenization "
            f"({len(gold)} gold words, {len(pred)} after the pipeline "
            f"{', '.join(nlp.pipe_names)}); words cannot be aligned for scoring"
        )


def run_on_gold(
    nlp: Language,
    gold_docs: Sequence[Doc],
    copy_attrs: Iterable[str] = (),
    batch_size: int = 64,
    timed: Sequence[str] = (),
    progress: Optional[bool] = None,
    first_doc: int = 1,
) -> Tuple[List[Doc], float, float]:
    """Run the pipeline on input docs made from ``gold_docs``
    (``make_input_docs`` with ``copy_attrs``) and check that it kept every
    doc's words (``first_doc``: the number of the first in the file, for
    messages). Returns the parsed docs, the seconds spent in the ``timed``
    components and in the whole pipeline."""
    docs = make_input_docs(gold_docs, nlp.vocab, copy_attrs=copy_attrs)
    start = time.perf_counter()
    docs, seconds = run_pipeline(nlp, docs, batch_size, timed=timed, progress=progress)
    total = time.perf_counter() - start
    for k, (gold, doc) in enumerate(zip(gold_docs, docs), first_doc):
        check_same_words(gold, doc, k, nlp)
    return docs, seconds, total
