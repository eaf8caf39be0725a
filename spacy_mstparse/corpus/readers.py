"""A spaCy corpus reader whose predicted docs carry the gold tags and gold
sentence boundaries (but no heads or labels).

Graph-based parsers are usually trained and evaluated with gold tokenization,
gold POS tags and gold sentences (CoNLL-X / CoNLL 2007 setting). With this
reader in the ``[corpora]`` block, the parser sees exactly that as input:

    [corpora.train]
    @readers = "spacy_mstparse.GoldAnnotationsCorpus.v1"
    path = ${paths.train}
    copy_tags = true
    copy_sents = true

``gold_tokens`` (default true) builds each predicted doc on the reference's
words and whitespace; with ``gold_tokens = false`` the predicted doc keeps the
tokenizer's tokens (as in ``spacy.Corpus.v1``) and annotations are copied only
through the alignment (tags only where one predicted token matches exactly one
reference token).

``cache = true`` keeps the examples of the first complete pass in memory and
gives the same ones on every later call with the same vocab: for a dev corpus,
which spaCy's training loop reads at every evaluation (its ``evaluate`` works
on copies of the predicted docs). Not for a corpus streamed because it does
not fit in memory, nor with an augmenter (a new augmentation on every pass).
"""
from pathlib import Path
from typing import Callable, Iterable, Iterator, List, Optional, Tuple, Union

import numpy
import spacy
from spacy import util
from spacy.attrs import IDS, SENT_START
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Corpus, Example
from spacy.training.augment import dont_augment
from spacy.vocab import Vocab

from ..setting_types import config_errors
from ..tag_columns import CONLL_COLUMNS
from .conll import sentence_bounds
from .docbin import read_docbin

TAG_ATTRS = tuple(IDS[attr] for attr in CONLL_COLUMNS)  # POS, TAG, MORPH, LEMMA


def gold_sent_starts(doc: Doc) -> List[bool]:
    """True for the first token of each sentence of ``doc``: the sentences
    read from the treebank if ``user_data`` still holds them, else
    ``doc.sents``; a doc without any sentence information is one sentence."""
    starts = [False] * len(doc)
    for start, _ in sentence_bounds(doc):
        starts[start] = True
    return starts


def gold_annotated_doc(
    example: Example,
    copy_tags: bool = True,
    copy_sents: bool = True,
    gold_tokens: bool = True,
) -> Doc:
    """A new predicted doc for ``example``: the reference's tokens (or the
    predicted tokens if ``gold_tokens`` is false) with the reference's UPOS,
    XPOS, FEATS and lemmas (``copy_tags``) and sentence starts set to
    True/False for every token (``copy_sents``); no heads, no labels."""
    ref = example.reference
    if gold_tokens:
        return reference_annotated_doc(ref, example.predicted.vocab, copy_tags, copy_sents)
    doc = _new_doc(example.predicted, example.predicted.vocab)
    columns = {}
    if copy_tags and len(doc):
        for attr in TAG_ATTRS:
            aligned = example.get_aligned(attr)
            columns[attr] = numpy.array([0 if v is None else v for v in aligned], dtype=numpy.uint64)
    starts = None
    if copy_sents:
        starts = [False] * len(doc)
        y2x = example.alignment.y2x
        for ref_i, is_start in enumerate(gold_sent_starts(ref)):
            if is_start:
                aligned = y2x[ref_i]
                if len(aligned):
                    starts[int(min(aligned))] = True
    return _annotate(doc, columns, starts)


def reference_annotated_doc(ref: Doc, vocab: Vocab, copy_tags: bool = True,
                            copy_sents: bool = True) -> Doc:
    """``gold_annotated_doc`` with gold tokens, made from the reference doc
    alone: a new doc on its words with its tags and sentence starts."""
    doc = _new_doc(ref, vocab)
    columns = {}
    if copy_tags and len(doc):
        columns = dict(zip(TAG_ATTRS, ref.to_array(list(TAG_ATTRS)).T))
    return _annotate(doc, columns, gold_sent_starts(ref) if copy_sents else None)


def _new_doc(source: Doc, vocab: Vocab) -> Doc:
    """A doc on the words and whitespace of ``source``, without annotation."""
    return Doc(vocab, words=[token.text for token in source],
               spaces=[bool(token.whitespace_) for token in source])


def _annotate(doc: Doc, columns: dict, starts: Optional[List[bool]]) -> Doc:
    """Set the attribute ``columns`` (attr id: values) and, unless None, the
    sentence ``starts`` (the first token always starts one) on ``doc``."""
    if len(doc) == 0:
        return doc
    if starts is not None:
        starts[0] = True
        columns[SENT_START] = numpy.array([1 if s else -1 for s in starts], dtype=numpy.int64)
    if columns:
        attrs = list(columns)
        doc.from_array(attrs, numpy.stack([numpy.asarray(columns[a]).astype(numpy.uint64)
                                           for a in attrs], axis=1))
    return doc


