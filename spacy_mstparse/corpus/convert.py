"""Convert a CoNLL-U / CoNLL-X treebank to a spaCy ``.spacy`` (DocBin) file.

The whole input is read and validated before anything is written, and the
output is written atomically: a malformed input raises ``ConllFormatError``
(an input without sentences ``EmptyInputError``, an output path naming the
input ``OutputIsInputError``) and leaves no (partial) output file behind.
On a terminal a bar shows the reading and the packing of the docs.
"""
from pathlib import Path
from typing import Dict, Optional, Union

import spacy
from spacy.tokens import DocBin
from wasabi import msg

from ..progress import progress_bar
from .atomic import atomic_write_bytes, check_not_input
from .conll import read_conll_docs, sentence_bounds


def convert(
    input_path: Union[str, Path],
    output_path: Union[str, Path],
    format: str = "conllu",
    n_sents: int = 1,
    vocab_lang: str = "xx",
    progress: Optional[bool] = None,
) -> Dict[str, int]:
    """Read ``input_path`` (``format`` "conllu" or "conllx"), group
    ``n_sents`` sentences per Doc and write a DocBin (with user_data, so that
    comments, multiword tokens, empty nodes, DEPS and MISC survive) to
    ``output_path``. Prints and returns the counts of docs, sentences and
    words. ``progress``: bars (None: on a terminal)."""
    output_path = Path(output_path)
    check_not_input(output_path, input_path)
    vocab = spacy.blank(vocab_lang).vocab
    docs = read_conll_docs(input_path, vocab, format=format, n_sents=n_sents, progress=progress)
    n_sentences = 0
    n_words = 0
    doc_bin = DocBin(store_user_data=True)
    for doc in progress_bar(docs, desc="packing", unit=" docs", show=progress):
        n_sentences += len(sentence_bounds(doc))
        n_words += len(doc)
        doc_bin.add(doc)
    atomic_write_bytes(output_path, doc_bin.to_bytes())
    if output_path.suffix != ".spacy":
        msg.warn(f"{output_path}: spaCy's corpus readers only read files ending in .spacy")
    msg.good(
        f"Converted {input_path} ({format}): {len(docs)} docs, {n_sentences} sentences, "
        f"{n_words} words -> {output_path}"
    )
    return {"docs": len(docs), "sentences": n_sentences, "words": n_words}
