"""The mst_tagger component: trained at initialize on the bundled EWT
sample, jackknifed tags for the training docs, serialization, bad files."""
import numpy as np
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_mstparse.components.serialization import ModelDataError
from spacy_mstparse.corpus.conll import read_conllu

N_TRAIN = 400


def examples_of(path, nlp, n=None):
    out = []
    for ref in read_conllu(path, nlp.vocab):
        out.append(Example(Doc(nlp.vocab, words=[t.text for t in ref]), ref))
        if n is not None and len(out) == n:
            break
    return out


def accuracy(pairs):
    pairs = list(pairs)
    return sum(a == b for a, b in pairs) / len(pairs)


@pytest.fixture(scope="module")
def tagger_nlp(sample_train):
    nlp = spacy.blank("en")
    nlp.add_pipe("mst_tagger", config={"epochs": 5, "folds": 4, "n_buckets": 1 << 18})
    train = examples_of(sample_train, nlp, N_TRAIN)
    nlp.initialize(lambda: train)
    return nlp, train


def test_tags_unseen_sentences(tagger_nlp, sample_dev):
    nlp, _ = tagger_nlp
    tagger = nlp.get_pipe("mst_tagger")
    assert tagger.report["predicts"] == ["UPOS", "XPOS", "FEATS"]   # EWT: XPOS says more
    dev = examples_of(sample_dev, nlp)
    docs = list(nlp.pipe(eg.predicted for eg in dev))
    gold = [eg.reference for eg in dev]
    upos = accuracy((t.pos_, g.pos_) for d, r in zip(docs, gold) for t, g in zip(d, r))
    xpos = accuracy((t.tag_, g.tag_) for d, r in zip(docs, gold) for t, g in zip(d, r))
    feats = accuracy((str(t.morph), str(g.morph)) for d, r in zip(docs, gold) for t, g in zip(d, r))
    # 400 sentences of training: a unigram tagger gets about 80% UPOS
    assert upos > 0.85 and xpos > 0.83 and feats > 0.85, (upos, xpos, feats)
    scores = nlp.evaluate([Example(d, eg.reference) for d, eg in zip(docs, dev)])
    assert scores["pos_acc"] == pytest.approx(upos)
    assert scores["tag_acc"] == pytest.approx(xpos)
    assert 0 < scores["morph_acc"] <= 1 and "Number" in scores["morph_per_feat"]


def test_training_docs_get_jackknifed_tags(tagger_nlp, tmp_path):
    nlp, train = tagger_nlp
    # what spacy train's annotating step gives the parser on the training docs
    during = [nlp.get_pipe("mst_tagger")(Doc(nlp.vocab, words=[t.text for t in eg.reference]))
              for eg in train]
    nlp.to_disk(tmp_path / "p")
    loaded = spacy.load(tmp_path / "p")
    after = [loaded(Doc(loaded.vocab, words=[t.text for t in eg.reference])) for eg in train]
    gold = [eg.reference for eg in train]
    jackknifed = accuracy((t.pos_, g.pos_) for d, r in zip(during, gold) for t, g in zip(d, r))
    own = accuracy((t.pos_, g.pos_) for d, r in zip(after, gold) for t, g in zip(d, r))
    # the final tagger has learned its training docs; the jackknifed tags are
    # those of taggers that never saw them, as on new text
    assert own > 0.97 and jackknifed < own - 0.03, (jackknifed, own)


def test_fold_taggers_train_fold_epochs_passes(sample_train):
    """The jackknifed tags come from fold taggers of ``fold_epochs`` passes
    (at most ``epochs``), whatever the kept tagger's ``epochs``."""
    def training_tags(epochs, fold_epochs):
        nlp = spacy.blank("en")
        nlp.add_pipe("mst_tagger", config={"epochs": epochs, "folds": 3,
                                           "fold_epochs": fold_epochs, "n_buckets": 1 << 16})
        train = examples_of(sample_train, nlp, 150)
        nlp.initialize(lambda: train)
        tagger = nlp.get_pipe("mst_tagger")
        return [[(t.pos_, t.tag_, str(t.morph)) for t in
                 tagger(Doc(nlp.vocab, words=[t.text for t in eg.reference]))] for eg in train]

    one_pass = training_tags(1, 1)
    assert training_tags(4, 1) == one_pass
    assert training_tags(1, 5) == one_pass          # capped at epochs
    assert training_tags(4, 4) != one_pass