class GoldAnnotationsCorpus(Corpus):
    """``spacy.training.Corpus`` whose examples' predicted docs are replaced by
    ``gold_annotated_doc``. Reads user_data with the DocBin files (quickly),
    so that treebank sentence boundaries stored by ``convert`` are used."""

    def __init__(
        self,
        path: Union[str, Path],
        *,
        gold_preproc: bool = False,
        max_length: int = 0,
        limit: int = 0,
        augmenter: Optional[Callable] = None,
        copy_tags: bool = True,
        copy_sents: bool = True,
        gold_tokens: bool = True,
        cache: bool = False,
    ) -> None:
        super().__init__(
            path, gold_preproc=gold_preproc, max_length=max_length, limit=limit, augmenter=augmenter
        )
        if cache and self.augmenter is not dont_augment:
            raise ValueError("cache = true gives the same examples on every pass: it cannot be "
                             "combined with an augmenter (set augmenter = null or cache = false)")
        self.copy_tags = copy_tags
        self.copy_sents = copy_sents
        self.gold_tokens = gold_tokens
        self.cache = cache
        self._cached: Optional[Tuple[Vocab, List[Example]]] = None

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self._cached is not None and self._cached[0] is nlp.vocab:
            yield from self._cached[1]
            return
        kept: Optional[List[Example]] = [] if self.cache else None
        for example in self._read(nlp):
            if kept is not None:
                kept.append(example)
            yield example
        if kept is not None:  # a complete pass
            self._cached = (nlp.vocab, kept)

    def _read(self, nlp: Language) -> Iterator[Example]:
        for example in super().__call__(nlp):
            if self._annotated_early:
                yield example
                continue
            predicted = gold_annotated_doc(
                example,
                copy_tags=self.copy_tags,
                copy_sents=self.copy_sents,
                gold_tokens=self.gold_tokens,
            )
            yield Example(predicted, example.reference)

    @property
    def _annotated_early(self) -> bool:
        """Whether ``_make_example`` builds the final predicted doc: on the
        reference's words, when no augmenter may change the reference after."""
        return self.gold_tokens and self.augmenter is dont_augment

    def _make_example(self, nlp: Language, reference: Doc, gold_preproc: bool) -> Example:
        if self._annotated_early:
            predicted = reference_annotated_doc(reference, reference.vocab, self.copy_tags,
                                                self.copy_sents)
            return Example(predicted, reference)
        # With gold_tokens the predicted doc is rebuilt on the reference's
        # words after the augmenter: spaCy's example on those words, untokenized.
        return super()._make_example(nlp, reference, gold_preproc or self.gold_tokens)

    def read_docbin(self, vocab: Vocab, locs: Iterable[Union[str, Path]]) -> Iterator[Doc]:
        """Like ``Corpus.read_docbin``, with user_data decoded quickly."""
        i = 0
        for loc in locs:
            loc = util.ensure_path(loc)
            if not loc.parts[-1].endswith(".spacy"):
                continue
            for doc in read_docbin(loc, vocab):
                if len(doc):
                    yield doc
                    i += 1
                    if self.limit >= 1 and i >= self.limit:
                        return


@spacy.registry.readers("spacy_mstparse.GoldAnnotationsCorpus.v1")
def create_gold_annotations_corpus(
    path: Optional[Path],
    gold_preproc: bool = False,
    max_length: int = 0,
    limit: int = 0,
    augmenter: Optional[Callable] = None,
    copy_tags: bool = True,
    copy_sents: bool = True,
    gold_tokens: bool = True,
    cache: bool = False,
) -> Callable[[Language], Iterator[Example]]:
    """Arguments as ``spacy.Corpus.v1``, plus: ``copy_tags`` copies UPOS,
    XPOS, FEATS and lemmas from the reference into the predicted doc;
    ``copy_sents`` sets every predicted token's ``is_sent_start`` from the
    reference; ``gold_tokens`` builds the predicted doc on the reference's
    tokens instead of the tokenizer's; ``cache`` reads the corpus once and
    gives the same examples on every later pass (a dev corpus)."""
    with config_errors("corpora"):  # as spaCy prints a config error (no traceback)
        if path is None:
            raise ValueError(
                "spacy_mstparse.GoldAnnotationsCorpus.v1 needs a path to a .spacy file "
                "or a folder of them (set paths.train / paths.dev in the config, or give "
                "--paths.train / --paths.dev)"
            )
        return GoldAnnotationsCorpus(
            path,
            gold_preproc=gold_preproc,
            max_length=max_length,
            limit=limit,
            augmenter=augmenter,
            copy_tags=copy_tags,
            copy_sents=copy_sents,
            gold_tokens=gold_tokens,
            cache=cache,
        )
