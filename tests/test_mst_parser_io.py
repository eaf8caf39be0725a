"""spaCy's ``test_overfitting_IO`` idiom for ``mst_parser``, and the one
serializer table: the same parts on disk and in bytes, ``exclude``,
pickling, load-time settings, and damaged or foreign model files."""
import io
import pickle
import zipfile

import numpy
import pytest
import spacy
import srsly
from spacy.tokens import Doc
from spacy.training import Example

from spacy_mstparse.components.mst_parser import FORMAT_VERSION
from spacy_mstparse.components.serialization import ModelDataError

TRAIN = [
    ("She reads long books .", ["PRON", "VERB", "ADJ", "NOUN", "PUNCT"],
     [1, 1, 3, 1, 1], ["nsubj", "root", "amod", "obj", "punct"]),
    ("The cat sleeps .", ["DET", "NOUN", "VERB", "PUNCT"],
     [1, 2, 2, 2], ["det", "nsubj", "root", "punct"]),
    ("Dogs bark at night", ["NOUN", "VERB", "ADP", "NOUN"],
     [1, 1, 3, 1], ["nsubj", "root", "case", "obl"]),
]
SMALL = {"features": {"@mst_features": "spacy_mstparse.GraphFeatures.v1",
                      "n_buckets": 2**12}, "label_buckets": 2**8}


def tagged(vocab, text, pos):
    words = text.split()
    return Doc(vocab, words=words, pos=pos, tags=pos)


def examples(nlp):
    out = []
    for text, pos, heads, deps in TRAIN:
        ref = Doc(nlp.vocab, words=text.split(), pos=pos, tags=pos, heads=heads, deps=deps)
        out.append(Example(tagged(nlp.vocab, text, pos), ref))
    return out


def parses(nlp, docs):
    return [[(t.head.i, t.dep_) for t in doc] for doc in docs]


@pytest.fixture(scope="module")
def overfitted():
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("mst_parser", config=SMALL)
    train = examples(nlp)
    nlp.initialize(lambda: train)
    losses = {}
    for _ in range(30):
        losses = parser.update(train, losses={})
    assert losses["mst_parser"] == 0.0
    return nlp, parser


def test_overfitting_IO(overfitted, tmp_path):
    nlp, parser = overfitted
    docs = [nlp(tagged(nlp.vocab, text, pos)) for text, pos, _, _ in TRAIN]
    # trained on UD's "root", the Doc gets spaCy's "ROOT"
    expected = [[(h, "ROOT" if d == "root" else d) for h, d in zip(heads, deps)]
                for _, _, heads, deps in TRAIN]
    assert parses(nlp, docs) == expected
    # disk
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    again = [loaded(tagged(loaded.vocab, text, pos)) for text, pos, _, _ in TRAIN]
    assert parses(loaded, again) == expected
    # bytes
    nlp2 = spacy.blank("en")
    nlp2.add_pipe("mst_parser", config=SMALL).from_bytes(parser.to_bytes())
    assert parses(nlp2, [nlp2(tagged(nlp2.vocab, t, p)) for t, p, _, _ in TRAIN]) == expected
    # pickle
    nlp3 = pickle.loads(pickle.dumps(nlp))
    assert parses(nlp3, [nlp3(tagged(nlp3.vocab, t, p)) for t, p, _, _ in TRAIN]) == expected
    # pipe over a batch == __call__ one doc at a time
    batch = [tagged(nlp.vocab, t, p) for t, p, _, _ in TRAIN] * 3
    assert parses(nlp, nlp.pipe([d.copy() for d in batch], batch_size=4)) == \
        parses(nlp, [nlp(d.copy()) for d in batch])


def test_same_parts_on_disk_and_in_bytes(overfitted, tmp_path):
    _, parser = overfitted
    parser.to_disk(tmp_path / "comp")
    files = {p.name: p.read_bytes() for p in (tmp_path / "comp").iterdir()}
    parts = srsly.msgpack_loads(parser.to_bytes())
    assert set(files) == set(parts) == {"cfg", "arc_weights.npz", "label_weights.npz",
                                        "label_restrictions.npz", "arc_filter.npz"}
    for name in files:
        assert files[name] == parts[name], name
    cfg = srsly.json_loads(files["cfg"])
    assert cfg["format_version"] == FORMAT_VERSION and cfg["labeler_version"] == 2
    # the labeler's restrictions are saved and come back
    keys, allowed = parser.graph.labeler.restrictions()
    assert len(keys) > 0 and allowed.any(axis=1).all()
    loaded = type(parser)(parser.vocab, features=parser.features,
                          label_buckets=parser.cfg["label_buckets"]).from_disk(tmp_path / "comp")
    assert loaded.graph.labeler.version == 2
    assert numpy.array_equal(loaded.graph.labeler.restrictions()[0], keys)
    assert numpy.array_equal(loaded.graph.labeler.restrictions()[1], allowed)


