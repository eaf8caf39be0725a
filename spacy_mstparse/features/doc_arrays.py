"""Encode the sentences of spaCy Docs as ``Sentence`` integer arrays.

Reads the lower-cased form, the tag column(s) chosen by ``tag_columns``
(UPOS = ``token.pos``, XPOS = ``token.tag``) and, if asked, the morphological
features (``token.morph``: every key, or the keys ``use_morph`` lists) of
every word, and prepends the artificial root. The prefix row holds each
word's 5-character prefix (words longer than five characters), or with
``lemma`` its lemma where that differs from the lower-cased word (else the
prefix as before).
With a ``ClusterTable`` (``features.clusters``) and ``cluster_bits`` > 0 the
last tag row holds the first ``cluster_bits`` bits of each word's Brown
cluster path (Koo et al. 2008). With ``supertags`` a tag row before it holds
the supertags an ``mst_supertagger`` predicted (``doc._.supertag_ids``;
``features.supertags``), 0 for a doc without them.
"""
from typing import Dict, List, Optional, Tuple

import numpy
from spacy.attrs import IDS, LEMMA, LOWER, MORPH, ORTH
from spacy.strings import get_string_id
from spacy.tokens import Doc

from .clusters import ClusterTable, path_text
from ..tag_columns import TAG_COLUMN_ATTRS
from .config import check_tag_columns
from .selection import feats_read, morph_key_set
from .sentence import ROOT_TAG, ROOT_WORD, Sentence

# The attribute ids each tag column setting reads.
TAG_COLUMN_IDS = {name: tuple(IDS[attr] for attr in attrs)
                  for name, attrs in TAG_COLUMN_ATTRS.items()}
# The Doc extension holding predicted supertags (string ids), set by mst_supertagger.
SUPERTAG_ATTR = "supertag_ids"
NO_SUPERTAG = 0
PREFIX_LENGTH = 5


