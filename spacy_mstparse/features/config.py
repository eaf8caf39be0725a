"""What the graph parser's features read and how they hash it: the
``FeatureConfig`` built by the ``@mst_features`` config functions
(``spacy_mstparse.registry``), holding the first-order extractor
(McDonald et al. 2005). Settings may be ``"auto"``: chosen from the training
treebank at ``initialize`` (``features.selection``), after which ``resolve``
gives the concrete config the model is built from. spaCy-free."""
from typing import Optional

from ..tag_columns import CONLL_COLUMNS, TAG_COLUMN_ATTRS
from .first_order import MAX_TAG_ROWS, FirstOrderFeatures
from .selection import morph_key_set

# The weight-table size every default refers to (a power of two).
DEFAULT_N_BUCKETS = 2**22
TAG_COLUMNS = tuple(TAG_COLUMN_ATTRS)
AUTO = "auto"
# The settings "auto" may stand for, and what is chosen for each (``resolve``).
CHOSEN = ("tag_columns", "use_morph", "lemma")


def check_tag_columns(tag_columns: str, allow_auto: bool = False) -> None:
    if tag_columns not in TAG_COLUMNS and not (allow_auto and tag_columns == AUTO):
        choices = "'upos', 'xpos', 'both'" + (" or 'auto'" if allow_auto else "")
        raise ValueError(f"tag_columns must be {choices}, got {tag_columns!r}")


def check_use_morph(use_morph) -> None:
    if isinstance(use_morph, bool) or use_morph == AUTO:
        return
    if (isinstance(use_morph, (list, tuple)) and use_morph
            and all(isinstance(k, str) and k and "=" not in k for k in use_morph)):
        return
    raise ValueError("use_morph must be true, false, \"auto\" or a list of FEATS keys such as "
                     f"[\"Case\", \"VerbForm\"], got {use_morph!r}")


def check_lemma(lemma) -> None:
    if not (isinstance(lemma, bool) or lemma == AUTO):
        raise ValueError(f"lemma must be true, false or \"auto\", got {lemma!r}")


class FeatureConfig:
    """What the parser reads and how it hashes it; built from the config.

    use_morph: False, True (every FEATS key), a list of FEATS keys, or "auto".
    lemma: read the lemma in place of the 5-character prefix where it differs
        from the word (bool or "auto").
    """

    def __init__(self, tag_columns: str, use_morph, n_buckets: int,
                 direction_backoff: bool = False, cluster_bits: int = 0,
                 sibling_stops: bool = False, supertags: bool = False, lemma=False):
        if not 0 <= cluster_bits <= 64:
            raise ValueError(f"cluster_bits must be 0 (no clusters) to 64, got {cluster_bits}")
        check_tag_columns(tag_columns, allow_auto=True)
        check_use_morph(use_morph)
        check_lemma(lemma)
        self.tag_columns = tag_columns
        self.use_morph = list(use_morph) if isinstance(use_morph, tuple) else use_morph
        self.lemma = lemma
        self.n_buckets = n_buckets
        self.direction_backoff = direction_backoff
        self.cluster_bits = cluster_bits   # Brown cluster row (features/clusters.py)
        # stop factors of the sibling model (features/second_order.pyx)
        self.sibling_stops = bool(sibling_stops)
        # a tag row of predicted dependency supertags (features/supertags.py)
        self.supertags = bool(supertags)
        self.first_order: Optional[FirstOrderFeatures] = None
        self.n_tagsets = self._n_tagsets(tag_columns if tag_columns != AUTO else "upos")
        if self.is_resolved:  # validates n_buckets
            self.first_order = FirstOrderFeatures(n_buckets, self.n_tagsets, self.reads_morph,
                                                  direction_backoff, cluster_bits > 0)
        elif n_buckets < 2 or n_buckets & (n_buckets - 1):
            raise ValueError(f"n_buckets must be a power of two >= 2, got {n_buckets}")

    def _n_tagsets(self, tag_columns: str) -> int:
        n = (2 if tag_columns == "both" else 1) + self.supertags + (self.cluster_bits > 0)
        if n > MAX_TAG_ROWS:
            raise ValueError(
                f"tag_columns = {tag_columns!r} with supertags and word clusters makes "
                f"{n} tag columns, more than the {MAX_TAG_ROWS} the feature ids "
                "have room for: read one tag column besides them (tag_columns = \"upos\", as "
                "configs/mst_parser_tagged.cfg)")
        return n

    def tag_row_names(self) -> list:
        """What each tag row of the sentences holds, in order: "upos" /
        "xpos" (as ``tag_columns`` says), "supertag", "cluster" (the names
        explanations give the ``/tag1``, ``/tag2``, ... rows)."""
        columns = TAG_COLUMN_ATTRS[self.tag_columns if self.tag_columns != AUTO else "upos"]
        names = [CONLL_COLUMNS[attr].lower() for attr in columns]
        return names + ["supertag"] * self.supertags + ["cluster"] * (self.cluster_bits > 0)

    @property
    def is_resolved(self) -> bool:
        """No setting is left to choose from the training data."""
        return AUTO not in (self.tag_columns, self.use_morph, self.lemma)

    @property
    def reads_morph(self) -> bool:
        return bool(self.use_morph) and self.use_morph != AUTO

    @property
    def morph_keys(self) -> Optional[frozenset]:
        """The FEATS keys read (None: every key); empty when FEATS are not read."""
        return morph_key_set(self.use_morph) if self.use_morph != AUTO else frozenset()

    def choices(self) -> dict:
        """The settings ``auto`` may stand for, as they are."""
        return {key: getattr(self, key) for key in CHOSEN}

    def resolve(self, chosen: dict) -> "FeatureConfig":
        """The concrete config: the ``auto`` settings replaced by ``chosen``,
        and ``cluster_bits`` when given (0: no clusters were found). Two tag
        columns become UPOS alone where supertags and clusters leave room for
        one only."""
        settings = {**self.to_dict(), **{k: chosen[k] for k in CHOSEN
                                          if getattr(self, k) == AUTO}}
        if "cluster_bits" in chosen:
            settings["cluster_bits"] = chosen["cluster_bits"]
        if (self.tag_columns == AUTO and settings["tag_columns"] == "both"
                and 2 + self.supertags + (settings["cluster_bits"] > 0) > MAX_TAG_ROWS):
            settings["tag_columns"] = "upos"
        return FeatureConfig(**settings)

    def to_dict(self):
        return {"tag_columns": self.tag_columns, "use_morph": self.use_morph,
                "n_buckets": self.n_buckets, "direction_backoff": self.direction_backoff,
                "cluster_bits": self.cluster_bits, "sibling_stops": self.sibling_stops,
                "supertags": self.supertags, "lemma": self.lemma}
