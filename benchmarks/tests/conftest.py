"""Fixtures of the benchmark scripts' tests: those of the product's suite
(the bundled EWT sample, a small trained pipeline)."""
from tests.conftest import sample_dev, sample_train, trained_pipeline  # noqa: F401
