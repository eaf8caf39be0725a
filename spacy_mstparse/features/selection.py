"""What the graph parser reads, chosen from the training treebank.

Treebanks differ in what their columns hold: XPOS may be absent, a copy of
UPOS or a rich language-specific tag; FEATS carries most of the syntax of
case-marking languages and little beyond the tags in others; LEMMA may be
given or not. The ``auto`` settings of ``GraphFeatures.v1`` are resolved here,
once, from counts over the training words (spaCy-free: the caller gives one
``TokenRow`` per word), and the choice is saved with the model:

* ``tag_columns``: both UPOS and XPOS when XPOS is given on most words and
  says more than UPOS (H(XPOS | UPOS) of at least ``XPOS_MIN_BITS``), else UPOS
  alone (or XPOS alone when only it is given).
* ``use_morph``: the FEATS keys (Case, VerbForm, ...) that tell something about
  a word's syntax beyond its UPOS tag, on at least ``MORPH_MIN_SHARE`` of the
  words. Two probes, from the word's side as a dependent and as a head: its
  attachment (its label, its head's UPOS and the side the head is on) and its
  valency (the labels of its dependents). A key is read when it gains at least
  ``MORPH_MIN_BITS`` bits per word about either, H(probe | UPOS) -
  H(probe | UPOS, value of the key). (Case tells subjects from objects, verb
  form clausal dependents, possessor agreement that a noun has a possessor.)
  The gain is measured over UPOS even where XPOS spells the features out:
  separate FEATS values generalize where a rich XPOS tag is sparse.
* ``lemma``: the lemma in place of the 5-character prefix (features/first_order)
  when lemmas are given on most words and differ from the lower-cased form on
  at least ``LEMMA_MIN_SHARE`` of them (an inflecting language).

A column the parser will not be given at parse time (no gold copy and no
component before it predicting it) is never chosen. The entropies are
plug-in estimates over the training words with the Miller-Madow bias
correction (Miller 1955), so keys with many values on a small treebank are
not favoured.
"""
import math
from collections import Counter
from typing import Dict, Iterable, List, NamedTuple, Optional, Tuple

XPOS_MIN_BITS = 0.05     # H(XPOS | UPOS) below this: XPOS is (nearly) a copy of UPOS
MORPH_MIN_BITS = 0.01    # information gain of a FEATS key about the label, in bits per word
MORPH_MIN_SHARE = 0.01   # share of words a FEATS key must appear on to be considered
LEMMA_MIN_SHARE = 0.2    # share of words whose lemma differs from the lower-cased form
GIVEN_MIN_SHARE = 0.5    # a column is "given" when filled on this share of the words
EMPTY = ("", "_")
# The token attributes (spacy.attrs names) the choices read.
COLUMNS = frozenset({"POS", "TAG", "MORPH", "LEMMA"})


class TokenRow(NamedTuple):
    """What the choice reads of one training word (strings as in CoNLL-U;
    labels' subtypes after ":" are ignored)."""
    upos: str
    xpos: str
    feats: str    # "Case=Nom|Number=Sing", "" or "_" for none
    lemma: str
    lower: str    # the lower-cased form
    label: str    # its dependency label
    head_upos: str = ""     # its head's UPOS ("" for the root)
    head_side: int = 0      # -1: the head is before it, 1: after it, 0: root
    dependents: Tuple[str, ...] = ()   # its dependents' labels, sorted


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


def parse_feats(feats: str) -> Dict[str, str]:
    if feats in EMPTY:
        return {}
    return dict(kv.split("=", 1) if "=" in kv else (kv, "") for kv in feats.split("|") if kv)


def choose_tag_columns(rows: List[TokenRow], available=COLUMNS) -> Tuple[str, dict]:
    n = len(rows)
    has_upos = "POS" in available and sum(r.upos not in EMPTY for r in rows) >= GIVEN_MIN_SHARE * n
    has_xpos = "TAG" in available and sum(r.xpos not in EMPTY for r in rows) >= GIVEN_MIN_SHARE * n
    xpos_bits = conditional_entropy(Counter((r.upos, r.xpos) for r in rows)) if n else 0.0
    if has_upos and has_xpos:
        choice = "both" if xpos_bits >= XPOS_MIN_BITS else "upos"
    else:
        choice = "xpos" if has_xpos and not has_upos else "upos"
    return choice, {"xpos_given": has_xpos, "upos_given": has_upos,
                    "xpos_bits_given_upos": round(xpos_bits, 4)}


def _base(label: str) -> str:
    return label.split(":")[0]


def choose_morph_keys(rows: List[TokenRow]) -> Tuple[List[str], dict]:
    """The FEATS keys worth reading, best first, and each key's gain in bits
    (the larger of the attachment and valency probes)."""
    n = len(rows)
    tags = [r.upos for r in rows]
    probes = ([(_base(r.label), r.head_upos, r.head_side) for r in rows],
              [tuple(_base(d) for d in r.dependents) for r in rows])
    feats = [parse_feats(r.feats) for r in rows]
    bases = [conditional_entropy(Counter(zip(tags, probe))) for probe in probes]
    counts = Counter(key for f in feats for key in f)
    gains = {}
    for key, count in counts.items():
        if count >= MORPH_MIN_SHARE * n:
            values = [(t, f.get(key)) for t, f in zip(tags, feats)]
            gains[key] = round(max(base - conditional_entropy(Counter(zip(values, probe)))
                                   for base, probe in zip(bases, probes)), 4)
    chosen = sorted((k for k, g in gains.items() if g >= MORPH_MIN_BITS),
                    key=lambda k: (-gains[k], k))
    return chosen, {"morph_gain_bits": dict(sorted(gains.items(), key=lambda kv: -kv[1]))}


def choose_lemma(rows: List[TokenRow]) -> Tuple[bool, dict]:
    n = len(rows)
    given = [r for r in rows if r.lemma not in EMPTY]
    differs = sum(r.lemma.lower() != r.lower for r in given) / n if n else 0.0
    use = len(given) >= GIVEN_MIN_SHARE * n and differs >= LEMMA_MIN_SHARE
    return use, {"lemma_given": len(given) >= GIVEN_MIN_SHARE * n,
                 "lemma_differs_share": round(differs, 4)}


def choose_features(rows: Iterable[TokenRow], tag_columns="auto", use_morph="auto",
                    lemma="auto", available=COLUMNS) -> Tuple[dict, dict]:
    """Resolve the ``auto`` settings from the training words.

    available: the columns the parser will be given when it parses (of
        ``COLUMNS``); the others are not chosen.
    Returns the concrete settings (``tag_columns``; ``use_morph``: False, True
    for every key, or a list of keys; ``lemma``: bool) and a report of the
    counts behind them (saved with the model). Settings that are not ``auto``
    are kept as given.
    """
    rows = list(rows)
    report: dict = {"words": len(rows), "not_given": sorted(COLUMNS - set(available))}
    if tag_columns == "auto":
        tag_columns, stats = choose_tag_columns(rows, available)
        report.update(stats)
    if use_morph == "auto":
        keys, stats = choose_morph_keys(rows) if "MORPH" in available else ([], {})
        report.update(stats)
        use_morph = keys if keys else False
    if lemma == "auto":
        lemma, stats = choose_lemma(rows) if "LEMMA" in available else (False, {})
        report.update(stats)
    return {"tag_columns": tag_columns, "use_morph": use_morph, "lemma": bool(lemma)}, report


def morph_key_set(use_morph) -> Optional[frozenset]:
    """The FEATS keys a concrete ``use_morph`` reads: None for all of them."""
    if use_morph is True:
        return None
    return frozenset(use_morph or ())
