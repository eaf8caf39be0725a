"""The morphological tagger without spaCy: word attributes, the tag
inventory, the averaged-perceptron model and its training with jackknifed
predictions (what ``mst_tagger`` wraps)."""
