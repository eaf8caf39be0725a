"""Read CoNLL-U / CoNLL-X treebanks into spaCy Docs and write Docs back as
CoNLL-U.

Reading
    ``read_conllu``, ``read_conllx`` and the dispatcher ``read_conll`` yield one
    ``Doc`` per ``n_sents`` consecutive sentences. A Doc holds the syntactic
    words (multiword-token range lines are not words), their whitespace
    (``SpaceAfter=No`` in MISC, taken from the range line for a multiword
    token; a sentence's last word gets a space unless it says
    ``SpaceAfter=No``), LEMMA, UPOS (``token.pos_``), XPOS (``token.tag_``),
    FEATS (``token.morph``), HEAD, DEPREL (``token.dep_``, subtypes such as
    ``nsubj:pass`` kept; UD's ``root`` becomes spaCy's ``ROOT``, as
    ``spacy convert`` and spaCy's parser write it) and the sentence starts. In CoNLL-X, CPOSTAG goes to
    ``pos_`` and POSTAG to ``tag_``; PHEAD / PDEPREL are checked and dropped.

    "_" means "no value" everywhere except for a LEMMA "_" whose FORM is "_"
    (the underscore itself). A sentence whose HEAD and DEPREL columns are all
    "_" is read without a tree (e.g. parser input).

What the Doc cannot hold
    is kept in ``doc.user_data[USER_DATA_KEY]`` as plain JSON-like data (so
    that ``DocBin(store_user_data=True)`` keeps it; note that DocBin gives the
    lists back as tuples)::

        {"format": "conllu" | "conllx",
         "sents": [{"n_words": int,            # syntactic words
                    "comments": [str, ...],    # whole lines, with the "#"
                    "mwts": [{"start": int, "end": int, "cols": [10 str]}],
                    "empty": [{"after": int, "cols": [10 str]}],  # "3.1": after 3
                    "deps": [str, ...] | None,  # DEPS per word, None = all "_"
                    "misc": [str, ...] | None}]} # MISC per word, None = all "_"

    The sentence lengths also let the writer restore sentence boundaries that
    spaCy derives differently (a CoNLL-X sentence with several roots is split
    by spaCy at its roots; a Doc mixing sentences with and without trees).

Validation
    Problems raise ``ConllFormatError`` (a ``ValueError``) with the message
    ``"{path}:{line_no}: {problem}"``; the problem names the column. Tree-level
    problems (no root, several roots in CoNLL-U, a cycle) are reported at the
    sentence's first word line. In CoNLL-U, DEPS must be "_" or
    ``head:deprel`` pairs separated by "|" (heads: 0, word ids, empty node
    ids such as 8.1); values that look like CoNLL-X PHEAD / PDEPREL get a
    hint to use the CoNLL-X reader, and CoNLL-U ranges, empty nodes or DEPS
    met by the CoNLL-X reader a hint the other way. ``guess_format`` tells
    what a file looks like. An empty file, or one with blank lines only,
    yields no Docs from ``read_conll``; ``read_conll_docs`` raises
    ``EmptyInputError`` for it.

Writing
    ``docs_to_conllu`` / ``write_conllu`` write one sentence per stored
    sentence (when ``user_data`` matches the Doc) or per ``doc.sents``; a Doc
    with neither sentence starts nor dependencies is one sentence. Comments,
    multiword tokens, empty nodes, DEPS and MISC come back from ``user_data``;
    ``SpaceAfter=No`` always follows the Doc's whitespace. A Doc without
    stored comments gets ``# sent_id`` (numbered across the Docs) and
    ``# text`` per sentence; with ``user_data[NEWDOC_ID_KEY]`` (e.g. a line of
    plain text) it starts with ``# newdoc id = ID``, its sentences are
    ``ID-1``, ``ID-2``, ... and its last word has no ``SpaceAfter=No`` (a
    document ends there). FEATS are written in
    UD order (case-insensitive by feature name). Root words get DEPREL "root"
    (UD's name for spaCy's ``ROOT``);
    words without a dependency label get HEAD and DEPREL "_". Each sentence
    with dependencies is checked to be one tree with one root
    (``InvalidTreeError`` otherwise). ``enhanced_deps=False`` writes DEPS as
    "_" and drops the empty nodes, for a predicted basic tree.
    ``write_conllu`` renders everything before it writes, and writes atomically.

The reading half lives in ``conll_reader.py``, the writing half in
``conll_writer.py``; this module is their public face.
"""
from .conll_reader import (
    ConllFormatError,
    EmptyInputError,
    USER_DATA_KEY,
    NEWDOC_ID_KEY,
    FORMATS,
    CONLLU_COLUMNS,
    CONLLX_COLUMNS,
    UPOS_TAGS,
    FORMAT_NAMES,
    ROOT_LABEL,
    UD_ROOT_LABEL,
    doc_label,
    read_conll,
    read_conllu,
    read_conllx,
    read_conll_docs,
    guess_format,
)
from .conll_writer import (
    InvalidTreeError,
    sentence_bounds,
    stored_sentences,
    doc_to_conllu,
    docs_to_conllu,
    write_conllu,
)

__all__ = [
    "ConllFormatError",
    "EmptyInputError",
    "USER_DATA_KEY",
    "stored_sentences",
    "NEWDOC_ID_KEY",
    "FORMATS",
    "CONLLU_COLUMNS",
    "CONLLX_COLUMNS",
    "UPOS_TAGS",
    "FORMAT_NAMES",
    "ROOT_LABEL",
    "UD_ROOT_LABEL",
    "doc_label",
    "read_conll",
    "read_conllu",
    "read_conllx",
    "read_conll_docs",
    "guess_format",
    "InvalidTreeError",
    "sentence_bounds",
    "doc_to_conllu",
    "docs_to_conllu",
    "write_conllu",
]
