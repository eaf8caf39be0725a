"""The arcstandard_svm component: training, prediction, non-projective
output, stopping rule, serialization, edge cases."""
import pickle
from pathlib import Path

import numpy
import pytest
import spacy
import srsly
from spacy.tokens import Doc
from spacy.training import Example

from spacy_mstparse.components.arcstandard_gold import lift
from spacy_mstparse.components.arcstandard_svm import FORMAT_VERSION
from spacy_mstparse.components.serialization import ModelDataError
from spacy_mstparse.corpus.conll import read_conllu
from spacy_mstparse.corpus.readers import gold_annotated_doc
from spacy_mstparse.decoders.trees import is_projective, is_valid_tree

SAMPLE = Path(__file__).resolve().parents[1] / "assets" / "en_ewt_sample"
SMALL = {"n_buckets": 2**14, "rare_word_cutoff": 1, "lam": 1e-4, "min_lifted_label_count": 1}


def make(nlp, config=None):
    return nlp.add_pipe("arcstandard_svm", config={**SMALL, **(config or {})})


def examples(nlp, path, limit):
    docs = list(read_conllu(path, nlp.vocab))[:limit]
    return [Example(gold_annotated_doc(Example(d, d)), d) for d in docs]


def train(parser, exs, epochs, batch=16, seed=0):
    rng = numpy.random.RandomState(seed)
    history = []
    for _ in range(epochs):
        losses = {}
        order = rng.permutation(len(exs))
        for i in range(0, len(order), batch):
            parser.update([exs[j] for j in order[i : i + batch]], losses=losses)
        history.append(losses[parser.name])
    return history


def sent_heads(doc):
    """Per sentence: heads with the root at 0 (the trees module convention)."""
    out = []
    for sent in doc.sents:
        out.append(
            [-1] + [0 if t.head.i == t.i else t.head.i - sent.start + 1 for t in sent]
        )
    return out


def parses(nlp, docs):
    return [[(t.head.i, t.dep_) for t in d] for d in nlp.pipe([d.copy() for d in docs])]


@pytest.fixture(scope="module")
def trained():
    nlp = spacy.blank("en")
    parser = make(nlp, {"delta": 0.0})
    exs = examples(nlp, SAMPLE / "train.conllu", 400)
    nlp.initialize(lambda: exs)
    history = train(parser, exs, 5)
    gold = list(read_conllu(SAMPLE / "dev.conllu", nlp.vocab))
    docs = [gold_annotated_doc(Example(d, d)) for d in gold]
    return nlp, parser, exs, history, gold, docs


def test_learns_and_beats_trivial_baselines(trained):
    nlp, parser, exs, history, gold, docs = trained
    assert history[-1] < 0.5 * history[0], history
    predicted = list(nlp.pipe([d.copy() for d in docs]))
    scores = parser.score([Example(p, g) for p, g in zip(predicted, gold)])
    # trivial baselines on the same dev sentences, every word counted:
    # attach each word to its right / left neighbour (last / first to root)
    n = right = left = 0
    for g in gold:
        for sent in g.sents:
            for t in sent:
                n += 1
                h = t.head.i
                right += h == (t.i + 1 if t.i + 1 < sent.end else t.i)
                left += h == (t.i - 1 if t.i > sent.start else t.i)
    baseline = max(right, left) / n
    assert scores["dep_uas_with_punct"] > baseline + 0.25, (scores, baseline)
    assert scores["dep_uas"] > 0.55
    assert scores["dep_las"] > 0.45
    # every sentence is one tree with one root word labeled with the root label
    for doc in predicted:
        for sent, heads in zip(doc.sents, sent_heads(doc)):
            assert is_valid_tree(numpy.array(heads))
            roots = [t for t in sent if t.head.i == t.i]
            assert len(roots) == 1 and roots[0].dep_ == parser.inventory["root_label"]


