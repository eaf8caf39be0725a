"""The mst_lemmatizer component: spaCy's trainable_lemmatizer, which stays
off for a treebank without lemmas instead of stopping at initialize."""
import spacy
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
