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
    ``nsubj:pass`` kept) and the sentence starts. In CoNLL-X, CPOSTAG goes to
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
    ``SpaceAfter=No`` always follows the Doc's whitespace. FEATS are written in
    UD order (case-insensitive by feature name). Root words get DEPREL "root";
    words without a dependency label get HEAD and DEPREL "_". Each sentence
    with dependencies is checked to be one tree with one root
    (``InvalidTreeError`` otherwise). ``enhanced_deps=False`` writes DEPS as
    "_" and drops the empty nodes, for a predicted basic tree.
    ``write_conllu`` renders everything before it writes, and writes atomically.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import numpy
from spacy.attrs import SENT_START
from spacy.parts_of_speech import IDS as _SPACY_POS_IDS
from spacy.tokens import Doc
from spacy.vocab import Vocab

from .atomic import atomic_write_text

__all__ = [
    "ConllFormatError",
    "EmptyInputError",
    "InvalidTreeError",
    "USER_DATA_KEY",
    "FORMATS",
    "CONLLU_COLUMNS",
    "CONLLX_COLUMNS",
    "UPOS_TAGS",
    "read_conll",
    "read_conllu",
    "read_conllx",
    "read_conll_docs",
    "guess_format",
    "sentence_bounds",
    "doc_to_conllu",
    "docs_to_conllu",
    "write_conllu",
]

USER_DATA_KEY = "spacy_mstparse.conll"
FORMATS = ("conllu", "conllx")
CONLLU_COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")
CONLLX_COLUMNS = ("ID", "FORM", "LEMMA", "CPOSTAG", "POSTAG", "FEATS", "HEAD", "DEPREL", "PHEAD", "PDEPREL")
# The coarse tags spaCy's Doc accepts for `pos`: the 17 UD UPOS tags, plus
# CONJ (UD v1) and SPACE (spaCy's own).
UPOS_TAGS = frozenset(tag for tag in _SPACY_POS_IDS if tag and tag != "EOL")

_INT = re.compile(r"[0-9]+")
_SIGNED_INT = re.compile(r"-?[0-9]+")
_RANGE = re.compile(r"([0-9]+)-([0-9]+)")
_DECIMAL = re.compile(r"([0-9]+)\.([0-9]+)")
_FEATURE = re.compile(r"([^\s=|,]+)=([^\s=|,]+(?:,[^\s=|,]+)*)")
_SPACE_AFTER_NO = "SpaceAfter=No"

PathLike = Union[str, Path]


class ConllFormatError(ValueError):
    """A malformed CoNLL-U / CoNLL-X file: ``"{path}:{line_no}: {problem}"``."""

    def __init__(self, path: PathLike, line_no: int, problem: str) -> None:
        self.path = str(path)
        self.line_no = line_no
        self.problem = problem
        super().__init__(f"{path}:{line_no}: {problem}")

    def __reduce__(self):
        return (type(self), (self.path, self.line_no, self.problem))


class EmptyInputError(ValueError):
    """A file with no sentence at all (empty, or only blank lines)."""

    def __init__(self, path: PathLike, what: str = "sentences") -> None:
        self.path = str(path)
        super().__init__(f"{path}: no {what} (the file is empty or holds only blank lines)")

    def __reduce__(self):
        return (type(self), (self.path,))


class InvalidTreeError(ValueError):
    """A Doc whose dependencies are not one tree with one root per sentence,
    found while writing CoNLL-U."""


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------


class _Sentence:
    """One validated sentence block."""

    __slots__ = (
        "first_line", "comments", "forms", "lemmas", "upos", "xpos", "feats",
        "heads", "deprels", "spaces", "deps", "misc", "mwts", "empty",
    )

    def __init__(self, first_line: int, comments: List[str]) -> None:
        self.first_line = first_line
        self.comments = comments
        self.forms: List[str] = []
        self.lemmas: List[str] = []
        self.upos: List[str] = []
        self.xpos: List[str] = []
        self.feats: List[str] = []
        self.heads: Optional[List[int]] = None  # 1-based, 0 = root
        self.deprels: List[str] = []
        self.spaces: List[bool] = []
        self.deps: Optional[List[str]] = None
        self.misc: Optional[List[str]] = None
        self.mwts: List[Dict[str, Any]] = []
        self.empty: List[Dict[str, Any]] = []

    def to_user_data(self) -> Dict[str, Any]:
        return {
            "n_words": len(self.forms),
            "comments": self.comments,
            "mwts": self.mwts,
            "empty": self.empty,
            "deps": self.deps,
            "misc": self.misc,
        }


