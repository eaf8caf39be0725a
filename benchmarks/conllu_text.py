"""What a CoNLL-U treebank file says about its text, read line by line (no
spaCy): word and multiword-token counts, whether it has XPOS, and its raw
text (the ``# text`` comments) for parsing without gold tokenization.

The raw text keeps the treebank's documents: a ``# newdoc`` or ``# newpar``
comment starts a new line; a file with neither gets a line per
``sentences_per_line`` sentences. The sentences of a line are joined with
one space, so the parser has to find the sentence boundaries itself (as in
the CoNLL 2018 shared task's raw-text setting).
"""
from pathlib import Path
from typing import Dict, List, Union


def treebank_stats(path: Union[str, Path]) -> Dict[str, float]:
    """Sentences, syntactic words, multiword tokens (range lines such as
    ``3-4``), the words inside them, their share of all words, and the words
    with an XPOS other than ``_``."""
    sentences = words = mwts = words_in_mwts = with_xpos = 0
    in_sentence = False
    with open(path, encoding="utf-8") as file_:
        for line in file_:
            line = line.rstrip("\n")
            if not line.strip():
                in_sentence = False
                continue
            if line.startswith("#"):
                continue
            if not in_sentence:
                sentences += 1
                in_sentence = True
            cols = line.split("\t")
            id_ = cols[0]
            if "-" in id_:
                start, end = id_.split("-", 1)
                mwts += 1
                words_in_mwts += int(end) - int(start) + 1
            elif "." not in id_:
                words += 1
                if len(cols) > 4 and cols[4] != "_":
                    with_xpos += 1
    return {"sentences": sentences, "words": words, "multiword_tokens": mwts,
            "words_in_multiword_tokens": words_in_mwts,
            "multiword_share": words_in_mwts / words if words else 0.0,
            "words_with_xpos": with_xpos}


def raw_text_lines(path: Union[str, Path], sentences_per_line: int = 10) -> List[str]:
    """The file's ``# text`` sentences, one line per document or paragraph
    (see the module docstring). A sentence without ``# text`` stops with a
    ValueError: its text cannot be rebuilt exactly."""
    lines: List[List[str]] = []
    current: List[str] = []
    marked = False  # the file has newdoc / newpar comments
    text = None
    in_sentence = False

    def close_sentence() -> None:
        nonlocal text, in_sentence
        if in_sentence:
            if text is None:
                raise ValueError(f"{path}: a sentence without a '# text =' comment")
            current.append(text)
            if not marked and len(current) == sentences_per_line:
                lines.append(current[:])
                current.clear()
        text = None
        in_sentence = False

    with open(path, encoding="utf-8") as file_:
        for raw in file_:
            line = raw.rstrip("\n")
            if not line.strip():
                close_sentence()
            elif line.startswith("#"):
                if line.startswith(("# newdoc", "# newpar")):
                    marked = True
                    if current:
                        lines.append(current[:])
                        current.clear()
                elif line.startswith("# text =") or line.startswith("# text="):
                    text = line.split("=", 1)[1].strip()
            else:
                in_sentence = True
    close_sentence()
    if current:
        lines.append(current)
    return [" ".join(sentences) for sentences in lines if sentences]
