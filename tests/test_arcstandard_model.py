"""The arc-standard SVM parser's model and trainer (transition/model.py,
transition/training.py) work without spaCy: imported in a process that
cannot import it, trained on integer sentences and parsing them back."""
import subprocess
import sys

import numpy

from spacy_mstparse.components.arcstandard_settings import DEFAULT_CONFIG, SETTINGS
from spacy_mstparse.transition import training_scan
from spacy_mstparse.transition.model import TransitionModel
from spacy_mstparse.transition.training import TransitionTrainer

BLOCK_SPACY = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("spacy", "thinc"):
            raise ImportError("no " + name)
sys.meta_path.insert(0, Block())
import spacy_mstparse.transition.model, spacy_mstparse.transition.training
"""


def test_importable_without_spacy():
    subprocess.run([sys.executable, "-c", BLOCK_SPACY], check=True)


def test_trainer_learns_the_training_trees():
    # "a b c": b is the root, a <- b -> c, tags 7 8 9
    lower = numpy.array([10, 20, 30], dtype="uint64")
    heads = numpy.array([-1, 2, 0, 2], dtype="int32")
    deps = ["", "det", "root", "obj"]
    cfg = {key: DEFAULT_CONFIG[key] for key in SETTINGS}
    cfg.update(n_buckets=2**10, rare_word_cutoff=1, lam=1e-2)
    model = TransitionModel(cfg)
    trainer = TransitionTrainer(model)
    trainer.begin([(lower, heads, deps)], None, "||", 0)
    classes = training_scan.GoldClasses(model.inventory["labels"], model.inventory["classes"])
    rows = numpy.stack([lower, numpy.array([7, 8, 9], dtype="uint64")], axis=1)
    bounds = numpy.array([[0, 3]], dtype="int32")
    doc = (rows, heads[1:].copy(), numpy.asarray(classes(heads, deps), dtype="int32"), bounds)
    for _ in range(20):
        trainer.train([doc])
    assert trainer.stale and trainer.progress["svm_t"] == trainer.svm.t > 0
    trainer.install_weights()
    got_heads, got_labels = model.parse(rows, bounds)
    assert got_heads.tolist() == [2, 0, 2]
    assert [model.inventory["labels"][l] for l in got_labels] == ["det", "root", "obj"]