def _check_feats(feats: str, error) -> None:
    names = set()
    for feature in feats.split("|"):
        match = _FEATURE.fullmatch(feature)
        if match is None:
            error(
                f"FEATS '{feats}': '{feature}' is not Name=Value[,Value...] "
                "(features are separated by '|', '_' means none)"
            )
        name = match.group(1)
        if name in names:
            error(f"FEATS '{feats}': feature '{name}' occurs twice")
        names.add(name)


_CONLLX_HINT = " (this looks like CoNLL-X, PHEAD/PDEPREL in columns 9/10: use --format conllx)"
_CONLLU_HINT = " (this looks like CoNLL-U: use --format conllu)"
_DEPS_HEAD = re.compile(r"0|[1-9][0-9]*(?:\.[1-9][0-9]*)?")


def _looks_like_deps(value: str) -> bool:
    """Whether a column value has the shape of a CoNLL-U DEPS value."""
    return all(
        ":" in pair and _DEPS_HEAD.fullmatch(pair.split(":", 1)[0]) is not None
        for pair in value.split("|")
    )


def _check_deps(deps: str, col10: str, error) -> None:
    """DEPS is '_' or ``head:deprel`` pairs separated by '|', a head being a
    word id, 0 or an empty node id (8.1). CoNLL-X PHEAD / PDEPREL in columns
    9 / 10 (an integer and a label) get a hint."""
    for pair in deps.split("|"):
        head, sep, deprel = pair.partition(":")
        if sep and _DEPS_HEAD.fullmatch(head) and deprel and not any(c.isspace() for c in deprel):
            continue
        hint = ""
        if _SIGNED_INT.fullmatch(deps) and "=" not in col10:
            # An integer and a plain label (or '_'): PHEAD and PDEPREL.
            hint = _CONLLX_HINT
        error(
            f"DEPS '{deps}': '{pair}' is not head:deprel (enhanced dependencies are "
            f"'_' or head:deprel pairs separated by '|', heads being ids such as 3, 0 or 8.1){hint}"
        )


def _has_space_after_no(misc: str) -> bool:
    return _SPACE_AFTER_NO in misc and _SPACE_AFTER_NO in misc.split("|")


