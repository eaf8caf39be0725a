"""Arc-standard transition-based parsing (Nivre 2008) with a one-vs-rest
linear SVM oracle (Choo & Shivaditya, the Cornell CS 5740 report, 2020).

``arc_standard``: parser state, transitions, validity, static oracle;
``features``: the seed's feature set as hashed ids; ``svm``: one-vs-rest
binary linear SVMs trained by sub-gradient descent; ``parser``: the greedy
parse and oracle-training loops over whole sentences.
"""
