"""Brown-cluster features (``cluster_bits``, Koo et al. 2008): the paths
file reader, path prefixes, the cluster tag row, its features at every
order, and the component's clusters (initialize, save, load, errors)."""
import numpy
import pytest
import spacy
from spacy.strings import get_string_id
from spacy.tokens import Doc
from spacy.training import Example

from spacy_mstparse.components.serialization import ModelDataError
from spacy_mstparse.features.clusters import (ClusterError, ClusterTable, path_code,
                                              read_brown_paths)
from spacy_mstparse.features.doc_arrays import SentenceEncoder
from spacy_mstparse.features.first_order import FirstOrderFeatures
from spacy_mstparse.features.grandparent import GrandparentFeatures
from spacy_mstparse.features.second_order import SiblingFeatures
from spacy_mstparse.features.sentence import Sentence
from spacy_mstparse.features.templates import split_key

PATHS = "0110\tdog\t5\n0111\tcat\t3\n\n10\tThe\t9\n0000\tdog\t1\n110\tsleeps\t4\n"
N_BUCKETS = 2**16


@pytest.fixture
def paths_file(tmp_path):
    path = tmp_path / "paths.txt"
    path.write_text(PATHS, encoding="utf8")
    return path


def test_paths_file_and_prefixes(paths_file):
    table = read_brown_paths(paths_file, get_string_id)
    assert len(table) == 4  # the repeated "dog" keeps its first path
    ids = [get_string_id(w) for w in ("dog", "cat", "The", "sleeps", "bird")]
    # first bit lowest: "0110" -> 0b0110, "0111" -> 0b1110, "10" -> 0b01
    assert table.lookup(ids).tolist() == [6, 14, 1, 3, 0]
    assert path_code("0111") == 14
    # the first 2 bits ("01", "01", "10", "11") plus one; 0 for no cluster
    orth = [get_string_id(w) for w in ("DOG", "cat", "The", "sleeps", "bird")]
    lower = [get_string_id(w) for w in ("dog", "cat", "the", "sleeps", "bird")]
    assert table.column(orth, lower, 2).tolist() == [3, 3, 2, 4, 0]
    # the whole path
    assert table.column(orth, lower, 64).tolist() == [7, 15, 2, 4, 0]


@pytest.mark.parametrize("text,message", [
    ("0110\tdog\n01x0\tcat\n", "line 2"),
    ("0110\n", "line 1"),
    ("\n\n", "no clusters"),
])
def test_bad_paths_files_name_file_and_line(tmp_path, text, message):
    path = tmp_path / "bad.txt"
    path.write_text(text, encoding="utf8")
    with pytest.raises(ClusterError, match=message) as err:
        read_brown_paths(path, get_string_id)
    assert "bad.txt" in str(err.value)
    with pytest.raises(ClusterError, match="cannot read"):
        read_brown_paths(tmp_path / "missing.txt", get_string_id)


def encode(vocab, words, pos, table, bits):
    doc = Doc(vocab, words=words, pos=pos, tags=pos)
    encoder = SentenceEncoder(vocab, "both", False, bits)
    encoder.clusters = table
    return encoder.encode(doc, [(0, len(doc))])[0]


def with_cluster_row(n, tags, row):
    """Sentences of n words with the tag rows ``tags``, without and with
    the cluster row ``row``."""
    words = numpy.arange(n + 1, dtype="uint64") + 100
    return (Sentence(words, numpy.zeros(n + 1, "uint64"), numpy.zeros(n + 1, "int8"), tags,
                     numpy.zeros(n + 2, "int32"), numpy.zeros(0, "uint64")),
            Sentence(words, numpy.zeros(n + 1, "uint64"), numpy.zeros(n + 1, "int8"),
                     numpy.vstack([tags, row]), numpy.zeros(n + 2, "int32"), numpy.zeros(0, "uint64")))


def test_encoder_adds_the_cluster_row(paths_file):
    nlp = spacy.blank("en")
    table = read_brown_paths(paths_file, get_string_id)
    s = encode(nlp.vocab, ["The", "dog", "sleeps"], ["DET", "NOUN", "VERB"], table, 2)
    assert s.n_tagsets == 3
    encoder = SentenceEncoder(nlp.vocab, "both", False, 2)
    with pytest.raises(ValueError, match="no word clusters"):
        encoder.encode(Doc(nlp.vocab, words=["a"]), [(0, 1)])