def test_deprojectivized_output_restores_nonprojective_trees(trained):
    """Lifted gold trees (decorated labels), written as predictions, come out
    as the original non-projective trees after deprojectivization."""
    nlp, parser, exs, *_ = trained
    n_nonproj = restored = 0
    for eg in exs:
        ref = eg.reference
        for sent in ref.sents:
            heads = numpy.array(sent_heads(ref[sent.start : sent.end].as_doc())[0], dtype="int32")
            if is_projective(heads):
                continue
            n_nonproj += 1
            deps = [""] + [t.dep_ for t in sent]
            lifted, decorated = lift(heads, deps)
            doc = Doc(nlp.vocab, words=[t.text for t in sent])
            n = len(sent)
            relative = numpy.array([0 if lifted[i] == 0 else lifted[i] - i for i in range(1, n + 1)])
            rows = numpy.zeros((n, 2), dtype="uint64")
            rows[:, 0] = relative.astype("int64").astype("uint64")
            rows[:, 1] = [nlp.vocab.strings.add(d) for d in decorated[1:]]
            parser.set_annotations([doc], [([(0, n)], (rows, True))])
            got = numpy.array(sent_heads(doc)[0], dtype="int32")
            assert not any("||" in t.dep_ for t in doc)
            restored += numpy.array_equal(got, heads)
    assert n_nonproj >= 5
    assert restored >= 0.8 * n_nonproj


def test_lift_setting_and_drop_setting(trained):
    nlp, parser, exs, *_ = trained
    assert parser.inventory["n_nonprojective_trees"] > 0
    assert any("||" in label for label in parser.labels)
    nlp2 = spacy.blank("en")
    dropper = make(nlp2, {"nonprojective": "drop"})
    exs2 = examples(nlp2, SAMPLE / "train.conllu", 400)
    nlp2.initialize(lambda: exs2)
    assert not any("||" in label for label in dropper.labels)
    # rare decorated labels fall back to the plain label of the lifted arc
    nlp3 = spacy.blank("en")
    plain = make(nlp3, {"min_lifted_label_count": 10**6})
    nlp3.initialize(lambda: examples(nlp3, SAMPLE / "train.conllu", 400))
    assert not any("||" in label for label in plain.labels)
    assert plain.inventory["epoch_configs"] == parser.inventory["epoch_configs"]
    assert dropper.inventory["n_train_trees"] == parser.inventory["n_train_trees"] - parser.inventory["n_nonprojective_trees"]
    assert dropper.inventory["epoch_configs"] < parser.inventory["epoch_configs"]


def test_initialization_statistics(trained):
    nlp, parser, exs, *_ = trained
    cfg, inventory = parser.cfg, parser.inventory
    # epoch size = 2n - 1 oracle configurations per training sentence
    n_words = sum(len(s) for eg in exs for s in eg.reference.sents)
    n_sents = sum(1 for eg in exs for _ in eg.reference.sents)
    assert inventory["epoch_configs"] == 2 * n_words - n_sents
    # the cut-off: with 1 every training word is known, with a huge one none
    assert inventory["vocab_size"] == len({t.lower for eg in exs for t in eg.reference})
    # valence: average left / right dependents per word form, recounted
    # here over the projective trees (the "drop" setting uses only those)
    nlp_d = spacy.blank("en")
    dropper = make(nlp_d, {"nonprojective": "drop"})
    exs_d = examples(nlp_d, SAMPLE / "train.conllu", 150)
    nlp_d.initialize(lambda: exs_d)
    seen, n_left, n_right = {}, {}, {}
    for eg in exs_d:
        for sent in eg.reference.sents:
            heads = numpy.array(sent_heads(sent.as_doc())[0])
            if not is_projective(heads):
                continue
            for t in sent:
                seen[t.lower_] = seen.get(t.lower_, 0) + 1
                n_left[t.lower_] = n_left.get(t.lower_, 0) + sum(1 for c in t.lefts)
                n_right[t.lower_] = n_right.get(t.lower_, 0) + sum(1 for c in t.rights)
    for word in ("the", "is", "have", "said", "."):
        i = numpy.searchsorted(dropper.vocabulary, nlp_d.vocab.strings[word])
        assert dropper.vocabulary[i] == nlp_d.vocab.strings[word]
        assert dropper.valence[:, i].tolist() == pytest.approx(
            [n_left[word] / seen[word], n_right[word] / seen[word]]
        )
    assert len(parser.word_pairs) <= cfg["word_pair_limit"]
    nlp2 = spacy.blank("en")
    p2 = make(nlp2, {"rare_word_cutoff": 10**6, "word_pair_limit": 3})
    exs2 = examples(nlp2, SAMPLE / "train.conllu", 50)
    nlp2.initialize(lambda: exs2)
    # every word is UNK: the only pairs are (ROOT, UNK) and (UNK, UNK)
    assert p2.inventory["vocab_size"] == 0 and len(p2.word_pairs) == 2
    assert p2.classes[0] == ("SHIFT", None)
    assert ("RIGHT-ARC", "ROOT") in p2.classes and ("LEFT-ARC", "ROOT") not in p2.classes