def test_exclude_is_honoured(overfitted, tmp_path):
    nlp, parser = overfitted
    parts = srsly.msgpack_loads(parser.to_bytes(exclude=["label_weights"]))
    assert set(parts) == {"cfg", "arc_weights.npz", "label_restrictions.npz", "arc_filter.npz"}
    parser.to_disk(tmp_path / "comp", exclude=["arc_weights", "cfg", "label_restrictions",
                                               "arc_filter"])
    assert {p.name for p in (tmp_path / "comp").iterdir()} == {"label_weights.npz"}
    # loading with a part excluded keeps the component's own
    other = spacy.blank("en").add_pipe("mst_parser", config=SMALL)
    other.from_bytes(parser.to_bytes())
    arc, label = other.prediction_weights()
    zeros = srsly.msgpack_loads(parser.to_bytes())
    from spacy_mstparse.components import serialization as ser
    zeros["arc_weights.npz"] = ser.dump_sparse_vector(numpy.zeros_like(arc))
    other.from_bytes(srsly.msgpack_dumps(zeros), exclude=["arc_weights"])
    assert numpy.array_equal(other.prediction_weights()[0], arc)
    other.from_bytes(srsly.msgpack_dumps(zeros))
    assert not numpy.any(other.prediction_weights()[0])
    keys = other.graph.labeler.restrictions()[0]
    assert len(keys)
    zeros["label_restrictions.npz"] = ser.dump_arrays(
        keys=numpy.zeros(0, "uint64"), allowed=numpy.zeros((0, len(other.labels)), "uint8"))
    other.from_bytes(srsly.msgpack_dumps(zeros), exclude=["label_restrictions"])
    assert numpy.array_equal(other.graph.labeler.restrictions()[0], keys)
    other.from_bytes(srsly.msgpack_dumps(zeros))
    assert len(other.graph.labeler.restrictions()[0]) == 0


def test_runtime_settings_given_at_load_time_take_effect(overfitted, tmp_path):
    nlp, _ = overfitted
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model",
                        config={"components": {"mst_parser": {"max_sentence_length": 3}}})
    parser = loaded.get_pipe("mst_parser")
    assert parser.cfg["max_sentence_length"] == 3
    doc = loaded(tagged(loaded.vocab, *TRAIN[0][:2]))  # 5 words: two chunks, one tree
    assert sum(t.head.i == t.i for t in doc) == 1
    with pytest.raises(ValueError, match="order = 1; it cannot change after training"):
        spacy.load(tmp_path / "model", config={"components": {"mst_parser": {"order": 2}}})


@pytest.mark.parametrize("damage,message", [
    (lambda d: (d / "arc_weights.npz").write_bytes((d / "arc_weights.npz").read_bytes()[:100]),
     r"arc_weights\.npz: damaged or truncated"),
    (lambda d: (d / "label_weights.npz").write_bytes(b""), r"label_weights\.npz: empty file"),
    (lambda d: (d / "label_weights.npz").unlink(), r"label_weights\.npz: missing"),
    (lambda d: (d / "cfg").write_text("{not json"), r"cfg: not valid JSON"),
    (lambda d: (d / "arc_weights.npz").write_bytes(b"PK\x03\x04 not a zip at all"),
     r"arc_weights\.npz: damaged or truncated"),
])
def test_damaged_model_files_give_one_clear_error(overfitted, tmp_path, damage, message):
    nlp, _ = overfitted
    nlp.to_disk(tmp_path / "model")
    damage(tmp_path / "model" / "mst_parser")
    with pytest.raises(ModelDataError, match=message) as info:
        spacy.load(tmp_path / "model")
    assert "\n" not in str(info.value)
    assert "mst_parser" in str(info.value)


def test_foreign_bytes_are_refused(overfitted):
    _, parser = overfitted
    with pytest.raises(ModelDataError, match="not a serialized component"):
        parser.from_bytes(b"\x00\x01 certainly not msgpack of a parser")


