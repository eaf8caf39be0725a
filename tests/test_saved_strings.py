"""``calibrate_before_to_disk.v2`` with ``trim_strings``: the pipeline is
saved without its training words in ``vocab/strings.json`` and, loaded,
parses raw and tagged text as the pipeline saved with all its strings."""
import pytest
import spacy
import srsly
from spacy.tokens import Doc
from spacy.training import Example

from spacy_mstparse.registry import make_calibrate_before_to_disk_v2
from spacy_mstparse.saved_strings import kept_strings, trimmed_for_saving

TRAIN = [
    ("Zorblax reads long quixotic books .", ["PROPN", "VERB", "ADJ", "ADJ", "NOUN", "PUNCT"],
     [1, 1, 4, 4, 1, 1], ["nsubj", "root", "amod", "amod", "obj", "punct"]),
    ("The marmalade cat sleeps .", ["DET", "NOUN", "NOUN", "VERB", "PUNCT"],
     [2, 2, 3, 3, 3], ["det", "compound", "nsubj", "root", "punct"]),
    ("Dogs bark at midnight", ["NOUN", "VERB", "ADP", "NOUN"],
     [1, 1, 3, 1], ["nsubj", "root", "case", "obl"]),
]
TEXTS = ["Zorblax reads quixotic books .", "The cat sleeps at midnight .",
         "Unseen wordforms arrive tomorrow ."]


def train_pipeline():
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("mst_parser", config={
        "features": {"@mst_features": "spacy_mstparse.GraphFeatures.v1", "n_buckets": 2**12},
        "label_buckets": 2**8})
    train = []
    for text, pos, heads, deps in TRAIN:
        words = text.split()
        ref = Doc(nlp.vocab, words=words, pos=pos, tags=pos, heads=heads, deps=deps)
        train.append(Example(Doc(nlp.vocab, words=words, pos=pos, tags=pos), ref))
    nlp.initialize(lambda: train)
    for _ in range(30):
        parser.update(train)
    nlp.evaluate(train)   # calibrated: the callback has no dev evaluation to do
    return nlp


def parses(nlp):
    tagged = [Doc(nlp.vocab, words=t.split(), pos=p, tags=p) for t, p, _, _ in TRAIN]
    docs = [nlp(text) for text in TEXTS] + [nlp(doc) for doc in tagged]
    return [[(t.text, t.head.i, t.dep_) for t in doc] for doc in docs]


@pytest.mark.filterwarnings("ignore:.*docs have no (POS|TAG) annotation")
def test_trimmed_pipeline_parses_as_the_full_one(tmp_path):
    nlp = train_pipeline()
    assert "quixotic" in nlp.vocab.strings
    nlp.to_disk(tmp_path / "full")
    saved = make_calibrate_before_to_disk_v2(trim_strings=True)(nlp)
    assert isinstance(saved, spacy.language.Language) and saved is not nlp
    saved.to_disk(tmp_path / "trimmed")
    full = srsly.read_json(tmp_path / "full" / "vocab" / "strings.json")
    trimmed = srsly.read_json(tmp_path / "trimmed" / "vocab" / "strings.json")
    assert "quixotic" in full and "quixotic" not in trimmed
    assert set(trimmed) == kept_strings(nlp) == set(nlp.get_pipe("mst_parser").labels)
    assert len(trimmed) < len(full) / 10
    # the pipeline in training keeps its strings; the other files are the same
    assert "quixotic" in nlp.vocab.strings and nlp.vocab.strings["quixotic"]
    for name in ("mst_parser/arc_weights.npz", "mst_parser/label_weights.npz", "tokenizer",
                 "config.cfg", "vocab/vectors.cfg"):
        assert (tmp_path / "full" / name).read_bytes() == \
            (tmp_path / "trimmed" / name).read_bytes(), name
    expected = parses(spacy.load(tmp_path / "full"))
    assert expected == parses(nlp)
    loaded = spacy.load(tmp_path / "trimmed")
    assert "quixotic" not in loaded.vocab.strings
    assert parses(loaded) == expected
    assert "quixotic" in loaded.vocab.strings   # a Doc adds its words' strings


def test_without_trim_strings_the_pipeline_itself_is_saved():
    nlp = train_pipeline()
    assert make_calibrate_before_to_disk_v2()(nlp) is nlp
    assert trimmed_for_saving(nlp).vocab.strings is nlp.vocab.strings