def _parse_sentence(
    path: PathLike, fmt: str, first_line: int, comments: List[str],
    rows: List[Tuple[int, List[str]]],
) -> _Sentence:
    """Validate one block of word lines and turn it into a ``_Sentence``."""
    conllu = fmt == "conllu"
    columns = CONLLU_COLUMNS if conllu else CONLLX_COLUMNS
    sent = _Sentence(first_line, comments)
    heads: List[Optional[int]] = []
    word_lines: List[int] = []
    deps: List[str] = []
    misc: List[str] = []
    no_space: List[bool] = []
    mwt_lines: List[int] = []
    n = 0  # syntactic words so far
    mwt_end = 0  # last word id covered by a multiword token so far
    last_empty = (-1, 0)  # (word id, decimal) of the previous empty node

    for line_no, cols in rows:

        def error(problem: str, _line_no: int = line_no) -> None:
            raise ConllFormatError(path, _line_no, problem)

        if len(cols) != 10:
            error(
                f"expected 10 tab-separated columns ({' '.join(columns)}), "
                f"found {len(cols)}"
            )
        for name, value in zip(columns, cols):
            if not value:
                error(f"{name} is empty (use '_' for no value)")
        id_ = cols[0]
        if _INT.fullmatch(id_):
            word_id = int(id_)
            if word_id != n + 1:
                error(f"ID {id_} out of sequence: expected {n + 1}")
            n = word_id
        elif not conllu:
            hint = _CONLLU_HINT if (_RANGE.fullmatch(id_) or _DECIMAL.fullmatch(id_)) else ""
            error(f"ID '{id_}' is not an integer{hint}")
        else:
            match = _RANGE.fullmatch(id_)
            if match is not None:
                start, end = int(match.group(1)), int(match.group(2))
                if end <= start:
                    error(f"ID range '{id_}' must end after it starts")
                if start != n + 1 or start <= mwt_end:
                    error(f"ID range '{id_}' out of sequence: expected a range starting at {n + 1}")
                mwt_end = end
                sent.mwts.append({"start": start, "end": end, "cols": cols})
                mwt_lines.append(line_no)
                continue
            match = _DECIMAL.fullmatch(id_)
            if match is None:
                error(f"ID '{id_}' is not an integer, a range (3-4) or a decimal (3.1)")
            major, minor = int(match.group(1)), int(match.group(2))
            expected = last_empty[1] + 1 if last_empty[0] == n else 1
            if major != n or minor != expected:
                error(f"ID {id_} out of sequence: expected {n}.{expected}")
            last_empty = (major, minor)
            sent.empty.append({"after": major, "cols": cols})
            continue

        # A syntactic word.
        form, lemma, upos, xpos, feats, head, deprel, col9, col10 = cols[1:]
        if upos != "_" and upos not in UPOS_TAGS:
            error(
                f"{columns[3]} '{upos}' is not a Universal Dependencies POS tag "
                f"(spaCy's Doc only accepts: {', '.join(sorted(UPOS_TAGS))})"
            )
        if feats != "_":
            _check_feats(feats, error)
        if head == "_":
            if deprel != "_":
                error(f"DEPREL '{deprel}' given but HEAD is '_'")
            heads.append(None)
        else:
            if not _SIGNED_INT.fullmatch(head):
                error(f"HEAD '{head}' is not an integer (or '_')")
            if deprel == "_":
                error("DEPREL is '_' but HEAD is given (every attached word needs a label)")
            head_id = int(head)
            if head_id == n:
                error(f"HEAD {head} is the word itself (a cycle)")
            heads.append(head_id)
        if conllu:
            if col9 != "_":
                _check_deps(col9, col10, error)
        else:
            if col9 != "_" and not _SIGNED_INT.fullmatch(col9):
                hint = _CONLLU_HINT if _looks_like_deps(col9) else ""
                error(f"PHEAD '{col9}' is not an integer (or '_'){hint}")
            if col9 == "_" and col10 != "_":
                hint = _CONLLU_HINT if "=" in col10 else ""
                error(f"PDEPREL '{col10}' given but PHEAD is '_'{hint}")
        word_lines.append(line_no)
        sent.forms.append(form)
        sent.lemmas.append("" if lemma == "_" and form != "_" else lemma)
        sent.upos.append("" if upos == "_" else upos)
        sent.xpos.append("" if xpos == "_" else xpos)
        sent.feats.append("" if feats == "_" else feats)
        sent.deprels.append(deprel)
        if conllu:
            deps.append(col9)
            misc.append(col10)
            no_space.append(_has_space_after_no(col10))

    if n == 0:
        raise ConllFormatError(
            path, first_line, "ID: the sentence has no word lines (only multiword tokens or empty nodes)"
        )
    for mwt, line_no in zip(sent.mwts, mwt_lines):
        if mwt["end"] > n:
            raise ConllFormatError(
                path, line_no, f"ID range '{mwt['cols'][0]}' goes beyond the last word ({n})"
            )

    # Whitespace.
    if conllu:
        spaces = [not flag for flag in no_space]
        for mwt in sent.mwts:
            for word_id in range(mwt["start"], mwt["end"]):
                spaces[word_id - 1] = False
            spaces[mwt["end"] - 1] = not _has_space_after_no(mwt["cols"][9])
        sent.spaces = spaces
        if any(value != "_" for value in deps):
            sent.deps = deps
        if any(value != "_" for value in misc):
            sent.misc = misc
    else:
        sent.spaces = [True] * n

    # The tree.
    if all(head is None for head in heads):
        return sent
    for head, line_no in zip(heads, word_lines):
        if head is None:
            raise ConllFormatError(
                path, line_no, "HEAD is '_' but other words of this sentence have a HEAD"
            )
        if head < 0 or head > n:
            raise ConllFormatError(
                path, line_no, f"HEAD {head} out of range: the sentence has {n} words (0 = root)"
            )
    roots = [i + 1 for i, head in enumerate(heads) if head == 0]
    if not roots:
        raise ConllFormatError(path, first_line, "HEAD: no word is attached to the root (0)")
    if conllu and len(roots) > 1:
        raise ConllFormatError(
            path, first_line,
            f"HEAD: {len(roots)} words are attached to the root (0): "
            f"{', '.join(map(str, roots))}; CoNLL-U allows exactly one",
        )
    cycle = _find_cycle(heads)
    if cycle:
        chain = " -> ".join(map(str, cycle + [cycle[0]]))
        raise ConllFormatError(path, first_line, f"HEAD: the words {chain} form a cycle")
    sent.heads = heads  # type: ignore[assignment]
    return sent