def test_fold_share_blends_the_fold_taggers_into_the_kept_weights(sample_train):
    """fold_share 0 keeps the tagger trained on every doc; fold_share s keeps
    (1 - s) of its weights plus s of the fold taggers' mean."""
    from spacy_mstparse.tagging.training import TaggedSentence, train_model
    from spacy_mstparse.tagging.word_attributes import word_attributes

    def kept(share):
        nlp = spacy.blank("en")
        nlp.add_pipe("mst_tagger", config={"epochs": 3, "folds": 3, "fold_epochs": 2,
                                           "fold_share": share, "n_buckets": 1 << 16})
        train = examples_of(sample_train, nlp, 120)
        nlp.initialize(lambda: train)
        return nlp.get_pipe("mst_tagger")

    alone, half, folds_only = kept(0.0), kept(0.5), kept(1.0)
    refs = [eg.reference for eg in examples_of(sample_train, spacy.blank("en"), 120)]
    sentences = [TaggedSentence(word_attributes([t.text for t in d]), *alone.inventory.encode(
        [t.pos_ for t in d], [t.tag_ for t in d], [str(t.morph) for t in d])) for d in refs]
    full, _ = train_model(alone.inventory, sentences, 3, 1 << 16, 0)
    np.testing.assert_array_equal(alone.model.weights, full.weights)
    np.testing.assert_allclose(half.model.weights,
                               0.5 * alone.model.weights + 0.5 * folds_only.model.weights,
                               rtol=1e-5, atol=1e-6)
    assert not np.allclose(half.model.weights, alone.model.weights)
    nlp = spacy.blank("en")
    with pytest.raises(Exception, match="fold_share"):
        nlp.add_pipe("mst_tagger", config={"fold_share": 1.5})


def test_serialization_round_trip(tagger_nlp, sample_dev, tmp_path):
    nlp, _ = tagger_nlp
    words = [t.text for t in next(iter(read_conllu(sample_dev, nlp.vocab)))]
    want = nlp(Doc(nlp.vocab, words=words))
    nlp.get_pipe("mst_tagger").to_disk(tmp_path / "t")
    for restored in (
        spacy.blank("en").add_pipe("mst_tagger").from_disk(tmp_path / "t"),
        spacy.blank("en").add_pipe("mst_tagger").from_bytes(nlp.get_pipe("mst_tagger").to_bytes()),
    ):
        got = restored(Doc(restored.vocab, words=words))
        assert [(t.pos_, t.tag_, str(t.morph)) for t in got] == \
               [(t.pos_, t.tag_, str(t.morph)) for t in want]
        assert restored.cfg["n_buckets"] == 1 << 18


def test_damaged_files_name_the_file(tagger_nlp, tmp_path):
    nlp, _ = tagger_nlp
    path = tmp_path / "t"
    nlp.get_pipe("mst_tagger").to_disk(path)
    (path / "weights.npz").write_bytes(b"not an archive")
    with pytest.raises(ModelDataError, match="weights.npz"):
        spacy.blank("en").add_pipe("mst_tagger").from_disk(path)
    nlp.get_pipe("mst_tagger").to_disk(path)
    (path / "lexicon.npz").unlink()
    with pytest.raises(ModelDataError, match="lexicon.npz: missing"):
        spacy.blank("en").add_pipe("mst_tagger").from_disk(path)
    (path / "cfg").write_text('{"format_version": 99}')
    with pytest.raises(ModelDataError, match="tagger format 99"):
        spacy.blank("en").add_pipe("mst_tagger").from_disk(path)


def test_errors_before_training_and_without_tags():
    nlp = spacy.blank("en")
    tagger = nlp.add_pipe("mst_tagger")
    with pytest.raises(ValueError, match="not initialized"):
        tagger(Doc(nlp.vocab, words=["a"]))
    untagged = [Example(Doc(nlp.vocab, words=["a", "b"]), Doc(nlp.vocab, words=["a", "b"]))]
    with pytest.raises(ValueError, match=r"\[mst_tagger\] no training word has a UPOS"):
        nlp.initialize(lambda: untagged)
    with pytest.raises(Exception, match="power of two"):
        spacy.blank("en").add_pipe("mst_tagger", config={"n_buckets": 1000})


