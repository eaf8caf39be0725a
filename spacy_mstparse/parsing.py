"""What the CLI's ``parse`` (and ``ray-parse``, step by step) do.

``parse_file`` parses a CoNLL file on its gold words and sentences (never
reusing its trees) or a plain text file (one document per non-empty line,
tokenized and annotated by the whole pipeline) and writes CoNLL-U with the
predicted HEAD / DEPREL (the enhanced graph left out: DEPS "_", no empty
nodes); every sentence must be one tree with one root, else nothing is
written. A document of plain text says which input line it is (``# newdoc
id = line12``, sentences ``line12-1``, ``line12-2``, ..., each with its
``# text``).

Expected input problems raise ``EvaluationError`` (``pipeline_input``);
nothing is written until every sentence has been rendered, atomically.
"""
import copy
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from spacy.language import Language
from spacy.tokens import Doc

from .corpus.atomic import atomic_write_text, check_not_input
from .corpus.byte_ranges import ByteRange, raw_lines
from .corpus.conll import (
    FORMAT_NAMES,
    NEWDOC_ID_KEY,
    USER_DATA_KEY,
    EmptyInputError,
    InvalidTreeError,
    docs_to_conllu,
    guess_format,
    sentence_bounds,
)
from .components.mst_parser import MSTParser
from .selective import mark_confident
from .pipeline_input import (EvaluationError, PathLike, load_pipeline, parser_components,
                             plan_tags, read_gold, run_on_gold, run_pipeline)

PARSE_FORMATS = ("auto", "conllu", "conllx", "text")
EXTENSION_FORMATS = {".conllu": "conllu", ".conll": "conllx", ".conllx": "conllx"}


def detect_format(path: PathLike) -> str:
    """"conllu" for .conllu, "conllx" for .conll / .conllx, else "text"."""
    return EXTENSION_FORMATS.get(Path(path).suffix.lower(), "text")


class TextDoc(NamedTuple):
    """A document of plain text and its id (``# newdoc id``; None: none),
    e.g. a line of a text file named by its number (``text_doc_id``)."""
    doc_id: Optional[str]
    text: str


def text_doc_id(line: int) -> str:
    """The ``# newdoc id`` of the document on input line ``line``."""
    return f"line{line}"


def read_text(path: PathLike, byte_range: Optional[ByteRange] = None,
              limit: Optional[int] = None) -> List[TextDoc]:
    """The non-empty lines of a UTF-8 text file (or of a byte range of it;
    the first ``limit`` ones), whitespace normalized, named by their line
    numbers."""
    lines = []
    for line_no, raw in raw_lines(path, byte_range):
        if limit is not None and len(lines) >= limit:
            break
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise EvaluationError(f"{path}:{line_no}: not valid UTF-8 ({err.reason})") from None
        if line_no == 1:
            line = line.lstrip("\ufeff")
        # Whitespace runs become one space: CoNLL-U cannot hold
        # whitespace tokens (tabs, several spaces).
        line = " ".join(line.split())
        if line:
            lines.append(TextDoc(text_doc_id(line_no), line))
    return lines


def _fits_stored_sentences(doc: Doc) -> bool:
    """Whether every predicted head lies inside the doc's stored sentence."""
    for start, end in sentence_bounds(doc):
        for token in doc[start:end]:
            if not start <= token.head.i < end:
                return False
    return True


def _check_not_conll(path: PathLike) -> None:
    """A file taken as plain text by its extension that looks like CoNLL."""
    guess = guess_format(path)
    if guess is not None:
        option = "--format conllu or --format conllx" if guess == "conll" else f"--format {guess}"
        raise EvaluationError(
            f"{path} looks like {FORMAT_NAMES[guess]} (ten tab-separated columns), but its "
            f"extension makes it plain text: pass {option} (or name it .conllu / .conll)"
        )


