"""What the graph parser reads, chosen from the training treebank.

Treebanks differ in what their columns hold: XPOS may be absent, a copy of
UPOS or a rich language-specific tag; FEATS carries most of the syntax of
case-marking languages; LEMMA may be given or not. The ``auto`` settings of
``GraphFeatures.v2`` are resolved here, once, from counts over the training
words (spaCy-free: the caller gives one ``TokenRow`` per word), and the
choice is saved with the model:

* ``tag_columns``: both UPOS and XPOS when XPOS is given on most words and
  says more than UPOS (H(XPOS | UPOS) of at least ``XPOS_MIN_BITS``) and, when
  every template that reads tags reads FEATS too (first order, with FEATS),
  more than UPOS and FEATS together: H(XPOS | UPOS, FEATS) of at least
  ``XPOS_MIN_BITS`` and of ``XPOS_MIN_SHARE_BEYOND_FEATS`` of H(XPOS | UPOS).
  Else UPOS alone (or XPOS alone when only it is given). A positional XPOS
  that spells out the FEATS (Czech: 2.93 bits beyond UPOS, 0.05 beyond UPOS
  and FEATS) only doubles the first-order templates: on Czech CLTT dev it
  cost 0.43 UAS / 0.42 LAS and 1.4x the training time. The sibling
  templates of second order read tags and no FEATS: there such an XPOS
  gave +0.27 / +0.23 (BENCHMARKS.md, "Languages").
* ``use_morph``: every FEATS key when FEATS are given on at least
  ``FEATS_MIN_SHARE`` of the words (punctuation and particles have none).
  On the four treebanks tried, every key did as well as or better than the
  keys an information-gain probe kept (benchmarks/results/languages_feats_subset.json);
  a list of keys in the config reads only those.
* ``lemma``: the lemma in place of the 5-character prefix (features/first_order)
  when lemmas are given on most words and differ from the lower-cased form on
  at least ``LEMMA_MIN_SHARE`` of them (an inflecting language).

A column the parser will not be given at parse time (no gold copy and no
component before it predicting it) is never chosen. The entropy is a plug-in
estimate over the training words with the Miller-Madow bias correction
(Miller 1955), so a sparse XPOS on a small treebank does not look informative
by chance.
"""
import math
from collections import Counter
from typing import Iterable, List, NamedTuple, Optional, Tuple

XPOS_MIN_BITS = 0.05     # H(XPOS | UPOS) below this: XPOS is (nearly) a copy of UPOS
XPOS_MIN_SHARE_BEYOND_FEATS = 0.1   # of H(XPOS | UPOS) left once FEATS are read too
FEATS_MIN_SHARE = 0.2    # share of words with FEATS for the column to count as given
LEMMA_MIN_SHARE = 0.2    # share of words whose lemma differs from the lower-cased form
GIVEN_MIN_SHARE = 0.5    # a tag or lemma column is given when filled on this share of words
EMPTY = ("", "_")
# The token attributes (spacy.attrs names) the choices read.
COLUMNS = frozenset({"POS", "TAG", "MORPH", "LEMMA"})


class TokenRow(NamedTuple):
    """What the choice reads of one training word (strings as in CoNLL-U)."""
    upos: str
    xpos: str
    feats: str    # "Case=Nom|Number=Sing", "" or "_" for none
    lemma: str
    lower: str    # the lower-cased form


def _entropy(counts: Iterable[int], total: int) -> float:
    """Plug-in entropy in bits with the Miller-Madow correction."""
    counts = [n for n in counts if n]
    plug_in = -sum(n / total * math.log2(n / total) for n in counts)
    return plug_in + (len(counts) - 1) / (2 * total * math.log(2))


def conditional_entropy(pairs: Counter) -> float:
    """H(Y | X) = H(X, Y) - H(X) in bits from a Counter of (x, y) pairs
    (Miller-Madow corrected; 0 for no pairs)."""
    totals: Counter = Counter()
    for (x, _), n in pairs.items():
        totals[x] += n
    total = sum(totals.values())
    if not total:
        return 0.0
    return _entropy(pairs.values(), total) - _entropy(totals.values(), total)