def test_treebank_without_feats_or_xpos(sample_train, sample_dev, tmp_path):
    # a treebank with UPOS only (no FEATS, no XPOS: as in several UD languages)
    # trains a UPOS-only tagger that tags, saves and loads
    nlp = spacy.blank("xx")
    nlp.add_pipe("mst_tagger", config={"epochs": 3, "folds": 2, "n_buckets": 1 << 16})

    def upos_only(examples):
        out = []
        for eg in examples:
            ref = Doc(nlp.vocab, words=[t.text for t in eg.reference],
                      pos=[t.pos_ for t in eg.reference])
            out.append(Example(Doc(nlp.vocab, words=[t.text for t in ref]), ref))
        return out

    train = upos_only(examples_of(sample_train, nlp, 150))
    nlp.initialize(lambda: train)
    tagger = nlp.get_pipe("mst_tagger")
    assert tagger.report["predicts"] == ["UPOS"]
    dev = upos_only(examples_of(sample_dev, nlp, 50))
    docs = list(nlp.pipe(eg.predicted for eg in dev))
    upos = accuracy((t.pos_, g.pos_) for d, eg in zip(docs, dev) for t, g in zip(d, eg.reference))
    assert upos > 0.75 and all(str(t.morph) == "" for d in docs for t in d)
    nlp.to_disk(tmp_path / "nlp")
    again = spacy.load(tmp_path / "nlp")
    assert [t.pos_ for t in again(Doc(again.vocab, words=[t.text for t in dev[0].reference]))] \
        == [t.pos_ for t in docs[0]]


# A toy inflected language for the FEATS guesser: a noun is a stem and a case
# ending (-a Nom, -u Acc, -em Ins); its gender belongs to the stem and is
# written nowhere in its form. The stems share their first three letters and
# their last two with stems of the other gender, so neither a prefix nor an
# ending of the form tells the gender: only the training forms of the same
# stem do (the guesser's stem guess).
GUESS_HEADS = ["bak", "dor", "mil", "tup", "sen", "kav"]
GUESS_TAILS = ["ot", "il", "en", "as", "ur", "ek"]
GUESS_ENDINGS = [("a", "Nom"), ("u", "Acc"), ("em", "Ins")]


