"""Registered config functions for the feature sets (``@mst_features``)."""
import spacy

from .first_order import FirstOrderFeatures

if not hasattr(spacy.registry, "mst_features"):
    spacy.registry.create("mst_features", entry_points=True)


class FeatureConfig:
    """What the parser reads and how it hashes it; built from the config."""

    def __init__(self, tag_columns: str, use_morph: bool, n_buckets: int,
                 direction_backoff: bool = False):
        self.tag_columns = tag_columns
        self.use_morph = use_morph
        self.n_buckets = n_buckets
        self.direction_backoff = direction_backoff
        self.n_tagsets = 2 if tag_columns == "both" else 1
        # validates n_buckets
        self.first_order = FirstOrderFeatures(n_buckets, self.n_tagsets, use_morph,
                                              direction_backoff)

    def to_dict(self):
        return {"tag_columns": self.tag_columns, "use_morph": self.use_morph,
                "n_buckets": self.n_buckets, "direction_backoff": self.direction_backoff}

    @staticmethod
    def normalize(saved: dict) -> dict:
        """A saved ``to_dict`` with the defaults of keys that older models lack
        (models saved before ``direction_backoff`` existed did not use it)."""
        return {"direction_backoff": False, **saved}


def _check_tag_columns(tag_columns: str) -> None:
    if tag_columns not in ("upos", "xpos", "both"):
        raise ValueError(f"tag_columns must be 'upos', 'xpos' or 'both', got {tag_columns!r}")


@spacy.registry.mst_features("spacy_mstparse.FirstOrderFeatures.v2")
def make_first_order_features(
    tag_columns: str = "both",
    use_morph: bool = False,
    n_buckets: int = 2**22,
    direction_backoff: bool = True,
) -> FeatureConfig:
    """McDonald et al. (2005) Table 1 features.

    tag_columns: "upos", "xpos" or "both" (which tags feed the POS templates).
    use_morph: add FEATS features of head and child (Nguyen et al. 2007).
    n_buckets: size of the hashed weight table (a power of two).
    direction_backoff: conjoin every feature with the attachment direction
        alone too, besides the plain feature and its direction + distance
        conjunction (+0.24 UAS on EWT dev on average, about 1.27x the parse time).
    """
    _check_tag_columns(tag_columns)
    return FeatureConfig(tag_columns, use_morph, n_buckets, direction_backoff)


@spacy.registry.mst_features("spacy_mstparse.FirstOrderFeatures.v1")
def make_first_order_features_v1(
    tag_columns: str = "both", use_morph: bool = False, n_buckets: int = 2**22
) -> FeatureConfig:
    """The v1 feature set: v2 without ``direction_backoff`` (the plain
    McDonald et al. 2005 conjunctions). Kept so v1 configs and models still
    load and train exactly as before."""
    _check_tag_columns(tag_columns)
    return FeatureConfig(tag_columns, use_morph, n_buckets, False)
