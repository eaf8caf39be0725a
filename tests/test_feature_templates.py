"""The first-order template table (``features.templates``) against what the
extractor emits: every template key it records is in the table, a
configuration's groups are exactly the keys it emits, recording the keys
leaves the bucket ids as they are, and changing one attribute of one token
changes exactly the features whose table entry reads that attribute."""
import numpy as np
import pytest

from spacy_mstparse.features import feature_groups as fg
from spacy_mstparse.features.first_order import FirstOrderFeatures
from spacy_mstparse.features.sentence import Sentence
from spacy_mstparse.features.templates import FIRST_ORDER_TEMPLATES, split_key

CONFIGS = [(n_tagsets, use_morph, backoff, cluster_row)
           for n_tagsets in (1, 2, 3) for use_morph in (False, True) for backoff in (False, True)
           for cluster_row in ((False, True) if n_tagsets > 1 else (False,))]


def random_arrays(rng, n, n_tagsets, use_morph):
    counts = rng.integers(0, 3, n + 1) if use_morph else np.zeros(n + 1, dtype=int)
    return {
        "words": rng.integers(1, 2**63, n + 1, dtype=np.uint64),
        "prefixes": rng.integers(1, 2**63, n + 1, dtype=np.uint64),
        "is_long": rng.integers(0, 2, n + 1).astype(np.int8),
        "tags": rng.integers(1, 6, (n_tagsets, n + 1)).astype(np.uint64),
        "morph_start": np.r_[0, np.cumsum(counts)].astype(np.int32),
        "morph": rng.integers(1, 50, int(counts.sum())).astype(np.uint64),
    }


def sentence(a):
    return Sentence(a["words"], a["prefixes"], a["is_long"], a["tags"], a["morph_start"],
                    a["morph"])


def random_tree(rng, n):
    order = rng.permutation(np.arange(1, n + 1))
    heads = np.full(n + 1, -1, dtype=np.int32)
    for j, c in enumerate(order):
        heads[c] = 0 if j == 0 else order[rng.integers(0, j)]
    return heads


@pytest.mark.parametrize("n_tagsets,use_morph,backoff,cluster_row", CONFIGS)
def test_the_table_knows_every_emitted_key_and_every_group_is_emitted(
        n_tagsets, use_morph, backoff, cluster_row):
    rng = np.random.default_rng(n_tagsets * 8 + use_morph * 4 + backoff * 2 + cluster_row)
    f = FirstOrderFeatures(2**20, n_tagsets, use_morph, backoff, cluster_row)
    emitted = set()
    for _ in range(6):
        s = sentence(random_arrays(rng, 12, n_tagsets, use_morph))
        heads = random_tree(rng, 12)
        ids, keys = f.tree_features(s, heads, return_keys=True)
        assert np.array_equal(ids, f.tree_features(s, heads))
        assert keys.dtype == np.uint8 and len(keys) == len(ids)
        # the conjunctions of a base feature are consecutive and share its key
        per = f.n_conjunctions
        assert (keys.reshape(-1, per) == keys[::per, None]).all()
        emitted |= set(keys.tolist())
    for key in emitted:
        template, column = split_key(key)   # ValueError: a key the table does not know
        assert column < n_tagsets
        assert template.option in ("", "morph" if use_morph else "",
                                   "clusters" if cluster_row else "")
        assert fg.group_name(key).startswith(template.name)
    assert emitted == set(fg.group_ids(n_tagsets, use_morph, cluster_row))


def test_unknown_keys_are_refused():
    for key in (0, 38, 47, 52, 63, 64 + 2, 64 + 48, 3 * 64 + 1, 255):
        with pytest.raises(ValueError):
            split_key(key)
        with pytest.raises(ValueError):
            fg.group_name(key)
    assert split_key(64 + 17)[0].name == "hp+cp" and fg.group_name(64 + 17) == "hp+cp/tag2"


def test_arc_keys_are_the_arcs_share_of_the_tree_keys():
    rng = np.random.default_rng(5)
    f = FirstOrderFeatures(2**20, 2, True, True, True)
    s = sentence(random_arrays(rng, 8, 2, True))
    heads = random_tree(rng, 8)
    ids, keys = f.tree_features(s, heads, return_keys=True)
    parts = [f.arc_features(s, int(heads[c]), c, return_keys=True) for c in range(1, 9)]
    assert np.array_equal(ids, np.concatenate([p[0] for p in parts]))
    assert np.array_equal(keys, np.concatenate([p[1] for p in parts]))
    assert np.array_equal(parts[0][0], f.arc_features(s, int(heads[1]), 1))