def _find_cycle(heads: List[int]) -> List[int]:
    """Return the word ids (1-based) of a cycle in ``heads``, or ``[]``."""
    n = len(heads)
    state = [0] * (n + 1)  # 0 new, 1 on the current path, 2 done
    state[0] = 2
    for start in range(1, n + 1):
        path = []
        node = start
        while state[node] == 0:
            state[node] = 1
            path.append(node)
            node = heads[node - 1]
        if state[node] == 1:
            return path[path.index(node):]
        for visited in path:
            state[visited] = 2
    return []


def _iter_sentences(path: PathLike, fmt: str) -> Iterator[_Sentence]:
    comments: List[str] = []
    rows: List[Tuple[int, List[str]]] = []
    first_line = 0
    comment_line = 0
    line_no = 0
    with open(path, "rb") as file_:
        for line_no, raw in enumerate(file_, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise ConllFormatError(path, line_no, f"not valid UTF-8 ({err.reason})") from None
            if line_no == 1 and line.startswith("\ufeff"):
                line = line[1:]
            line = line.rstrip("\r\n")
            if not line.strip():
                if rows:
                    yield _parse_sentence(path, fmt, first_line, comments, rows)
                    comments, rows = [], []
                elif comments:
                    raise ConllFormatError(path, comment_line, "comment lines not followed by a sentence")
                continue
            if line.startswith("#"):
                if rows:
                    raise ConllFormatError(
                        path, line_no, "comment line inside a sentence (comments must come before the word lines)"
                    )
                if not comments:
                    comment_line = line_no
                comments.append(line)
                continue
            if not rows:
                first_line = line_no
            rows.append((line_no, line.split("\t")))
    if rows:
        yield _parse_sentence(path, fmt, first_line, comments, rows)
    elif comments:
        raise ConllFormatError(path, comment_line, "comment lines not followed by a sentence")


def _make_doc(vocab: Vocab, sents: List[_Sentence], fmt: str) -> Doc:
    words: List[str] = []
    spaces: List[bool] = []
    lemmas: List[str] = []
    pos: List[str] = []
    tags: List[str] = []
    morphs: List[str] = []
    deps: List[Optional[str]] = []
    heads: List[Optional[int]] = []
    starts: List[int] = []
    has_tree = any(sent.heads is not None for sent in sents)
    for sent in sents:
        offset = len(words)
        n = len(sent.forms)
        words.extend(sent.forms)
        spaces.extend(sent.spaces)
        lemmas.extend(sent.lemmas)
        pos.extend(sent.upos)
        tags.extend(sent.xpos)
        morphs.extend(sent.feats)
        starts.append(1)
        starts.extend([-1] * (n - 1))
        if not has_tree:
            continue
        if sent.heads is None:
            heads.extend([None] * n)
            deps.extend([None] * n)
        else:
            heads.extend(offset + head - 1 if head else offset + i for i, head in enumerate(sent.heads))
            deps.extend(sent.deprels)
    user_data = {USER_DATA_KEY: {"format": fmt, "sents": [sent.to_user_data() for sent in sents]}}
    doc = Doc(
        vocab, words=words, spaces=spaces, lemmas=lemmas, pos=pos, tags=tags,
        morphs=morphs, heads=heads if has_tree else None, deps=deps if has_tree else None,
        sent_starts=starts, user_data=user_data,
    )
    if has_tree:
        # spaCy derives sentence starts from the tree; put the file's back
        # where they differ (several roots, sentences without a tree).
        wanted = numpy.array(starts, dtype=numpy.int64)
        current = doc.to_array([SENT_START]).astype(numpy.int64)
        if not numpy.array_equal(current[1:], wanted[1:]):
            doc.from_array([SENT_START], wanted.astype(numpy.uint64).reshape(-1, 1))
    return doc


def _as_vocab(vocab: Any) -> Vocab:
    if isinstance(vocab, Vocab):
        return vocab
    if isinstance(getattr(vocab, "vocab", None), Vocab):  # a Language
        return vocab.vocab
    raise TypeError(f"expected a spaCy Vocab (or Language), got {type(vocab).__name__}")


def read_conll(
    path: PathLike, vocab: Vocab, format: str = "conllu", n_sents: int = 1
) -> Iterator[Doc]:
    """Yield one Doc per ``n_sents`` consecutive sentences of a CoNLL-U
    (``format="conllu"``) or CoNLL-X (``format="conllx"``) file.

    Raises ``ConllFormatError`` while iterating when the file is malformed;
    consume the whole iterator before writing anything derived from it.
    """
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}: expected one of {', '.join(FORMATS)}")
    if isinstance(n_sents, bool) or not isinstance(n_sents, int) or n_sents < 1:
        raise ValueError(f"n_sents must be an integer >= 1, got {n_sents!r}")
    vocab = _as_vocab(vocab)
    if not Path(path).is_file():
        raise FileNotFoundError(f"no such file: {path}")
    return _read(path, vocab, format, n_sents)


