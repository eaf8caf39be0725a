"""The benchmark scripts of spacy-mstparse, run from the repository root as
modules (``python -m benchmarks.bench_learners``); shared helpers in
``benchmarks.common``. Not part of the installed package."""
