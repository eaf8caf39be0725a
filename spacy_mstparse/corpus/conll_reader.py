"""Read CoNLL-U / CoNLL-X treebanks into spaCy Docs, validating every line
(what is read, where, and the errors: see the module docstring of
``spacy_mstparse.corpus.conll``)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

import numpy
from spacy.attrs import SENT_START
from spacy.parts_of_speech import IDS as _SPACY_POS_IDS
from spacy.tokens import Doc
from spacy.vocab import Vocab

from .byte_ranges import ByteRange, raw_lines

USER_DATA_KEY = "spacy_mstparse.conll"
# A Doc parsed from plain text may say which document it is (e.g. "line12",
# its input line): the writer then starts it with "# newdoc id = ...".
NEWDOC_ID_KEY = "spacy_mstparse.newdoc_id"
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
SPACE_AFTER_NO = "SpaceAfter=No"
# A root word's label: UD writes "root", spaCy's Doc "ROOT" (what spaCy's own
# parser and `spacy convert` write). Read and parsed Docs carry ROOT_LABEL,
# CoNLL-U output UD_ROOT_LABEL.
ROOT_LABEL = "ROOT"
UD_ROOT_LABEL = "root"


def doc_label(label: str) -> str:
    """A dependency label as a Doc carries it: "root" in any case -> "ROOT"."""
    return ROOT_LABEL if label.lower() == UD_ROOT_LABEL else label

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
    return SPACE_AFTER_NO in misc and SPACE_AFTER_NO in misc.split("|")


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
    cycle = find_cycle(heads)
    if cycle:
        chain = " -> ".join(map(str, cycle + [cycle[0]]))
        raise ConllFormatError(path, first_line, f"HEAD: the words {chain} form a cycle")
    sent.heads = heads  # type: ignore[assignment]
    return sent


def find_cycle(heads: List[int]) -> List[int]:
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


def _iter_sentences(
    path: PathLike, fmt: str, byte_range: Optional[ByteRange] = None
) -> Iterator[_Sentence]:
    comments: List[str] = []
    rows: List[Tuple[int, List[str]]] = []
    first_line = 0
    comment_line = 0
    for line_no, raw in raw_lines(path, byte_range):
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
            deps.extend(doc_label(deprel) for deprel in sent.deprels)
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
    path: PathLike, vocab: Vocab, format: str = "conllu", n_sents: int = 1,
    byte_range: Optional[ByteRange] = None,
) -> Iterator[Doc]:
    """Yield one Doc per ``n_sents`` consecutive sentences of a CoNLL-U
    (``format="conllu"``) or CoNLL-X (``format="conllx"``) file, or of the
    part ``byte_range`` of it (cut after a blank line, see
    ``byte_ranges.split_file``; errors name the file's own line numbers;
    with its ``data`` the file itself is not read).

    Raises ``ConllFormatError`` while iterating when the file is malformed;
    consume the whole iterator before writing anything derived from it.
    """
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}: expected one of {', '.join(FORMATS)}")
    if isinstance(n_sents, bool) or not isinstance(n_sents, int) or n_sents < 1:
        raise ValueError(f"n_sents must be an integer >= 1, got {n_sents!r}")
    vocab = _as_vocab(vocab)
    if (byte_range is None or byte_range.data is None) and not Path(path).is_file():
        raise FileNotFoundError(f"no such file: {path}")
    return _read(path, vocab, format, n_sents, byte_range)


def _read(
    path: PathLike, vocab: Vocab, fmt: str, n_sents: int, byte_range: Optional[ByteRange]
) -> Iterator[Doc]:
    batch: List[_Sentence] = []
    for sent in _iter_sentences(path, fmt, byte_range):
        batch.append(sent)
        if len(batch) == n_sents:
            yield _make_doc(vocab, batch, fmt)
            batch = []
    if batch:
        yield _make_doc(vocab, batch, fmt)


def read_conll_docs(
    path: PathLike, vocab: Vocab, format: str = "conllu", n_sents: int = 1,
    progress: Optional[bool] = False,
) -> List[Doc]:
    """All Docs of ``read_conll``, validated; a file without any sentence
    raises ``EmptyInputError``. ``progress``: a bar of the docs read
    (``progress.progress_bar``: None = on a terminal)."""
    from ..progress import progress_bar

    docs = list(progress_bar(read_conll(path, vocab, format=format, n_sents=n_sents),
                             desc=f"reading {Path(path).name}", unit=" docs", show=progress))
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