# What each model format saves. A change of the saved parts, of the cfg's keys
# or of the feature settings' keys is a new format: bump FORMAT_VERSION and add
# its row here (older formats are refused until the first release).
SAVED_FORMATS = {
    10: {
        "parts": {"cfg", "arc_weights.npz", "label_weights.npz", "label_restrictions.npz",
                  "arc_filter.npz"},
        "cfg": {"calibration", "decoder", "feature_choice", "feature_report", "features",
                "filter_arcs", "final_tags", "final_to_root", "format_version", "keep_heads",
                "label_buckets", "label_temperature", "labeler_version", "labels",
                "max_sentence_length", "n_best", "n_threads", "nonprojective_threshold", "order",
                "parallel_batch", "probabilities", "quantize_weights", "replicas",
                "resolved_decoder", "root_label", "spacy_mstparse_version", "temperature"},
        "features": {"cluster_bits", "direction_backoff", "lemma", "n_buckets", "sibling_stops",
                     "supertags", "tag_columns", "use_morph"},
    },
    # 9: the arc filter (arc_filter.npz, filter_arcs)
    9: {
        "parts": {"cfg", "arc_weights.npz", "label_weights.npz", "label_restrictions.npz",
                  "arc_filter.npz"},
        "cfg": {"calibration", "decoder", "feature_choice", "feature_report", "features",
                "filter_arcs", "format_version", "keep_heads", "label_buckets",
                "label_temperature", "labeler_version", "labels", "max_sentence_length",
                "n_best", "n_threads", "nonprojective_threshold", "order", "parallel_batch",
                "probabilities", "quantize_weights", "replicas", "resolved_decoder",
                "root_label", "spacy_mstparse_version", "temperature"},
        "features": {"cluster_bits", "direction_backoff", "lemma", "n_buckets", "sibling_stops",
                     "supertags", "tag_columns", "use_morph"},
    },
    # 8: calibration (label temperature, record), keep_heads and, with
    # quantize_weights, weight archives of 8-bit codes + codebook
    8: {
        "parts": {"cfg", "arc_weights.npz", "label_weights.npz", "label_restrictions.npz"},
        "cfg": {"calibration", "decoder", "feature_choice", "feature_report", "features",
                "format_version", "keep_heads", "label_buckets", "label_temperature",
                "labeler_version", "labels", "max_sentence_length", "n_best", "n_threads",
                "nonprojective_threshold", "order", "parallel_batch", "probabilities",
                "quantize_weights", "replicas", "resolved_decoder", "root_label",
                "spacy_mstparse_version", "temperature"},
        "features": {"cluster_bits", "direction_backoff", "lemma", "n_buckets", "sibling_stops",
                     "supertags", "tag_columns", "use_morph"},
    },
    7: {
        "parts": {"cfg", "arc_weights.npz", "label_weights.npz", "label_restrictions.npz"},
        "cfg": {"calibration", "decoder", "feature_choice", "feature_report", "features",
                "format_version", "label_buckets", "label_temperature", "labeler_version",
                "labels", "max_sentence_length", "n_best", "n_threads",
                "nonprojective_threshold", "order", "parallel_batch", "probabilities",
                "quantize_weights", "replicas", "resolved_decoder", "root_label",
                "spacy_mstparse_version", "temperature"},
        "features": {"cluster_bits", "direction_backoff", "lemma", "n_buckets", "sibling_stops",
                     "supertags", "tag_columns", "use_morph"},
    },
    6: {
        "parts": {"cfg", "arc_weights.npz", "label_weights.npz", "label_restrictions.npz"},
        "cfg": {"decoder", "feature_choice", "feature_report", "features", "format_version",
                "label_buckets", "labeler_version", "labels", "max_sentence_length", "n_best",
                "n_threads", "nonprojective_threshold", "order", "parallel_batch",
                "probabilities", "quantize_weights", "replicas", "resolved_decoder",
                "root_label", "spacy_mstparse_version", "temperature"},
        "features": {"cluster_bits", "direction_backoff", "lemma", "n_buckets", "sibling_stops",
                     "supertags", "tag_columns", "use_morph"},
    },
    5: {
        "parts": {"cfg", "arc_weights.npz", "label_weights.npz", "label_restrictions.npz"},
        "cfg": {"decoder", "features", "format_version", "label_buckets", "labeler_version",
                "labels", "max_sentence_length", "n_best", "n_threads",
                "nonprojective_threshold", "order", "parallel_batch", "probabilities",
                "quantize_weights", "replicas", "resolved_decoder", "root_label",
                "spacy_mstparse_version", "temperature"},
        "features": {"cluster_bits", "direction_backoff", "n_buckets", "sibling_stops",
                     "supertags", "tag_columns", "use_morph"},
    },
}

# 11: the cluster row without in-between and surrounding-tag templates (the
# same parts as 10, other weights)
SAVED_FORMATS[11] = SAVED_FORMATS[10]