def _read(path: PathLike, vocab: Vocab, fmt: str, n_sents: int) -> Iterator[Doc]:
    batch: List[_Sentence] = []
    for sent in _iter_sentences(path, fmt):
        batch.append(sent)
        if len(batch) == n_sents:
            yield _make_doc(vocab, batch, fmt)
            batch = []
    if batch:
        yield _make_doc(vocab, batch, fmt)


def read_conll_docs(
    path: PathLike, vocab: Vocab, format: str = "conllu", n_sents: int = 1
) -> List[Doc]:
    """All Docs of ``read_conll``, validated; a file without any sentence
    raises ``EmptyInputError``."""
    docs = list(read_conll(path, vocab, format=format, n_sents=n_sents))
    if not docs:
        raise EmptyInputError(path)
    return docs


def guess_format(path: PathLike, max_lines: int = 200) -> Optional[str]:
    """What the first word lines of a file look like: "conllu" (ranges,
    empty nodes, DEPS pairs or MISC ``Name=Value`` items), "conllx" (an
    integer PHEAD in column 9), "conll" (ten tab-separated columns with an
    integer ID, either format), or None (not CoNLL, e.g. plain text)."""
    seen = 0
    guess = None
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as file_:
            for line in file_:
                line = line.rstrip("\r\n").lstrip("\ufeff")
                if not line.strip() or line.startswith("#"):
                    continue
                cols = line.split("\t")
                if len(cols) != 10:
                    return None
                id_ = cols[0]
                if _RANGE.fullmatch(id_) or _DECIMAL.fullmatch(id_):
                    return "conllu"
                if not _INT.fullmatch(id_):
                    return None
                if cols[8] != "_" and _looks_like_deps(cols[8]):
                    return "conllu"
                if cols[9] != "_" and "=" in cols[9] and not _SIGNED_INT.fullmatch(cols[8]):
                    return "conllu"
                if _SIGNED_INT.fullmatch(cols[8]):
                    guess = "conllx"
                seen += 1
                if seen >= max_lines:
                    break
    except OSError:
        return None
    if seen == 0:
        return None
    return guess or "conll"


FORMAT_NAMES = {"conllu": "CoNLL-U", "conllx": "CoNLL-X", "conll": "CoNLL-U or CoNLL-X"}


def read_conllu(path: PathLike, vocab: Vocab, n_sents: int = 1) -> Iterator[Doc]:
    """Yield Docs of ``n_sents`` sentences each from a CoNLL-U file."""
    return read_conll(path, vocab, format="conllu", n_sents=n_sents)


def read_conllx(path: PathLike, vocab: Vocab, n_sents: int = 1) -> Iterator[Doc]:
    """Yield Docs of ``n_sents`` sentences each from a CoNLL-X file."""
    return read_conll(path, vocab, format="conllx", n_sents=n_sents)


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------


def _stored_sentences(doc: Doc) -> Optional[List[Dict[str, Any]]]:
    """The sentences kept in user_data, if they still describe this Doc."""
    data = doc.user_data.get(USER_DATA_KEY)
    if not isinstance(data, dict):
        return None
    sents = data.get("sents")
    if not isinstance(sents, (list, tuple)) or not sents:  # DocBin loads tuples
        return None
    try:
        if sum(int(sent["n_words"]) for sent in sents) != len(doc):
            return None
    except (KeyError, TypeError, ValueError):
        return None
    return sents


