"""What the graph parser's features read and how they hash it: the
``FeatureConfig`` built by the ``@mst_features`` config functions
(``spacy_mstparse.registry``), holding the first-order extractor
(McDonald et al. 2005). spaCy-free."""
from ..tag_columns import TAG_COLUMN_ATTRS
from .first_order import MAX_TAG_ROWS, FirstOrderFeatures

# The weight-table size every default refers to (a power of two).
DEFAULT_N_BUCKETS = 2**22
TAG_COLUMNS = tuple(TAG_COLUMN_ATTRS)


def check_tag_columns(tag_columns: str) -> None:
    if tag_columns not in TAG_COLUMNS:
        raise ValueError(f"tag_columns must be 'upos', 'xpos' or 'both', got {tag_columns!r}")


class FeatureConfig:
    """What the parser reads and how it hashes it; built from the config."""

    def __init__(self, tag_columns: str, use_morph: bool, n_buckets: int,
                 direction_backoff: bool = False, cluster_bits: int = 0,
                 sibling_stops: bool = False, supertags: bool = False):
        if not 0 <= cluster_bits <= 64:
            raise ValueError(f"cluster_bits must be 0 (no clusters) to 64, got {cluster_bits}")
        self.tag_columns = tag_columns
        self.use_morph = use_morph
        self.n_buckets = n_buckets
        self.direction_backoff = direction_backoff
        self.cluster_bits = cluster_bits   # Brown cluster row (features/clusters.py)
        # stop factors of the sibling model (features/second_order.pyx)
        self.sibling_stops = bool(sibling_stops)
        # a tag row of predicted dependency supertags (features/supertags.py)
        self.supertags = bool(supertags)
        self.n_tagsets = (2 if tag_columns == "both" else 1) + self.supertags + (cluster_bits > 0)
        if self.n_tagsets > MAX_TAG_ROWS:
            raise ValueError(
                f"tag_columns = {tag_columns!r} with supertags and word clusters makes "
                f"{self.n_tagsets} tag columns, more than the {MAX_TAG_ROWS} the feature ids "
                "have room for: read one tag column besides them (tag_columns = \"upos\", as "
                "configs/mst_parser_tagged.cfg)")
        # validates n_buckets
        self.first_order = FirstOrderFeatures(n_buckets, self.n_tagsets, use_morph,
                                              direction_backoff, cluster_bits > 0)

    def to_dict(self):
        return {"tag_columns": self.tag_columns, "use_morph": self.use_morph,
                "n_buckets": self.n_buckets, "direction_backoff": self.direction_backoff,
                "cluster_bits": self.cluster_bits, "sibling_stops": self.sibling_stops,
                "supertags": self.supertags}
