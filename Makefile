# spacy-mstparse: `make demo` and `make test` work on a fresh machine with
# Python 3.11 and a C compiler. Everything runs inside .venv.
PYTHON3 ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SOURCES := $(shell find spacy_mstparse -name '*.pyx' -o -name '*.pxd') pyproject.toml setup.py

.PHONY: install demo test test-fast test-bench bench bench-peers clean

install: $(VENV)/.installed

$(VENV)/.installed: $(SOURCES)
	test -x $(PY) || $(PYTHON3) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@echo "Installing spaCy and the other dependencies into $(VENV), then compiling"
	@echo "the Cython extensions on every core: about 4 minutes on 2 cores, with no output"
	@echo "from pip while it compiles."
	@echo "(Only again after a .pyx/.pxd file, setup.py or pyproject.toml changes.)"
	$(PY) -m pip install -e ".[test,ray,clusters]"
	touch $@

# The `demo` workflow of project.yml on the bundled EWT sample: convert it,
# train the raw-text pipeline (tagger + morphologizer + senter -> mst_parser)
# with `spacy train`, evaluate it on the dev file, parse a few plain
# sentences and write a displaCy SVG.
demo: install
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m spacy project run demo .

# The product's suite on every core (pytest-xdist; a test file stays on one worker, so
# its module fixtures are built once), the 15 slowest tests listed.
test: install
	$(PY) -m pytest -ra -n auto --dist loadfile --durations=15

# Everything but the end-to-end packaging / spacy train tests.
test-fast: install
	$(PY) -m pytest -ra -n auto --dist loadfile -m "not slow"

# The benchmark scripts' own tests (not part of the product's suite).
test-bench: install
	$(PY) -m pytest -ra benchmarks/tests

bench: install
	$(PY) -m benchmarks.bench_learners

# mst_parser vs spaCy's parser and UDPipe 1 on EWT; installs the peers
# (benchmarks/requirements-peers.txt) into .venv first. About 1.5 h on 2 cores.
bench-peers: install
	$(PY) -m pip install --quiet -r benchmarks/requirements-peers.txt
	$(PY) -m benchmarks.bench_peers

clean:
	rm -rf build corpus training metrics packages project.lock
	find spacy_mstparse -name '*.so' -delete
	find spacy_mstparse -name '*.c' -delete