@pytest.mark.parametrize("extractor", ["first", "sibling", "grandparent"])
def test_cluster_column_adds_its_own_features(extractor):
    # Features of one tag column do not read the others: the three-row
    # sentence has every feature of the two-row one, plus those of the
    # cluster row, which change with the clusters.
    n = 5
    rng = numpy.random.RandomState(0)
    tags = rng.randint(1, 4, size=(2, n + 1)).astype("uint64")
    plain, clustered = with_cluster_row(n, tags, numpy.array([0, 7, 7, 8, 9, 7], dtype="uint64"))
    _, other = with_cluster_row(n, tags, numpy.array([0, 7, 8, 8, 9, 9], dtype="uint64"))
    heads = numpy.array([-1, 2, 0, 2, 5, 3], dtype="int32")
    if extractor == "first":
        small, big = FirstOrderFeatures(N_BUCKETS, 2), FirstOrderFeatures(N_BUCKETS, 3)
    elif extractor == "sibling":
        small, big = SiblingFeatures(N_BUCKETS, 2), SiblingFeatures(N_BUCKETS, 3)
    else:
        small, big = GrandparentFeatures(N_BUCKETS, 2), GrandparentFeatures(N_BUCKETS, 3)
    base = small.tree_features(plain, heads).tolist()
    full = big.tree_features(clustered, heads).tolist()
    changed = big.tree_features(other, heads).tolist()
    assert len(full) > len(base)
    remaining = list(full)
    for b in base:
        remaining.remove(b)
    assert remaining and sorted(full) != sorted(changed)
    with pytest.raises(ValueError, match="tag rows"):
        small.tree_features(clustered, heads)


def test_at_most_three_tag_rows():
    with pytest.raises(ValueError, match="n_tagsets"):
        FirstOrderFeatures(N_BUCKETS, 4)
    with pytest.raises(ValueError, match="n_tagsets"):
        SiblingFeatures(N_BUCKETS, 4)


TRAIN = [
    ("The dog sleeps .", ["DET", "NOUN", "VERB", "PUNCT"], [1, 2, 2, 2],
     ["det", "nsubj", "root", "punct"]),
    ("The cat sleeps", ["DET", "NOUN", "VERB"], [1, 2, 2], ["det", "nsubj", "root"]),
]
CONFIG = {"features": {"@mst_features": "spacy_mstparse.GraphFeatures.v2", "tag_columns": "both",
                       "n_buckets": 2**12, "cluster_bits": 2}, "label_buckets": 2**8}


def trained(paths_file):
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("mst_parser", config=CONFIG)
    train = []
    for text, pos, heads, deps in TRAIN:
        words = text.split()
        ref = Doc(nlp.vocab, words=words, pos=pos, tags=pos, heads=heads, deps=deps)
        train.append(Example(Doc(nlp.vocab, words=words, pos=pos, tags=pos), ref))
    nlp.config["initialize"]["components"]["mst_parser"] = {"clusters": str(paths_file)}
    nlp.initialize(lambda: train)
    for _ in range(10):
        parser.update(train)
    return nlp, parser


def parse(nlp, text, pos):
    doc = nlp(Doc(nlp.vocab, words=text.split(), pos=pos, tags=pos))
    return [(t.head.i, t.dep_) for t in doc]


def test_component_trains_saves_and_loads_its_clusters(paths_file, tmp_path):
    nlp, parser = trained(paths_file)
    assert len(parser.encoder.clusters) == 4
    expected = parse(nlp, "The dog sleeps .", ["DET", "NOUN", "VERB", "PUNCT"])
    assert expected == [(1, "det"), (2, "nsubj"), (2, "ROOT"), (2, "punct")]
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert len(loaded.get_pipe("mst_parser").encoder.clusters) == 4
    assert parse(loaded, "The dog sleeps .", ["DET", "NOUN", "VERB", "PUNCT"]) == expected
    fresh = spacy.blank("en")
    fresh.add_pipe("mst_parser", config=CONFIG).from_bytes(parser.to_bytes())
    assert parse(fresh, "The dog sleeps .", ["DET", "NOUN", "VERB", "PUNCT"]) == expected
    (tmp_path / "model" / "mst_parser" / "clusters.npz").unlink()
    with pytest.raises(ModelDataError, match="clusters.npz"):
        spacy.load(tmp_path / "model")