def test_stopping_rule_freezes_training():
    nlp = spacy.blank("en")
    parser = make(nlp, {"delta": 0.5})  # any epoch after the first converges
    exs = examples(nlp, SAMPLE / "train.conllu", 60)
    nlp.initialize(lambda: exs)
    train(parser, exs, 1)
    assert parser.progress["epochs_done"] == 1 and not parser.converged
    train(parser, exs, 1)
    assert parser.converged and len(parser.progress["error_history"]) == 2
    before = parser.svm.table.copy(), parser.svm.t
    losses = parser.update(exs[:10])
    assert losses[parser.name] == 0
    assert numpy.array_equal(parser.svm.table, before[0]) and parser.svm.t == before[1]


def test_serialization_round_trips(trained, tmp_path):
    nlp, parser, exs, history, gold, docs = trained
    docs = docs[:60]
    expected = parses(nlp, docs)
    nlp2 = spacy.blank("en")
    make(nlp2, {"delta": 0.0}).from_bytes(parser.to_bytes())
    assert parses(nlp2, docs) == expected
    nlp.to_disk(tmp_path / "model")
    nlp3 = spacy.load(tmp_path / "model")
    assert parses(nlp3, docs) == expected
    nlp4 = pickle.loads(pickle.dumps(nlp))
    assert parses(nlp4, docs) == expected
    # training the loaded pipeline continues the step count (warm start)
    p3 = nlp3.get_pipe("arcstandard_svm")
    t = p3.svm.t
    p3.update(exs[:5])
    assert p3.svm.t > t
    # the saved format version is checked
    cfg_path = tmp_path / "model" / "arcstandard_svm" / "cfg"
    cfg = srsly.read_json(cfg_path)
    cfg["format_version"] = FORMAT_VERSION + 1
    srsly.write_json(cfg_path, cfg)
    with pytest.raises(ValueError, match="model format"):
        spacy.load(tmp_path / "model")


def test_edge_cases(trained):
    nlp, parser, exs, *_ = trained
    assert len(nlp(Doc(nlp.vocab, words=[]))) == 0
    doc = nlp(Doc(nlp.vocab, words=["Hello"], tags=["UH"]))
    assert doc[0].head.i == 0 and doc[0].dep_ == parser.inventory["root_label"]
    # unknown words and tags at predict time: still one tree per sentence
    words = ["Zyxwv", "qqq", "blorfed", "!"]
    doc = nlp(Doc(nlp.vocab, words=words, tags=["XX1", "XX2", "XX3", "XX4"]))
    heads = [-1] + [0 if t.head.i == t.i else t.head.i + 1 for t in doc]
    assert is_valid_tree(numpy.array(heads))
    # no sentence boundaries: split after sentence-final punctuation; long
    # sentences in chunks of max_sentence_length
    doc = nlp(Doc(nlp.vocab, words="I saw it . She left !".split(),
                  tags=["PRP", "VBD", "PRP", ".", "PRP", "VBD", "."]))
    assert [(s.start, s.end) for s in doc.sents] == [(0, 4), (4, 7)]
    n = 2 * parser.cfg["max_sentence_length"] + 7
    doc = nlp(Doc(nlp.vocab, words=["word"] * n, tags=["NN"] * n,
                  sent_starts=[True] + [False] * (n - 1)))
    assert sum(t.head.i == t.i for t in doc) == 3
    # docs without tags warn
    with pytest.warns(UserWarning, match="no TAG annotation"):
        make(spacy.blank("en")).from_bytes(parser.to_bytes())(
            Doc(nlp.vocab, words=["a", "b"])
        )