def choose_tag_columns(rows: List[TokenRow], available=COLUMNS,
                       morph=False) -> Tuple[str, dict]:
    """The tag columns to read (``tag_columns``) and the counts behind the
    choice. morph: the FEATS every template reading tags reads too (False:
    none, True: all, else the keys read)."""
    n = len(rows)
    has_upos = "POS" in available and sum(r.upos not in EMPTY for r in rows) >= GIVEN_MIN_SHARE * n
    has_xpos = "TAG" in available and sum(r.xpos not in EMPTY for r in rows) >= GIVEN_MIN_SHARE * n
    xpos_bits = conditional_entropy(Counter((r.upos, r.xpos) for r in rows))
    stats = {"xpos_given": has_xpos, "upos_given": has_upos,
             "xpos_bits_given_upos": round(xpos_bits, 4)}
    informative = xpos_bits >= XPOS_MIN_BITS
    if morph is not False:
        keys = morph_key_set(morph)
        beyond = conditional_entropy(Counter(((r.upos, "|".join(feats_read(r.feats, keys))), r.xpos)
                                             for r in rows))
        stats["xpos_bits_given_upos_feats"] = round(beyond, 4)
        informative &= beyond >= max(XPOS_MIN_BITS, XPOS_MIN_SHARE_BEYOND_FEATS * xpos_bits)
    if has_upos and has_xpos:
        choice = "both" if informative else "upos"
    else:
        choice = "xpos" if has_xpos and not has_upos else "upos"
    return choice, stats


def feats_read(feats: str, keys: Optional[frozenset]) -> List[str]:
    """The attribute=value pairs of a FEATS string ("Case=Nom|Number=Sing")
    that the features read: those of ``keys`` (None: all)."""
    return [kv for kv in feats.split("|") if kv and kv != "_"
            and (keys is None or kv.split("=", 1)[0] in keys)]


def choose_morph(rows: List[TokenRow]) -> Tuple[bool, dict]:
    share = sum(r.feats not in EMPTY for r in rows) / len(rows) if rows else 0.0
    keys = Counter(kv.split("=", 1)[0] for r in rows if r.feats not in EMPTY
                   for kv in r.feats.split("|") if kv)
    return share >= FEATS_MIN_SHARE, {"feats_share": round(share, 4), "feats_keys": len(keys)}


def choose_lemma(rows: List[TokenRow]) -> Tuple[bool, dict]:
    n = len(rows)
    given = [r for r in rows if r.lemma not in EMPTY]
    differs = sum(r.lemma.lower() != r.lower for r in given) / n if n else 0.0
    use = len(given) >= GIVEN_MIN_SHARE * n and differs >= LEMMA_MIN_SHARE
    return use, {"lemma_given": len(given) >= GIVEN_MIN_SHARE * n,
                 "lemma_differs_share": round(differs, 4)}


def choose_features(rows: Iterable[TokenRow], tag_columns="auto", use_morph="auto",
                    lemma="auto", available=COLUMNS,
                    feats_in_every_template: bool = True) -> Tuple[dict, dict]:
    """Resolve the ``auto`` settings from the training words.

    available: the columns the parser will be given when it parses (of
        ``COLUMNS``); the others are not chosen.
    feats_in_every_template: every template that reads tags reads the FEATS
        too (first order; not the sibling templates of order 2 and 3).
    Returns the concrete settings (``tag_columns``; ``use_morph``: bool or a
    list of keys; ``lemma``: bool) and a report of the counts behind them
    (saved with the model). Settings that are not ``auto`` are kept as given.
    """
    rows = list(rows)
    report: dict = {"words": len(rows), "not_given": sorted(COLUMNS - set(available))}
    if use_morph == "auto":   # first: whether XPOS adds to them decides tag_columns
        use_morph, stats = choose_morph(rows) if "MORPH" in available else (False, {})
        report.update(stats)
    if tag_columns == "auto":
        tag_columns, stats = choose_tag_columns(
            rows, available, use_morph if feats_in_every_template else False)
        report.update(stats)
    if lemma == "auto":
        lemma, stats = choose_lemma(rows) if "LEMMA" in available else (False, {})
        report.update(stats)
    return {"tag_columns": tag_columns, "use_morph": use_morph, "lemma": bool(lemma)}, report


def morph_key_set(use_morph) -> Optional[frozenset]:
    """The FEATS keys a concrete ``use_morph`` reads: None for all of them."""
    if use_morph is True:
        return None
    return frozenset(use_morph or ())