def test_clusters_from_spacy_lookups_data():
    pytest.importorskip("spacy_lookups_data")
    from spacy_mstparse.features.clusters import read_clusters

    table = read_clusters("spacy-lookups-data", "en", get_string_id)
    assert len(table) > 100_000
    cat, dog, the = table.lookup([get_string_id(w) for w in ("cat", "dog", "the")]).tolist()
    assert cat == dog != the  # cat and dog share a cluster
    with pytest.raises(ClusterError, match="no word clusters"):
        read_clusters("spacy-lookups-data", "xx", get_string_id)


def test_hand_computed_hybrid_cluster_pairs():
    # Koo et al. (2008)'s hybrid pairs of the arc 2 -> 4: head cluster +
    # child tag (first column), head tag + child cluster, head cluster +
    # child word, head word + child cluster.
    from spacy_mstparse.features.hashing import py_mix as mix

    n = 5
    tags = numpy.arange(2 * (n + 1), dtype="uint64").reshape(2, n + 1) + 50
    clusters = numpy.array([0, 7, 7, 8, 9, 7], dtype="uint64")
    _, s = with_cluster_row(n, tags, clusters)
    words = numpy.arange(n + 1, dtype="uint64") + 100  # with_cluster_row's word ids
    feats = FirstOrderFeatures(N_BUCKETS, 3, False, False, True)
    h, c = 2, 4
    expected = [mix(mix(48, clusters[h]), tags[0, c]), mix(mix(49, tags[0, h]), clusters[c]),
                mix(mix(50, clusters[h]), words[c]), mix(mix(51, words[h]), clusters[c])]
    ids, keys = feats.arc_features(s, h, c, return_keys=True)
    ids = ids.tolist()
    plain, plain_keys = FirstOrderFeatures(N_BUCKETS, 3, False, False, False).arc_features(
        s, h, c, return_keys=True)
    plain = plain.tolist()
    for base in expected:
        assert int(base) % N_BUCKETS in ids and int(base) % N_BUCKETS not in plain
    # The cluster row (the third) has no in-between or surrounding-tag
    # templates: one word (3) between, so one in-between feature, and the
    # four 4-grams and four trigrams; each plain and x direction/distance.
    context = [key for key in plain_keys.tolist()
               if split_key(key)[1] == 2 and split_key(key)[0].context]
    assert len(context) == 2 * (1 + 8)
    assert not set(context) & set(keys.tolist())
    assert len(ids) == len(plain) - len(context) + 2 * len(expected)
    assert set(ids) >= {b for b, key in zip(plain, plain_keys.tolist()) if key not in context}
    with pytest.raises(ValueError, match="cluster_row"):
        FirstOrderFeatures(N_BUCKETS, 1, False, False, True)


def test_explain_lists_the_cluster_features(paths_file):
    nlp, parser = trained(paths_file)
    doc = nlp(Doc(nlp.vocab, words="The dog sleeps .".split(), pos=["DET", "NOUN", "VERB", "PUNCT"],
                  tags=["DET", "NOUN", "VERB", "PUNCT"]))
    expl = parser.explain(doc, 1)   # "dog" <- "sleeps"
    rows = expl.head.features
    assert sum(r["weight"] for r in rows) == pytest.approx(expl.head.arc_score, rel=1e-4, abs=1e-3)
    by_template = {r["template"]: r["values"] for r in rows}
    # 2-bit prefixes: sleeps "11", dog "01"; hybrid pairs with UPOS and words;
    # the third tag row named by what it holds
    assert by_template["hp+cp/cluster"] == "11 01"
    assert by_template["h-cluster+c-pos"] == "11 NOUN"
    assert by_template["h-word+c-cluster"] == "sleeps 01"
    label = expl.label
    assert sum(r["weight"] for r in label.features) == pytest.approx(label.score, rel=1e-4, abs=1e-3)
    assert any(r["template"].endswith("/cluster") for r in label.features)
    assert not any("/tag" in r["template"] for r in rows + label.features)


def test_damaged_clusters_part_names_the_file(paths_file, tmp_path):
    from spacy_mstparse.components.serialization import dump_arrays

    nlp, _ = trained(paths_file)
    nlp.to_disk(tmp_path / "model")
    part = tmp_path / "model" / "mst_parser" / "clusters.npz"
    part.write_bytes(dump_arrays(keys=numpy.arange(3, dtype="uint64"),
                                 paths=numpy.arange(2, dtype="uint64")))
    with pytest.raises(ModelDataError, match="clusters.npz"):
        spacy.load(tmp_path / "model")
    part.write_bytes(b"not an archive")
    with pytest.raises(ModelDataError, match="clusters.npz"):
        spacy.load(tmp_path / "model")