def test_unknown_label_in_update_is_skipped_with_a_warning(trained):
    nlp, parser, exs, *_ = trained
    eg = exs[0]
    ref = Doc(nlp.vocab).from_bytes(eg.reference.to_bytes())
    ref[1].dep_ = "made_up_label"
    t = parser.svm.t
    with pytest.warns(UserWarning, match="not seen at initialization"):
        parser.update([Example(Doc(nlp.vocab).from_bytes(eg.predicted.to_bytes()), ref)])
    assert parser.svm.t == t
    assert "made_up_label" not in parser.labels


def test_invalid_settings():
    for config, match in [
        ({"tag_column": "morph"}, "tag_column"),
        ({"nonprojective": "keep"}, "nonprojective"),
        ({"n_buckets": 1000}, "power of two"),
        ({"feature_groups": ["1w", "xx"]}, "feature_groups.*'xx' is not one of '1w'"),
        ({"word_distance": "log"}, "word_distance"),
    ]:
        with pytest.raises(ValueError, match=match):
            make(spacy.blank("en"), config)
    nlp = spacy.blank("en")
    make(nlp)
    with pytest.raises(ValueError, match="not initialized"):
        nlp(Doc(nlp.vocab, words=["a"]))


def test_cli_evaluate_and_parse(trained, tmp_path):
    """The CLI's evaluate and parse work on an arcstandard_svm pipeline and
    agree with the component's own parses."""
    from spacy_mstparse.corpus.conll import read_conllu
    from spacy_mstparse.evaluation import evaluate
    from spacy_mstparse.parsing import parse_file

    nlp, parser, exs, history, gold, docs = trained
    nlp.to_disk(tmp_path / "model")
    metrics = evaluate(tmp_path / "model", SAMPLE / "dev.conllu", gold_tags=True, progress=False)
    predicted = list(nlp.pipe([d.copy() for d in docs]))
    scores = parser.score([Example(p, g) for p, g in zip(predicted, gold)])
    assert metrics["uas_all"] == pytest.approx(100 * scores["dep_uas_with_punct"], abs=0.01)
    assert metrics["spacy_dep_uas"] == pytest.approx(100 * scores["dep_uas"], abs=0.01)
    assert metrics["parser_components"] == ["arcstandard_svm"]
    parse_file(tmp_path / "model", SAMPLE / "dev.conllu", tmp_path / "out.conllu",
               gold_tags=True, progress=False)
    out = list(read_conllu(tmp_path / "out.conllu", spacy.blank("en").vocab))
    assert [[t.head.i for t in d] for d in out] == [[t.head.i for t in d] for d in predicted]


# -- spaCy's test_overfitting_IO idiom, serialization table, damaged files -------

def tiny_examples(nlp, n=5):
    """The first n projective training sentences of 6-15 words."""
    out = []
    for eg in examples(nlp, SAMPLE / "train.conllu", 200):
        heads = numpy.array(sent_heads(eg.reference)[0], dtype="int32")
        if len(list(eg.reference.sents)) == 1 and 6 <= len(eg.reference) <= 15 and is_projective(heads):
            out.append(eg)
        if len(out) == n:
            break
    return out


def gold_parse(doc):
    return [(t.head.i, t.dep_) for t in doc]