def parse_file(
    model: PathLike,
    input_path: PathLike,
    output_path: PathLike,
    fmt: str = "auto",
    gold_tags: bool = False,
    batch_size: int = 64,
    nlp: Optional[Language] = None,
    progress: Optional[bool] = None,
    probabilities: bool = False,
    min_prob: Optional[float] = None,
    joint: bool = False,
) -> Dict[str, Any]:
    """Parse ``input_path`` with the pipeline ``model`` and write CoNLL-U with
    the predicted trees to ``output_path``.

    CoNLL input (``fmt`` "conllu" / "conllx", or "auto" by extension) is parsed
    on its words and sentences; its comments, multiword tokens and MISC are
    kept; DEPS is written as "_" and empty nodes are dropped (the enhanced
    graph is not predicted). With ``gold_tags`` its UPOS / XPOS / FEATS /
    lemmas are the parser's input; otherwise the pipeline's components
    annotate them, and tag columns the parser reads but no component
    predicts are taken from the file (with a warning; see ``plan_tags``).
    Text input: one document per non-empty line, processed by the whole
    pipeline from its tokenizer on. Every written sentence is checked to be
    one tree with one root. With ``probabilities`` the mst_parser(s) write
    each word's HeadProb / DepProb into MISC; ``min_prob`` also marks the
    words whose head (``joint``: head x label) probability reaches it
    (``selective.mark_confident``: MISC Confident=Yes / No). Returns a summary.

    The steps (``check_parse_args``, ``read_parse_input``, ``parse_items``,
    ``render_parses``) are the ones ``ray-parse`` runs on chunks."""
    fmt = check_parse_args(input_path, output_path, fmt, gold_tags, batch_size)
    if min_prob is not None and not 0.0 <= min_prob <= 1.0:
        raise EvaluationError(f"min_prob must be in [0, 1], got {min_prob!r}")
    if nlp is None:
        nlp = load_pipeline(model)
    if probabilities or min_prob is not None:
        switch_on_probabilities(nlp, model)
    items, copy_attrs = read_parse_input(nlp, model, input_path, fmt, gold_tags, progress=progress)
    start = time.perf_counter()
    docs, n_dropped = parse_items(nlp, fmt, items, copy_attrs, batch_size, progress)
    warn_resegmented(input_path, n_dropped)
    seconds = time.perf_counter() - start
    confident = None if min_prob is None else sum(mark_confident(doc, min_prob, joint)
                                                   for doc in docs)
    atomic_write_text(output_path, render_parses(docs, input_path, output_path))
    summary = parse_summary(input_path, output_path, fmt, docs, seconds)
    if confident is not None:
        summary.update(confident=confident, confident_share=confident / max(summary["tokens"], 1))
    return summary


def switch_on_probabilities(nlp: Language, model: PathLike) -> None:
    """Turn on ``probabilities`` in the pipeline's mst_parser(s)."""
    names = [name for name, proc in nlp.pipeline if isinstance(proc, MSTParser)]
    if not names:
        raise EvaluationError(f"{model} has no mst_parser component: probabilities come from "
                              "an mst_parser")
    for name in names:
        nlp.get_pipe(name).cfg["probabilities"] = True


def check_parse_args(input_path: PathLike, output_path: PathLike, fmt: str, gold_tags: bool,
                     batch_size: int) -> str:
    """The checks made before the pipeline loads; returns the resolved format."""
    if batch_size < 1:
        raise EvaluationError(f"batch_size must be >= 1, got {batch_size}")
    check_not_input(output_path, input_path)
    return input_format(input_path, fmt, gold_tags)


def input_format(input_path: PathLike, fmt: str, gold_tags: bool) -> str:
    """The format of an input file ("auto": by its extension, plain text
    unless it looks like CoNLL); gold tags need a CoNLL input."""
    if fmt not in PARSE_FORMATS:
        raise EvaluationError(f"unknown format {fmt!r}: expected one of {', '.join(PARSE_FORMATS)}")
    if fmt == "auto":
        fmt = detect_format(input_path)
        if fmt == "text":
            _check_not_conll(input_path)
    if fmt == "text" and gold_tags:
        raise EvaluationError(
            f"{input_path}: gold tags need a CoNLL-U / CoNLL-X input (plain text has no tags)"
        )
    return fmt