def guess_lexicon():
    rng = np.random.default_rng(7)
    stems = [h + t for h in GUESS_HEADS for t in GUESS_TAILS]
    genders = {s: "Fem" if g else "Masc" for s, g in zip(stems, rng.permutation(
        [0, 1] * (len(stems) // 2)))}
    # each stem is trained with two of its three forms; the third is new at test time
    held_out = {s: int(rng.integers(3)) for s in stems}
    return stems, genders, held_out


def guess_doc(vocab, stem, gender, k):
    ending, case = GUESS_ENDINGS[k]
    return Doc(vocab, words=["ta", stem + ending], pos=["DET", "NOUN"],
               morphs=["PronType=Dem", f"Case={case}|Gender={gender}|Number=Sing"])


def test_guesser_gives_the_gender_of_an_unseen_form_from_its_stem(tmp_path):
    nlp = spacy.blank("xx")
    nlp.add_pipe("mst_tagger", config={"epochs": 5, "folds": 1, "n_buckets": 1 << 16})
    stems, genders, held_out = guess_lexicon()
    train = [Example(Doc(nlp.vocab, words=[t.text for t in ref]), ref)
             for _ in range(3) for s in stems for k in range(3) if k != held_out[s]
             for ref in [guess_doc(nlp.vocab, s, genders[s], k)]]
    nlp.initialize(lambda: train)
    trained = {t.text for eg in train for t in eg.reference}
    tests = [guess_doc(nlp.vocab, s, genders[s], held_out[s]) for s in stems]
    assert not {d[1].text for d in tests} & trained
    tagged = [nlp(Doc(nlp.vocab, words=[t.text for t in d])) for d in tests]
    morph = accuracy((str(t[1].morph), str(d[1].morph)) for t, d in zip(tagged, tests))
    # without the stem guess, the gender of a new form is a coin toss
    assert morph > 0.9, morph
    nlp.to_disk(tmp_path / "nlp")
    again = spacy.load(tmp_path / "nlp")
    assert [str(again(Doc(again.vocab, words=[t.text for t in d]))[1].morph) for d in tests] \
        == [str(t[1].morph) for t in tagged]


def positional_tag(pos, morph):
    """An XPOS spelling out UPOS, case and gender, as Czech's tags do."""
    feats = dict(f.split("=") for f in morph.split("|")) if "=" in morph else {}
    return pos[0] + feats.get("Case", "-")[0] + feats.get("Gender", "-")[0]


def test_xpos_agrees_with_the_upos_and_feats_predicted(tmp_path):
    nlp = spacy.blank("xx")
    nlp.add_pipe("mst_tagger", config={"epochs": 5, "folds": 2, "n_buckets": 1 << 16})
    stems, genders, held_out = guess_lexicon()

    def with_xpos(doc):
        tags = [positional_tag(t.pos_, str(t.morph)) for t in doc]
        return Doc(nlp.vocab, words=[t.text for t in doc], pos=[t.pos_ for t in doc], tags=tags,
                   morphs=[str(t.morph) for t in doc])
    train = [Example(Doc(nlp.vocab, words=[t.text for t in ref]), ref)
             for s in stems for k in range(3) if k != held_out[s]
             for ref in [with_xpos(guess_doc(nlp.vocab, s, genders[s], k))]]
    nlp.initialize(lambda: train)
    tagger = nlp.get_pipe("mst_tagger")
    assert tagger.report["predicts"] == ["UPOS", "XPOS", "FEATS"]
    assert tagger.report["xpos_of_feats_share"] == 1.0 and tagger.inventory.xpos_of_feats
    seen = {(t.pos_, str(t.morph)) for eg in train for t in eg.reference}
    tests = [with_xpos(guess_doc(nlp.vocab, s, genders[s], held_out[s])) for s in stems]
    tagged = [nlp(Doc(nlp.vocab, words=[t.text for t in d])) for d in tests]
    words = [t for d in tagged for t in d if (t.pos_, str(t.morph)) in seen]
    assert len(words) > len(tests)
    assert all(t.tag_ == positional_tag(t.pos_, str(t.morph)) for t in words)
    nlp.to_disk(tmp_path / "nlp")
    again = spacy.load(tmp_path / "nlp")
    assert again.get_pipe("mst_tagger").inventory.xpos_of_feats == tagger.inventory.xpos_of_feats
    assert [[t.tag_ for t in again(Doc(again.vocab, words=[t.text for t in d]))] for d in tests] \
        == [[t.tag_ for t in d] for d in tagged]


def test_tiny_treebank_with_feats():
    # three sentences: no ending has the support to guess from; the tagger
    # still learns and tags
    nlp = spacy.blank("xx")
    nlp.add_pipe("mst_tagger", config={"epochs": 3, "folds": 2, "n_buckets": 1 << 12})
    stems, genders, _ = guess_lexicon()
    train = [Example(Doc(nlp.vocab, words=[t.text for t in ref]), ref)
             for s in stems[:3] for ref in [guess_doc(nlp.vocab, s, genders[s], 0)]]
    nlp.initialize(lambda: train)
    doc = nlp(Doc(nlp.vocab, words=["ta", stems[0] + "a", "nove"]))
    assert [t.pos_ for t in doc[:2]] == ["DET", "NOUN"] and doc[1].morph.get("Case") == ["Nom"]


def test_old_tagger_format_is_refused_clearly(tagger_nlp, tmp_path):
    nlp, _ = tagger_nlp
    path = tmp_path / "t"
    nlp.get_pipe("mst_tagger").to_disk(path)
    (path / "guesser.npz").unlink()
    with pytest.raises(ModelDataError, match="guesser.npz: missing"):
        spacy.blank("en").add_pipe("mst_tagger").from_disk(path)
    (path / "cfg").write_text('{"format_version": 1, "spacy_mstparse_version": "0.9"}')
    with pytest.raises(ModelDataError, match="tagger format 1 .*retrain"):
        spacy.blank("en").add_pipe("mst_tagger").from_disk(path)
