"""The ``clusters`` command's work: induce word classes from raw text and
treebanks and write them as a Brown paths file.

Reads every input (``corpus.word_lists``) before it clusters
(``wordclasses.induce_word_classes``: divisive exchange clustering, Kneser
& Ney 1993, Martin et al. 1998) and writes the paths file atomically, so an
input error leaves no output. The file (``bits<TAB>word<TAB>count``) is what
an ``mst_parser``'s ``initialize(clusters=PATH)`` reads.
"""
import time
from pathlib import Path
from typing import Dict, List, Sequence, Union

from wasabi import msg

from .corpus.atomic import check_not_input
from .corpus.word_lists import raw_text_sentences, treebank_sentences
from .wordclasses import DEPTH, MIN_COUNT, PASSES, ExchangeProgress, induce_word_classes

PathLike = Union[str, Path]


class ClustersInputError(ValueError):
    """Inputs the command cannot use: none at all, or an unknown language."""


def blank_pipeline(lang: str):
    import spacy

    try:
        return spacy.blank(lang)
    except ImportError as err:
        raise ClustersInputError(f"Unknown language '{lang}': {err}") from None


def read_sentences(raw_paths: Sequence[PathLike], treebank_paths: Sequence[PathLike],
                   lang: str, show_progress: bool = True) -> List[List[str]]:
    """The word lists of every treebank, then of every raw text file."""
    if not raw_paths and not treebank_paths:
        raise ClustersInputError("No input: give raw text files and/or --treebank files")
    nlp = blank_pipeline(lang)
    sentences: List[List[str]] = []
    for path in treebank_paths:
        sentences.extend(treebank_sentences(path, nlp.vocab, show_progress=show_progress))
    for path in raw_paths:
        sentences.extend(raw_text_sentences(path, nlp.tokenizer, show_progress=show_progress))
    return sentences


def induce_clusters(raw_paths: Sequence[PathLike], output_path: PathLike, lang: str = "xx",
                    treebank_paths: Sequence[PathLike] = (), depth: int = DEPTH,
                    min_count: int = MIN_COUNT, passes: int = PASSES, seed: int = 0,
                    lowercase: bool = False) -> Dict[str, float]:
    """Read the inputs, induce the classes, write the paths file; prints
    progress (per level) and returns the counts and seconds."""
    output_path = Path(output_path)
    check_not_input(output_path, *raw_paths, *treebank_paths)
    start = time.perf_counter()
    sentences = read_sentences(raw_paths, treebank_paths, lang)
    n_tokens = sum(len(s) for s in sentences)
    read_seconds = time.perf_counter() - start
    msg.info(f"Read {len(sentences)} sentences, {n_tokens} words in {read_seconds:.1f} s")
    level_start = [time.perf_counter()]
    last = {}

    def progress(report: ExchangeProgress) -> None:
        if report.pass_number == 0 and report.level > 1:
            _print_level(last, time.perf_counter() - level_start[0])
            level_start[0] = time.perf_counter()
        last.update(report._asdict())

    classes = induce_word_classes(sentences, depth=depth, min_count=min_count, passes=passes,
                                  seed=seed, lowercase=lowercase, progress=progress)
    _print_level(last, time.perf_counter() - level_start[0])
    classes.write_paths(output_path)
    seconds = time.perf_counter() - start
    msg.good(f"{len(classes)} words in {2 ** depth} classes ({depth} bits, words seen at least "
             f"{min_count} times) -> {output_path} in {seconds:.1f} s")
    return {"sentences": len(sentences), "tokens": n_tokens, "words": len(classes),
            "read_seconds": read_seconds, "seconds": seconds}


def _print_level(report: dict, seconds: float) -> None:
    msg.text(f"level {report['level']}: {report['n_classes']} classes, "
             f"{report['pass_number']} passes, log-likelihood {report['objective']:.0f} "
             f"({seconds:.2f} s)")