def read_parse_input(
    nlp: Language, model: PathLike, input_path: PathLike, fmt: str, gold_tags: bool,
    byte_range: Optional[ByteRange] = None, first_doc: int = 1,
    progress: Optional[bool] = False,
) -> Tuple[List[Any], Tuple[str, ...]]:
    """The input's items (text lines, or gold Docs for CoNLL) and the tag
    attributes copied from the file (``plan_tags``, which warns);
    ``progress``: a bar while a CoNLL file is read (None: on a terminal).

    ``byte_range``: only that part of the file (``byte_ranges.split_file``),
    whose first item is number ``first_doc`` of the file; a part without
    items gives none (an empty file is an error only as a whole)."""
    parsers = parser_components(nlp, model)
    if fmt == "text":
        lines = read_text(input_path, byte_range)
        if not lines and byte_range is None:
            raise EmptyInputError(input_path, "text")
        plan_tags(nlp, parsers, None, False, input_path, model)
        return lines, ()
    gold_docs = read_gold(input_path, nlp.vocab, fmt, byte_range, progress=progress)
    plan = plan_tags(nlp, parsers, gold_docs, gold_tags, input_path, model, first_doc)
    return gold_docs, tuple(plan.copy_attrs)


def parse_items(
    nlp: Language,
    fmt: str,
    items: Sequence[Any],
    copy_attrs: Sequence[str] = (),
    batch_size: int = 64,
    progress: Optional[bool] = None,
    first_doc: int = 1,
) -> Tuple[List[Doc], int]:
    """Run the pipeline on text lines or gold Docs (``read_parse_input``);
    returns the parsed Docs, with the input's comments, multiword tokens and
    MISC where the sentences still match, and how many did not; a text
    given as a ``TextDoc`` with an id gives a Doc with that document id.
    ``first_doc``: the number of the first item in the file (messages)."""
    if fmt == "text":
        docs = [nlp.make_doc(item.text if isinstance(item, TextDoc) else item) for item in items]
        for doc, item in zip(docs, items):
            if isinstance(item, TextDoc) and item.doc_id is not None:
                doc.user_data[NEWDOC_ID_KEY] = item.doc_id
        docs, _ = run_pipeline(nlp, docs, batch_size, progress=progress)
        return docs, 0
    docs, _, _ = run_on_gold(nlp, items, copy_attrs, batch_size, progress=progress,
                             first_doc=first_doc)
    n_dropped = 0
    for gold, doc in zip(items, docs):
        data = gold.user_data.get(USER_DATA_KEY)
        if data is not None:
            # Comments, multiword tokens, MISC of the input, unless the
            # pipeline's sentences no longer match them.
            doc.user_data[USER_DATA_KEY] = copy.deepcopy(data)
            if not _fits_stored_sentences(doc):
                del doc.user_data[USER_DATA_KEY]
                n_dropped += 1
    return docs, n_dropped


def warn_resegmented(input_path: PathLike, n_dropped: int) -> None:
    if n_dropped:
        warnings.warn(
            f"{n_dropped} sentence(s) of {input_path} were re-segmented by the pipeline: "
            "their comments and multiword tokens are not written"
        )


def render_parses(
    docs: Sequence[Doc], input_path: PathLike, output_path: PathLike, first_sentence: int = 1,
    sent_id_prefix: str = "",
) -> str:
    """The CoNLL-U text of parsed Docs (basic trees only), each sentence
    checked to be one tree (``EvaluationError`` otherwise)."""
    try:
        return docs_to_conllu(docs, enhanced_deps=False, first_number=first_sentence,
                              sent_id_prefix=sent_id_prefix)
    except InvalidTreeError as err:
        raise EvaluationError(
            f"the pipeline returned an invalid tree for {input_path}, {err}; "
            f"nothing was written to {output_path}"
        ) from err


def parse_summary(input_path: PathLike, output_path: PathLike, fmt: str, docs: Sequence[Doc],
                  seconds: float) -> Dict[str, Any]:
    return {
        "input": str(input_path),
        "output": str(output_path),
        "format": fmt,
        "docs": len(docs),
        "sentences": sum(len(sentence_bounds(doc)) for doc in docs),
        "tokens": sum(len(doc) for doc in docs),
        "seconds": seconds,
    }