def touched(attr, column, h, c, p, what, row, is_long, n_tagsets, cluster_row):
    """Whether attribute ``attr`` (``templates.pyx``'s notation) of a feature
    of tag column ``column`` on the arc h -> c reads what changed: ``what``
    ("word", "prefix", "tag" of tag row ``row``, "morph") of token p."""
    if attr == "b":
        return what == "tag" and row == column and min(h, c) < p < max(h, c)
    end = {"h": h, "c": c}[attr[0]]
    if what == "word":
        return p == end and (attr[1:] == "w" or (attr[1:] == "X" and not is_long[end]))
    if what == "prefix":
        return p == end and attr[1:] in ("x", "X") and bool(is_long[end])
    if what == "morph":
        return p == end and attr[1:] == "m"
    if attr[1:] == "C":
        return p == end and cluster_row and row == n_tagsets - 1
    offset = {"p": 0, "p-1": -1, "p+1": 1}.get(attr[1:])
    return offset is not None and row == column and p == end + offset


@pytest.mark.parametrize("n_tagsets,use_morph,cluster_row",
                         [(1, True, False), (2, False, False), (2, True, True), (3, False, True)])
def test_a_changed_attribute_changes_exactly_the_templates_that_read_it(
        n_tagsets, use_morph, cluster_row):
    rng = np.random.default_rng(n_tagsets * 2 + use_morph)
    f = FirstOrderFeatures(2**40, n_tagsets, use_morph, False, cluster_row)
    n = 9
    a = random_arrays(rng, n, n_tagsets, use_morph)
    s = sentence(a)
    changes = [("word", 0), ("prefix", 0), ("morph", 0)] + [("tag", r) for r in range(n_tagsets)]
    checked = set()
    for h in range(n + 1):
        for c in range(1, n + 1):
            if h == c:
                continue
            ids, keys = f.arc_features(s, h, c, return_keys=True)
            before = {int(k): sorted(ids[keys == k].tolist()) for k in np.unique(keys)}
            for p in {h, c, h - 1, h + 1, c - 1, c + 1, (h + c) // 2} & set(range(n + 1)):
                for what, row in changes:
                    if what == "morph" and a["morph_start"][p] == a["morph_start"][p + 1]:
                        continue
                    b = {name: value.copy() for name, value in a.items()}
                    if what == "word":
                        b["words"][p] += 1
                    elif what == "prefix":
                        b["prefixes"][p] += 1
                    elif what == "tag":
                        b["tags"][row, p] = 99
                    else:
                        b["morph"][a["morph_start"][p]:a["morph_start"][p + 1]] += 100
                    ids2, keys2 = f.arc_features(sentence(b), h, c, return_keys=True)
                    for key in set(before) | set(keys2.tolist()):
                        template, column = split_key(key)
                        expected = any(touched(attr, column, h, c, p, what, row, a["is_long"],
                                               n_tagsets, cluster_row)
                                       for attr in template.reads)
                        after = sorted(ids2[keys2 == key].tolist())
                        assert (before.get(key) != after) == expected, (
                            fg.group_name(key), h, c, p, what, row)
                        if expected:
                            checked.add(template.id)
    assert checked == {t.id for t in FIRST_ORDER_TEMPLATES.values()
                       if t.option in ("", "morph" if use_morph else "",
                                       "clusters" if cluster_row else "")}


def test_the_labeler_table_names_every_label_feature_and_every_template_fires():
    from spacy_mstparse.labeler.arc_labeler import ArcLabeler
    from spacy_mstparse.labeler.templates import LABEL_TEMPLATES

    rng = np.random.default_rng(11)
    labeler = ArcLabeler(2**12, 5, True, 2)
    names = set()
    for _ in range(4):
        s = sentence(random_arrays(rng, 10, 2, True))
        heads = random_tree(rng, 10)
        for c in range(1, 11):
            offsets, row_names = labeler.arc_feature_rows(s, heads, c)
            assert len(offsets) == len(row_names)
            names |= set(row_names)
    bases = {name.split("/")[0] for name in names}
    assert bases == {name for name, _ in LABEL_TEMPLATES.values()}
    tagged = {name.split("/")[0] for name in names if name.endswith("/tag2")}
    assert tagged and all(reads and any("p" in attr for attr in reads)
                          for name, reads in LABEL_TEMPLATES.values() if name in tagged)