@pytest.fixture(scope="module")
def overfitted():
    nlp = spacy.blank("en")
    parser = make(nlp, {"n_buckets": 2**12, "delta": 0.0, "lam": 1e-3})
    exs = tiny_examples(nlp)
    nlp.initialize(lambda: exs)
    docs = [eg.predicted for eg in exs]
    parser.update(exs[:1])  # one sentence seen: the others are not parsed right yet
    assert parses(nlp, docs) != [gold_parse(eg.reference) for eg in exs]
    for _ in range(100):
        parser.update(exs)
        if parses(nlp, docs) == [gold_parse(eg.reference) for eg in exs]:
            break
    return nlp, parser, exs, docs


def test_overfitting_parses_training_sentences_exactly(overfitted):
    nlp, parser, exs, docs = overfitted
    assert len(exs) == 5
    assert parses(nlp, docs) == [gold_parse(eg.reference) for eg in exs]
    assert parser.progress["svm_t"] == parser.svm.t > 0


def test_overfitted_round_trips_disk_bytes_and_pickle(overfitted, tmp_path):
    nlp, parser, exs, docs = overfitted
    expected = [gold_parse(eg.reference) for eg in exs]
    nlp.to_disk(tmp_path / "model")
    assert sorted(p.name for p in (tmp_path / "model" / "arcstandard_svm").iterdir()) == [
        "cfg", "lexicon.npz", "weights.npz"]
    assert parses(spacy.load(tmp_path / "model"), docs) == expected
    nlp2 = spacy.blank("en")
    make(nlp2, {"n_buckets": 2**12}).from_bytes(parser.to_bytes())
    assert parses(nlp2, docs) == expected
    assert parses(pickle.loads(pickle.dumps(nlp)), docs) == expected
    # the loaded components carry the same state
    loaded = nlp2.get_pipe("arcstandard_svm")
    assert loaded.inventory == parser.inventory and loaded.progress == parser.progress
    assert numpy.array_equal(loaded.prediction_weights(), parser.prediction_weights())
    assert numpy.array_equal(loaded.vocabulary, parser.vocabulary)
    # an uninitialized component pickles too
    fresh = make(spacy.blank("en"))
    copy = pickle.loads(pickle.dumps(fresh))
    assert not copy.is_initialized and copy.cfg == fresh.cfg


def test_pipe_batch_equals_one_doc_at_a_time(overfitted, trained):
    for nlp, docs in ((overfitted[0], overfitted[3]), (trained[0], trained[5][:40])):
        singles = [gold_parse(nlp(d.copy())) for d in docs]
        batched = [gold_parse(d) for d in nlp.get_pipe("arcstandard_svm").pipe(
            [d.copy() for d in docs], batch_size=7)]
        assert batched == singles


def test_exclude_is_honoured(overfitted, trained, tmp_path):
    nlp, parser, exs, docs = overfitted
    data = parser.to_bytes()
    # exclude=["cfg"] on load: settings, inventory and progress stay the
    # receiver's, the weights come from the bytes
    nlp2 = spacy.blank("en")
    receiver = make(nlp2, {"n_buckets": 2**12}).from_bytes(data)
    receiver.progress["epochs_done"] = 1234
    receiver.from_bytes(data, exclude=["cfg"])
    assert receiver.progress["epochs_done"] == 1234
    assert parses(nlp2, docs) == parses(nlp, docs)
    # exclude=["weights"] keeps the receiver's weights
    other = trained[1]
    other_copy = make(spacy.blank("en")).from_bytes(other.to_bytes())
    before = other_copy.prediction_weights().copy()
    other_copy.from_bytes(other.to_bytes(), exclude=["weights"])
    assert numpy.array_equal(other_copy.prediction_weights(), before)
    # on save, excluded parts are left out (by file name or its stem)
    no_cfg = parser.to_bytes(exclude=["cfg"])
    with pytest.raises(ModelDataError, match="'cfg'.*missing"):
        make(spacy.blank("en"), {"n_buckets": 2**12}).from_bytes(no_cfg)
    parser.to_disk(tmp_path / "c", exclude=["weights"])
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == ["cfg", "lexicon.npz"]
    with pytest.raises(ModelDataError, match="weights.npz: missing"):
        make(spacy.blank("en"), {"n_buckets": 2**12}).from_disk(tmp_path / "c")
    # spaCy's exclude=["vocab"] (the shared Vocab) drops no part
    parser.to_disk(tmp_path / "v", exclude=["vocab"])
    assert len(list((tmp_path / "v").iterdir())) == 3


