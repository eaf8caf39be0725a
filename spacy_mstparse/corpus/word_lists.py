"""The words of raw text and of treebanks, one list per sentence, for
inducing word classes (the ``clusters`` command).

Raw text holds one sentence or document per line, split into words by a
spaCy tokenizer; blank lines are skipped. A treebank is CoNLL-U (its
syntactic words, FORM column: multiword-token range lines are not words)
read by ``conll.read_conll``, or a ``.spacy`` DocBin (one list per sentence
where the Docs have sentence starts, else per Doc).
"""
from pathlib import Path
from typing import Callable, Iterator, List, Union

from spacy.tokens import Doc
from spacy.vocab import Vocab

from ..progress import progress_bar
from .conll import read_conll
from .docbin import read_docbin

PathLike = Union[str, Path]


class TextInputError(ValueError):
    """A raw text file that is not UTF-8."""


def _lines(path: PathLike) -> Iterator[str]:
    with open(path, "rb") as file_:
        for number, raw in enumerate(file_, 1):
            try:
                line = raw.decode("utf-8").strip()
            except UnicodeDecodeError as err:
                raise TextInputError(f"{path}:{number}: not valid UTF-8 ({err.reason})") from None
            if number == 1:
                line = line.lstrip("\ufeff")
            if line:
                yield line


def raw_text_sentences(path: PathLike, tokenizer: Callable[[str], Doc],
                       show_progress: bool = False) -> Iterator[List[str]]:
    """The words of each non-blank line of a UTF-8 text file."""
    lines = progress_bar(_lines(path), desc=f"reading {Path(path).name}", unit=" lines",
                         show=None if show_progress else False)
    pipe = getattr(tokenizer, "pipe", None)
    docs = pipe(lines, batch_size=1000) if pipe is not None else map(tokenizer, lines)
    for doc in docs:
        words = [token.text for token in doc if not token.is_space]
        if words:
            yield words


def treebank_sentences(path: PathLike, vocab: Vocab,
                       show_progress: bool = False) -> Iterator[List[str]]:
    """The words of each sentence of a CoNLL-U file or a ``.spacy`` DocBin;
    ``show_progress``: a bar of the docs read on a terminal."""
    def bar(docs):
        return progress_bar(docs, desc=f"reading {Path(path).name}", unit=" docs",
                            show=None if show_progress else False)

    if Path(path).suffix == ".spacy":
        for doc in bar(read_docbin(path, vocab, user_data=False)):
            if doc.has_annotation("SENT_START"):
                for sent in doc.sents:
                    yield [token.text for token in sent]
            elif len(doc):
                yield [token.text for token in doc]
        return
    for doc in bar(read_conll(path, vocab, format="conllu", n_sents=1)):
        yield [token.text for token in doc]