class SentenceEncoder:
    """Callable turning a Doc's sentence spans into Sentences.

    tag_columns (str): "upos", "xpos" or "both".
    use_morph (bool or list): read morphological features: all (True) or
        those of the listed FEATS keys.
    lemma (bool): the lemma in place of the prefix where it differs from the word.
    cluster_bits (int): add a row of Brown cluster path prefixes of this many
        bits (0: none); ``clusters`` (a ``ClusterTable``) must be set before
        encoding.
    supertags (bool): add a row of the docs' predicted supertags.
    """

    def __init__(self, vocab, tag_columns: str = "upos", use_morph: bool = False,
                 cluster_bits: int = 0, supertags: bool = False, lemma: bool = False):
        check_tag_columns(tag_columns)
        self.tag_columns = tag_columns
        self.tag_attrs = TAG_COLUMN_IDS[tag_columns]
        self.use_morph = bool(use_morph)
        self.morph_keys = morph_key_set(use_morph)
        self.lemma = lemma
        self.cluster_bits = cluster_bits
        self.supertags = supertags
        self.clusters: Optional[ClusterTable] = None
        self._prefixes: Dict[int, Tuple[int, bool]] = {}
        self._morphs: Dict[int, Tuple[int, ...]] = {}
        self._lemmas: Dict[Tuple[int, int], Tuple[int, bool]] = {}

    @property
    def n_tagsets(self) -> int:
        return len(self.tag_attrs) + self.supertags + (self.cluster_bits > 0)

    @staticmethod
    def supertag_ids(doc: Doc):
        """The doc's predicted supertags (``doc._.supertag_ids``), or None."""
        return doc._.get(SUPERTAG_ATTR) if Doc.has_extension(SUPERTAG_ATTR) else None

    @classmethod
    def has_supertags(cls, doc: Doc) -> bool:
        return cls.supertag_ids(doc) is not None

    def encode(self, doc: Doc, bounds: List[Tuple[int, int]]) -> List[Sentence]:
        """Sentences for the token ranges ``bounds`` ([(start, end), ...]) of doc."""
        return self.encode_docs([(doc, bounds)])[0]

    def encode_docs(self, items: List[Tuple[Doc, List[Tuple[int, int]]]]) -> List[List[Sentence]]:
        """The Sentences of every ``(doc, bounds)``: the words of all the docs
        are read into one table (one slot per word, plus one for the root
        before each sentence), so the per-word work is done once per batch."""
        if not any(bounds for _, bounds in items):
            return [[] for _ in items]
        array, lemmas = self._batch_rows([doc for doc, _ in items])
        starts = numpy.cumsum([0] + [len(doc) for doc, _ in items])
        spans = [(int(offset) + a, int(offset) + b)
                 for (_, bounds), offset in zip(items, starts) for a, b in bounds]
        lengths = numpy.array([b - a for a, b in spans], dtype="int64")
        first = numpy.cumsum(lengths + 1) - (lengths + 1)     # each sentence's root slot
        n_slots = int(lengths.sum()) + len(spans)
        is_word = numpy.ones(n_slots, dtype=bool)
        is_word[first] = False
        slots = numpy.flatnonzero(is_word)
        word_of = slots + numpy.repeat(numpy.array([a for a, _ in spans]) - first - 1, lengths)
        rows = array[word_of]
        lemmas = None if lemmas is None else lemmas[word_of]
        words = numpy.full(n_slots, ROOT_WORD, dtype="uint64")
        words[slots] = rows[:, 0]
        prefixes = numpy.zeros(n_slots, dtype="uint64")
        is_long = numpy.zeros(n_slots, dtype="int8")
        prefixes[slots], is_long[slots] = self._prefixes_of(rows[:, 0], lemmas, items[0][0].vocab.strings)
        tags = numpy.full((self.n_tagsets, n_slots), ROOT_TAG, dtype="uint64")
        tags[:, slots] = rows[:, 1 : 1 + self.n_tagsets].T
        counts = numpy.zeros(n_slots + 1, dtype="int32")
        morph = numpy.zeros(0, dtype="uint64")
        if self.use_morph:
            unique, inverse = numpy.unique(rows[:, -1], return_inverse=True)
            strings = items[0][0].vocab.strings
            feats = [self._morph(int(m), strings) for m in unique.tolist()]
            sizes = numpy.array([len(f) for f in feats], dtype="int64")
            flat = numpy.fromiter((x for f in feats for x in f), dtype="uint64",
                                  count=int(sizes.sum()))
            of_word = sizes[inverse.reshape(-1)]
            where = numpy.cumsum(of_word) - of_word
            morph = flat[numpy.repeat((numpy.cumsum(sizes) - sizes)[inverse.reshape(-1)] - where,
                                      of_word) + numpy.arange(int(of_word.sum()))]
            counts[slots + 1] = of_word
        morph_start = numpy.cumsum(counts, dtype="int32")   # slot i's features start here
        out: List[List[Sentence]] = []
        j = 0
        for _, bounds in items:
            doc_sentences = []
            for _ in bounds:
                a, b = int(first[j]), int(first[j] + lengths[j] + 1)
                doc_sentences.append(Sentence(
                    words[a:b], prefixes[a:b], is_long[a:b], tags[:, a:b],
                    morph_start[a : b + 1] - morph_start[a],
                    morph[morph_start[a]:morph_start[b]]))
                j += 1
            out.append(doc_sentences)
        return out

    def _batch_rows(self, docs: List[Doc]):
        """(the words of all the docs x [LOWER, tag rows, MORPH], their
        lemmas or None): one ``to_array`` per doc, the rest once per batch."""
        n_tags = len(self.tag_attrs)
        attrs = [LOWER, *self.tag_attrs, MORPH] + [ORTH] * (self.cluster_bits > 0) \
            + [LEMMA] * bool(self.lemma)
        array = numpy.concatenate([doc.to_array(attrs).reshape((-1, len(attrs)))
                                   for doc in docs]).astype("uint64", copy=False)
        lemmas = array[:, -1] if self.lemma else None
        columns = [array[:, : 1 + n_tags]]   # LOWER and the tags
        if self.supertags:
            columns.append(numpy.concatenate(
                [self._supertag_column(doc) for doc in docs]).astype("uint64", copy=False))
        if self.cluster_bits:  # the cluster row goes last, before MORPH
            if self.clusters is None:
                raise ValueError("cluster_bits > 0 but no word clusters were loaded")
            columns.append(self.clusters.column(array[:, 2 + n_tags], array[:, 0],
                                                self.cluster_bits))
        columns.append(array[:, 1 + n_tags])  # MORPH
        return numpy.column_stack(columns).reshape((-1, self.n_tagsets + 2)), lemmas

    def _supertag_column(self, doc: Doc) -> numpy.ndarray:
        ids = self.supertag_ids(doc)
        if ids is None:
            return numpy.full(len(doc), NO_SUPERTAG, dtype="uint64")
        if len(ids) != len(doc):
            raise ValueError(f"doc._.{SUPERTAG_ATTR} has {len(ids)} entries for "
                             f"{len(doc)} tokens")
        return numpy.asarray(ids, dtype="uint64")

    def cluster_names(self, words) -> List[str]:
        """Readable cluster values of tokens (``clusters.path_text``): the
        ``cluster_bits``-bit path prefix the features read, or "<no-cluster>"."""
        orth = numpy.array([t.orth for t in words], dtype="uint64")
        lower = numpy.array([t.lower for t in words], dtype="uint64")
        values = self.clusters.column(orth, lower, self.cluster_bits).tolist()
        return [path_text(v, self.cluster_bits) for v in values]

    def _prefixes_of(self, words: numpy.ndarray, lemmas: Optional[numpy.ndarray], strings):
        """The prefix row values and is_long flags of ``words`` (with their
        lemmas if the features read them), looked up once per distinct word."""
        if lemmas is None:
            unique, inverse = numpy.unique(words, return_inverse=True)
            cache = self._prefixes
            found = [cache.get(x) or self._prefix(x, strings) for x in unique.tolist()]
        else:
            pairs = numpy.stack([words, lemmas], axis=1)
            unique, inverse = numpy.unique(pairs, axis=0, return_inverse=True)
            found = [self._lemmas.get(pair) or self._lemma(pair, strings)
                     for pair in map(tuple, unique.tolist())]
        inverse = inverse.reshape(-1)
        if not found:
            return numpy.zeros(0, dtype="uint64"), numpy.zeros(0, dtype="int8")
        prefixes, is_long = zip(*found)
        return (numpy.array(prefixes, dtype="uint64")[inverse],
                numpy.array(is_long, dtype="int8")[inverse])

    def _prefix(self, lower_id: int, strings) -> Tuple[int, bool]:
        # Ids are hashes of the strings, so the caches hold across vocabs.
        cached = self._prefixes.get(lower_id)
        if cached is None:
            text = strings[lower_id] if lower_id in strings else ""
            if len(text) > PREFIX_LENGTH:
                cached = (get_string_id("<pre>" + text[:PREFIX_LENGTH]), True)
            else:
                cached = (0, False)
            self._prefixes[lower_id] = cached
        return cached

    def _lemma(self, pair: Tuple[int, int], strings) -> Tuple[int, bool]:
        lower_id, lemma_id = pair
        lemma = strings[lemma_id] if lemma_id and lemma_id in strings else ""
        lower = strings[lower_id] if lower_id in strings else ""
        if lemma and lemma != "_" and lemma.lower() != lower:
            cached = (get_string_id("<lem>" + lemma.lower()), True)
        else:
            cached = self._prefixes.get(lower_id) or self._prefix(lower_id, strings)
        self._lemmas[pair] = cached
        return cached

    def _morph(self, morph_id: int, strings) -> Tuple[int, ...]:
        cached = self._morphs.get(morph_id)
        if cached is None:
            text = strings[morph_id] if morph_id and morph_id in strings else ""
            cached = tuple(get_string_id(f) for f in feats_read(text, self.morph_keys))
            self._morphs[morph_id] = cached
        return cached