def test_saved_weights_are_sparse(trained, tmp_path):
    """The weight table is stored as its non-zero entries: far smaller than
    the dense float32 table, and read back exactly."""
    nlp, parser, *_ = trained
    parser.to_disk(tmp_path / "c")
    dense = parser.prediction_weights()
    assert 0 < numpy.count_nonzero(dense) < dense.size / 4
    assert (tmp_path / "c" / "weights.npz").stat().st_size < dense.nbytes / 4
    loaded = make(spacy.blank("en"), {"delta": 0.0}).from_disk(tmp_path / "c")
    assert numpy.array_equal(loaded.prediction_weights(), dense)
    cfg = srsly.read_json(tmp_path / "c" / "cfg")
    assert cfg["format_version"] == FORMAT_VERSION == 2
    assert set(cfg["settings"]) == set(parser.cfg)
    assert cfg["inventory"]["labels"] == list(parser.labels)
    assert cfg["progress"]["svm_t"] == parser.progress["svm_t"] > 0


@pytest.mark.parametrize("damage, file_name, message", [
    ("truncate", "weights.npz", "damaged or truncated"),
    ("empty", "weights.npz", "empty file"),
    ("delete", "weights.npz", "missing"),
    ("truncate", "lexicon.npz", "damaged or truncated"),
    ("delete", "lexicon.npz", "missing"),
    ("bad_json", "cfg", "not valid JSON"),
    ("empty", "cfg", "empty file"),
    ("no_inventory", "cfg", "no 'inventory' object"),
])
def test_damaged_files_give_one_clear_error(overfitted, tmp_path, damage, file_name, message):
    nlp, *_ = overfitted
    nlp.to_disk(tmp_path / "model")
    path = tmp_path / "model" / "arcstandard_svm" / file_name
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "delete":
        path.unlink()
    elif damage == "bad_json":
        path.write_text('{"format_version": 2, "settings": ')
    else:
        cfg = srsly.read_json(path)
        del cfg["inventory"]
        srsly.write_json(path, cfg)
    with pytest.raises(ModelDataError) as info:
        spacy.load(tmp_path / "model")
    text = str(info.value)
    assert "\n" not in text and message in text
    assert str(path) in text


@pytest.mark.parametrize("version", [1, FORMAT_VERSION + 1])
def test_other_model_formats_are_refused_in_one_line(overfitted, tmp_path, version):
    """Before the first release only the current format loads: anything else,
    directory or bytes (the first format's bytes held the cfg as a msgpack
    map), gets one line saying to retrain."""
    nlp, parser, *_ = overfitted
    nlp.to_disk(tmp_path / "model")
    cfg_path = tmp_path / "model" / "arcstandard_svm" / "cfg"
    cfg = srsly.read_json(cfg_path)
    cfg["format_version"] = version
    srsly.write_json(cfg_path, cfg)
    with pytest.raises(ModelDataError) as info:
        spacy.load(tmp_path / "model")
    assert "\n" not in str(info.value)
    assert f"model format {version} " in str(info.value) and "retrain" in str(info.value)
    parts = srsly.msgpack_loads(parser.to_bytes())
    for saved in (srsly.json_dumps(cfg).encode("utf8"), cfg):
        parts["cfg"] = saved
        with pytest.raises(ModelDataError, match=f"model format {version} .*retrain"):
            parser.from_bytes(srsly.msgpack_dumps(parts))