def sentence_bounds(doc: Doc) -> List[Tuple[int, int]]:
    """``(start, end)`` token offsets of the Doc's sentences: the ones read
    from the file if ``user_data`` still matches the Doc, else ``doc.sents``,
    else (no sentence starts and no dependencies) the whole Doc."""
    if len(doc) == 0:
        return []
    stored = _stored_sentences(doc)
    if stored is not None:
        bounds = []
        start = 0
        for sent in stored:
            end = start + int(sent["n_words"])
            bounds.append((start, end))
            start = end
        return bounds
    if doc.has_annotation("DEP") or doc.has_annotation("SENT_START"):
        return [(span.start, span.end) for span in doc.sents]
    return [(0, len(doc))]


@lru_cache(maxsize=65536)
def _ud_feats(morph: str) -> str:
    if not morph:
        return "_"
    features = morph.split("|")
    features.sort(key=lambda feature: feature.split("=", 1)[0].lower())
    return "|".join(features)


def _set_space_after(misc: str, no_space: bool) -> str:
    items = [] if misc == "_" else misc.split("|")
    has = _SPACE_AFTER_NO in items
    if no_space == has:
        return misc
    if no_space:
        items.append(_SPACE_AFTER_NO)
    else:
        items = [item for item in items if item != _SPACE_AFTER_NO]
    return "|".join(items) if items else "_"


def _line(cols: List[str], doc_index: int) -> str:
    line = "\t".join(cols)
    if line.count("\t") != 9 or "\n" in line or "\r" in line:
        raise ValueError(
            f"token {doc_index}: a field contains a tab or a line break, "
            f"which CoNLL-U cannot hold: {cols!r}"
        )
    return line


def _sentence_label(info: Optional[Dict[str, Any]], number: int, words: List[str]) -> str:
    """"sentence 12 (sent_id = x): 'The cat sat ...'" for error messages."""
    name = f"sentence {number}"
    for comment in (info or {}).get("comments") or ():
        if comment.startswith("# sent_id"):
            name += f" ({comment.lstrip('# ').strip()})"
            break
    text = " ".join(words[:8]) + (" ..." if len(words) > 8 else "")
    return f"{name}: '{text}'"


def _check_tree(doc: Doc, start: int, end: int, where) -> bool:
    """Whether the sentence ``doc[start:end]`` has dependencies; raise
    ``InvalidTreeError`` (message prefixed by ``where()``) unless they form
    one tree with exactly one root inside the sentence."""
    labelled = [bool(doc[i].dep_) for i in range(start, end)]
    if not any(labelled):
        return False
    if not all(labelled):
        missing = [i - start + 1 for i in range(start, end) if not labelled[i - start]]
        raise InvalidTreeError(
            f"{where()}: words {_id_list(missing)} have no head and label while the others do"
        )
    heads = []
    roots = []
    for i in range(start, end):
        head_i = doc[i].head.i
        if head_i == i:
            roots.append(i - start + 1)
            heads.append(0)
        elif start <= head_i < end:
            heads.append(head_i - start + 1)
        else:
            raise InvalidTreeError(
                f"{where()}: word {i - start + 1} ({doc[i].text!r}) has its head outside "
                "the sentence"
            )
    if len(roots) != 1:
        raise InvalidTreeError(
            f"{where()}: {len(roots)} words are attached to the root "
            f"({_id_list(roots) or 'none'}); a CoNLL-U sentence is one tree with one root"
        )
    cycle = _find_cycle(heads)
    if cycle:
        chain = " -> ".join(map(str, cycle + [cycle[0]]))
        raise InvalidTreeError(f"{where()}: the words {chain} form a cycle")
    return True


