"""Feature groups (templates) of the hashed first-order features.

The sparseptron (Smith & Martins 2013, Figure 3; Martins et al. 2011) works on
non-overlapping groups of features. Here a group is one feature template of
McDonald et al. (2005, Table 1) together with all of its direction/distance
conjunctions; the templates that read a tag are separate groups for each tag
column (UPOS, XPOS). A group id is the template key that the extractor
(``FirstOrderFeatures``) records with every hash it emits, and its name and
attributes come from the template table (``templates.pyx``).
"""
from .templates import FIRST_ORDER_TEMPLATES, TAG_COLUMN_STRIDE, split_key, with_row_names


def group_name(int gid, row_names=()):
    """Readable name of a group id, e.g. ``"hp+cp/tag2"`` for pairs of the
    second tag row, ``"hp+cp/xpos"`` given ``row_names`` (what each tag row
    holds: ``FeatureConfig.tag_row_names``)."""
    template, column = split_key(gid)
    if not template.per_tag_column:
        return template.name
    return with_row_names(f"{template.name}/tag{column + 1}", row_names)


def group_ids(int n_tagsets, bint use_morph, bint cluster_row=False):
    """All group ids of a feature configuration, sorted."""
    enabled = {"": True, "morph": use_morph, "clusters": cluster_row}
    ids = []
    for template in FIRST_ORDER_TEMPLATES.values():
        if not enabled[template.option]:
            continue
        if template.per_tag_column:
            # the cluster row (last) has no context templates
            columns = n_tagsets - (cluster_row and template.context)
            ids.extend(t * TAG_COLUMN_STRIDE + template.id for t in range(columns))
        else:
            ids.append(template.id)
    return sorted(ids)


def tree_features_grouped(features, sentence, heads):
    """``(ids, groups)``: the bucket ids of ``features.tree_features(sentence,
    heads)`` (a ``FirstOrderFeatures``; same order) and the group id (uint8)
    of each."""
    return features.tree_features(sentence, heads, return_keys=True)