def test_saved_model_is_the_current_format(overfitted):
    """Fails when what is saved changes without a new FORMAT_VERSION."""
    _, parser = overfitted
    expected = SAVED_FORMATS[FORMAT_VERSION]
    parts = srsly.msgpack_loads(parser.to_bytes())
    cfg = srsly.json_loads(parts["cfg"])
    assert set(parts) == expected["parts"]
    assert set(cfg) == expected["cfg"]
    assert set(cfg["features"]) == expected["features"]
    assert cfg["format_version"] == FORMAT_VERSION


def test_quantized_weight_archive_round_trip_and_damage():
    """quantize_weights saves the non-zero weights' 8-bit codes: loading
    gives the codebook values quantize() stands for (which quantize again
    exactly), smaller than float values; bad codes are named."""
    from spacy_mstparse.components import serialization as ser
    from spacy_mstparse.features.weights import quantize

    rng = numpy.random.default_rng(0)
    w = (rng.normal(size=50_000) * (rng.random(50_000) < 0.3)).astype("float32")
    data = ser.dump_weight_vector(w, quantized=True)
    back = ser.load_weight_vector({"arc_weights.npz": data}, "arc_weights", lambda n: n)
    expected = quantize(w).dequantize()
    assert numpy.array_equal(back, expected)
    assert numpy.array_equal(quantize(back).dequantize(), back)   # exact once loaded
    assert len(data) < len(ser.dump_weight_vector(w)) / 2
    # the codes prediction reads (quantized already) are saved as the same archive
    assert ser.dump_weight_vector(quantize(w), quantized=True) == data
    with pytest.raises(ValueError, match="8-bit weights"):
        ser.dump_weight_vector(quantize(w))
    # The archive is deflated: smaller than the same arrays stored, and every
    # member compressed.
    arrays = ser.load_arrays(data, "x", ("codes",))
    assert len(data) < len(ser.dump_arrays(**arrays))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert {m.compress_type for m in archive.infolist()} == {zipfile.ZIP_DEFLATED}
    arrays["codes"][0] = 0   # code 0 stands for an exact 0: not a stored value
    with pytest.raises(ModelDataError, match="arc_weights.npz: 8-bit weights"):
        ser.load_weight_vector({"arc_weights.npz": ser.dump_arrays(**arrays)}, "arc_weights",
                               lambda n: n)


def test_compacted_weights_are_saved_and_loaded_as_predicted(tmp_path):
    """arc_density / label_density / weight_levels: the parser predicts with
    and saves the compacted weights (at most that share of each table
    non-zero, at most 2 * levels distinct values); loaded, it has the same
    weights and parses the same; the saved cfg is the format's (the
    compaction is in the weights and config.cfg)."""
    nlp = spacy.blank("en")
    config = {**SMALL, "quantize_weights": True, "arc_density": 0.05, "label_density": 0.02,
              "weight_levels": 7}
    parser = nlp.add_pipe("mst_parser", config=config)
    train = examples(nlp)
    nlp.initialize(lambda: train)
    for _ in range(30):
        parser.update(train)
    docs = [tagged(nlp.vocab, text, pos) for text, pos, _, _ in TRAIN]
    expected = parses(nlp, [nlp(d.copy()) for d in docs])
    arc, label = parser.prediction_weights()
    assert 0 < numpy.count_nonzero(arc) <= 0.05 * arc.shape[0]
    assert 0 < numpy.count_nonzero(label) <= 0.02 * label.shape[0]
    for w in (arc, label):
        assert numpy.unique(w[w != 0]).shape[0] <= 14
    full = parser.trainer.prediction_weights()[0]   # training keeps the full table
    assert numpy.count_nonzero(full) > numpy.count_nonzero(arc)
    nlp.to_disk(tmp_path / "model")
    cfg = srsly.read_json(tmp_path / "model" / "mst_parser" / "cfg")
    assert set(cfg) == SAVED_FORMATS[FORMAT_VERSION]["cfg"]
    loaded = spacy.load(tmp_path / "model")
    graph = loaded.get_pipe("mst_parser").graph
    assert graph.compaction == (0.05, 0.02, 7)
    assert numpy.array_equal(graph.arc_weights, arc)
    assert numpy.array_equal(graph.label_weights, label)
    assert parses(loaded, [loaded(tagged(loaded.vocab, t, p)) for t, p, _, _ in TRAIN]) == expected
    # the same component loaded without compaction settings has the saved weights too
    plain = spacy.blank("en").add_pipe("mst_parser", config={**SMALL, "quantize_weights": True})
    plain.from_disk(tmp_path / "model" / "mst_parser")
    assert numpy.array_equal(plain.graph.arc_weights, arc)