def _id_list(ids: List[int], limit: int = 10) -> str:
    shown = ", ".join(map(str, ids[:limit]))
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _render_doc(
    doc: Doc, enhanced_deps: bool, check_trees: bool, first_number: int
) -> Tuple[str, int]:
    stored = _stored_sentences(doc)
    blocks = []
    bounds = sentence_bounds(doc)
    for k, (start, end) in enumerate(bounds):
        info = stored[k] if stored is not None else None
        if check_trees:
            _check_tree(
                doc, start, end,
                lambda: _sentence_label(
                    info, first_number + k, [t.text for t in doc[start:end]]
                ),
            )
        lines: List[str] = []
        if info is not None:
            lines.extend(info.get("comments") or [])
            mwts = {int(mwt["start"]): mwt for mwt in info.get("mwts") or []}
            empty: Dict[int, List[List[str]]] = {}
            if enhanced_deps:
                for node in info.get("empty") or []:
                    empty.setdefault(int(node["after"]), []).append(node["cols"])
            misc_col = info.get("misc")
            deps_col = info.get("deps") if enhanced_deps else None
        else:
            text = " ".join(doc[start:end].text.split())
            lines.append(f"# text = {text}")
            mwts, empty, misc_col, deps_col = {}, {}, None, None
        in_mwt = set()
        for mwt in mwts.values():
            in_mwt.update(range(int(mwt["start"]), int(mwt["end"]) + 1))
        for cols in empty.get(0, ()):
            lines.append(_line(list(cols), start))
        for i in range(start, end):
            token = doc[i]
            word_id = i - start + 1
            mwt = mwts.get(word_id)
            if mwt is not None:
                cols = list(mwt["cols"])
                last = doc[start + int(mwt["end"]) - 1]
                cols[9] = _set_space_after(cols[9], not last.whitespace_)
                lines.append(_line(cols, i))
            form = token.text
            if not form:
                raise ValueError(f"token {i} has an empty text, which CoNLL-U cannot hold")
            dep = token.dep_
            if not dep:
                head, deprel = "_", "_"
            elif token.head.i == i:
                head, deprel = "0", "root"
            else:
                head_i = token.head.i
                if not start <= head_i < end:
                    raise InvalidTreeError(
                        f"token {i} ({form!r}) has its head {head_i} outside its sentence "
                        f"(tokens {start}..{end - 1})"
                    )
                head, deprel = str(head_i - start + 1), dep
            misc = misc_col[word_id - 1] if misc_col is not None else "_"
            if word_id not in in_mwt:
                misc = _set_space_after(misc, not token.whitespace_)
            cols = [
                str(word_id),
                form,
                token.lemma_ or "_",
                token.pos_ or "_",
                token.tag_ or "_",
                _ud_feats(str(token.morph)),
                head,
                deprel,
                deps_col[word_id - 1] if deps_col is not None else "_",
                misc,
            ]
            lines.append(_line(cols, i))
            for cols in empty.get(word_id, ()):
                lines.append(_line(list(cols), i))
        blocks.append("\n".join(lines) + "\n\n")
    return "".join(blocks), len(bounds)


def doc_to_conllu(doc: Doc, enhanced_deps: bool = True, check_trees: bool = True) -> str:
    """Render one Doc as CoNLL-U sentence blocks (each followed by a blank
    line).

    ``enhanced_deps=False`` leaves out the stored enhanced graph: DEPS is
    written as "_" and the empty nodes (which only exist in that graph) are
    dropped, so the output is consistent when the basic tree is a new
    (predicted) one. With ``check_trees`` (the default) every sentence with
    dependencies must be one tree with exactly one root, else
    ``InvalidTreeError`` names the sentence."""
    return _render_doc(doc, enhanced_deps, check_trees, 1)[0]


def docs_to_conllu(
    docs: Iterable[Doc], enhanced_deps: bool = True, check_trees: bool = True,
    first_number: int = 1,
) -> str:
    """Render Docs as one CoNLL-U string (ids restart at 1 per sentence);
    see ``doc_to_conllu``. Sentences are numbered from ``first_number``
    across all Docs in error messages."""
    parts = []
    number = first_number
    for doc in docs:
        text, n = _render_doc(doc, enhanced_deps, check_trees, number)
        parts.append(text)
        number += n
    return "".join(parts)


def write_conllu(
    docs: Iterable[Doc], path: PathLike, enhanced_deps: bool = True, check_trees: bool = True
) -> None:
    """Write Docs to ``path`` as CoNLL-U (see ``doc_to_conllu``). Everything
    is rendered and checked first and the file is replaced atomically, so a
    failure never leaves a partial file."""
    atomic_write_text(
        path, docs_to_conllu(docs, enhanced_deps=enhanced_deps, check_trees=check_trees)
    )
