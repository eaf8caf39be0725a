"""The mst_lemmatizer component: spaCy's trainable_lemmatizer, which stays
off for a treebank without lemmas instead of stopping at initialize."""
import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from spacy_mstparse.corpus.conll import read_conllu


def examples(path, nlp, n, lemmas=True):
    out = []
    for ref in read_conllu(path, nlp.vocab):
        words = [t.text for t in ref]
        gold = Doc(nlp.vocab, words=words, lemmas=[t.lemma_ for t in ref] if lemmas else None)
        out.append(Example(Doc(nlp.vocab, words=words), gold))
        if len(out) == n:
            break
    return out


def small_lemmatizer():
    nlp = spacy.blank("xx")
    nlp.add_pipe("mst_lemmatizer", name="trainable_lemmatizer",
                 config={"model": {"tok2vec": {"width": 32, "depth": 1, "embed_size": 500}}})
    return nlp


def test_without_lemmas_it_stays_off(sample_train, tmp_path, capsys):
    nlp = small_lemmatizer()
    train = examples(sample_train, nlp, 30, lemmas=False)
    nlp.initialize(lambda: train)      # spaCy's trainable_lemmatizer raises E143 here
    lemmatizer = nlp.get_pipe("trainable_lemmatizer")
    assert lemmatizer.is_off
    assert "stays off" in capsys.readouterr().out
    losses = nlp.update(train[:4])
    assert losses["trainable_lemmatizer"] == 0.0
    doc = nlp(Doc(nlp.vocab, words=["Dogs", "were", "barking"]))
    assert [t.lemma_ for t in doc] == ["", "", ""]
    nlp.to_disk(tmp_path / "nlp")
    again = spacy.load(tmp_path / "nlp")
    assert again.get_pipe("trainable_lemmatizer").is_off
    assert [t.lemma_ for t in again(Doc(again.vocab, words=["cats"]))] == [""]


def test_with_lemmas_it_is_spacys_lemmatizer(sample_train):
    nlp = small_lemmatizer()
    train = examples(sample_train, nlp, 120)
    optimizer = nlp.initialize(lambda: train)
    lemmatizer = nlp.get_pipe("trainable_lemmatizer")
    assert not lemmatizer.is_off and len(lemmatizer.labels) > 5
    for _ in range(6):
        losses = nlp.update(train, sgd=optimizer)
    assert losses["trainable_lemmatizer"] > 0
    scores = nlp.evaluate(train[:40])
    assert scores["lemma_acc"] > 0.7, scores["lemma_acc"]


def hand_examples(vocab):
    """Training words whose lemmas are counted by hand in the tests below."""
    rows = [
        (["Dogs", "ran", "home"], ["dog", "run", "home"], ["NOUN", "VERB", "ADV"]),
        (["I", "saw", "saws"], ["I", "see", "saw"], ["PRON", "VERB", "NOUN"]),
        (["you", "saw", "a", "saw"], ["you", "see", "a", "saw"], ["PRON", "VERB", "DET", "NOUN"]),
        (["they", "saw", "it"], ["they", "saw", "it"], ["PRON", "VERB", "PRON"]),
    ]
    out = []
    for words, lemmas, pos in rows:
        gold = Doc(vocab, words=words, lemmas=lemmas, pos=pos)
        out.append(Example(Doc(vocab, words=words, pos=pos), gold))
    return out


def test_lexicon_is_read_from_the_training_words(tmp_path):
    nlp = spacy.blank("xx")
    nlp.add_pipe("mst_lemmatizer", name="trainable_lemmatizer",
                 config={"min_tree_freq": 1,
                         "model": {"tok2vec": {"width": 16, "depth": 1, "embed_size": 100}}})
    nlp.initialize(lambda: hand_examples(nlp.vocab))
    lexicon = nlp.get_pipe("trainable_lemmatizer").lexicon
    # "saw" VERB: "see" twice, "saw" once; "Dogs" also under its lower-cased form
    assert lexicon["saw\tVERB"] == "see" and lexicon["saw\tNOUN"] == "saw"
    assert lexicon["Dogs\tNOUN"] == lexicon["dogs\tNOUN"] == "dog"
    assert lexicon["I\tPRON"] == lexicon["i\tPRON"] == "I"
    assert len(lexicon) == 13   # 11 form and UPOS pairs, 2 more lower-cased
    doc = Doc(nlp.vocab, words=["Saw", "saw", "saw", "Ran", "ran"],
              pos=["VERB", "VERB", "NOUN", "VERB", "NOUN"])
    lemmas = [t.lemma_ for t in nlp(doc)]
    # as written, else lower-cased, under the predicted UPOS; "ran" NOUN is not in it
    assert lemmas[:4] == ["see", "see", "saw", "run"]
    nlp.to_disk(tmp_path / "nlp")
    again = spacy.load(tmp_path / "nlp")
    assert again.get_pipe("trainable_lemmatizer").lexicon == lexicon
    without = spacy.blank("xx")
    without.add_pipe("mst_lemmatizer", name="trainable_lemmatizer",
                     config={"min_tree_freq": 1, "lexicon": False,
                             "model": {"tok2vec": {"width": 16, "depth": 1, "embed_size": 100}}})
    without.initialize(lambda: hand_examples(without.vocab))
    assert without.get_pipe("trainable_lemmatizer").lexicon == {}


class LemmaProbe:
    """A component after the lemmatizer that keeps the lemmas of the docs it
    is updated on (what a parser there learns from)."""

    def __init__(self):
        self.seen = []

    def __call__(self, doc):
        return doc

    def update(self, examples, **kwargs):
        self.seen.extend([t.lemma_ for t in eg.predicted] for eg in examples)
        return kwargs.get("losses") or {}


@Language.factory("test_lemma_probe")
def make_lemma_probe(nlp, name):
    return LemmaProbe()


def test_docs_of_an_update_are_lemmatized_by_the_model_alone(sample_train):
    nlp = small_lemmatizer()
    probe = nlp.add_pipe("test_lemma_probe")
    train = examples(sample_train, nlp, 60)
    optimizer = nlp.initialize(lambda: train)
    lemmatizer = nlp.get_pipe("trainable_lemmatizer")
    assert lemmatizer.lexicon
    nlp.update(train, sgd=optimizer, annotates=["trainable_lemmatizer"])
    annotated = probe.seen
    words = [[t.text for t in eg.predicted] for eg in train]
    at_run_time = [[t.lemma_ for t in nlp(Doc(nlp.vocab, words=w))] for w in words]
    lemmatizer.cfg["use_lexicon"] = False
    by_model = [[t.lemma_ for t in nlp(Doc(nlp.vocab, words=w))] for w in words]
    assert annotated == by_model
    gold = [[t.lemma_ for t in eg.reference] for eg in train]
    # at run time the training words get their training lemmas (one lemma per form here)
    right = sum(a == g for doc_a, doc_g in zip(at_run_time, gold) for a, g in zip(doc_a, doc_g))
    total = sum(len(g) for g in gold)
    assert right / total > 0.95 and at_run_time != by_model
