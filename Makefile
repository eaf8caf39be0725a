# spacy-mstparse: `make demo` and `make test` work on a fresh machine with
# Python 3.11 and a C compiler. Everything runs inside .venv.
#
# Installing is three visible steps: the build requirements (pyproject.toml's
# [build-system] requires), the Cython extensions compiled in place with one
# line per module (setup.py), then the package and its dependencies (pip,
# reusing the compiled modules). `make demo` installs the package alone (spaCy
# and a few small libraries); `make test` adds the extras the suite uses
# (pytest, Ray with Ray Data, spaCy's lookups tables).
PYTHON3 ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SOURCES := $(shell find spacy_mstparse -name '*.pyx' -o -name '*.pxd') pyproject.toml setup.py
TEST_EXTRAS := test,ray,clusters

.PHONY: install install-test demo test test-fast test-bench bench bench-peers wheel clean

install: $(VENV)/.installed

$(VENV)/.build-requirements: pyproject.toml
	test -x $(PY) || $(PYTHON3) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@echo "== 1/3 Installing the build requirements into $(VENV)"
	$(PY) -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires']))" > $@.txt
	$(PY) -m pip install --quiet -r $@.txt
	touch $@

# Compiles what changed (visibly), then installs with pip, which reuses the
# compiled modules; $(1): what pip installs ("." or ".[extras]").
define install_package
	@echo "== 2/3 Compiling the Cython extensions on every core (all of them: about"
	@echo "   4 minutes on 2 cores; later only what a .pyx/.pxd change touches)"
	$(PY) setup.py -q build_ext --inplace
	@echo "== 3/3 Installing spacy-mstparse (editable) from $(1) and its dependencies"
	$(PY) -m pip install --no-build-isolation -e "$(1)"
endef

# The package alone: what the demo (and a user) needs, no Ray, no pandas / pyarrow.
$(VENV)/.installed: $(VENV)/.build-requirements $(SOURCES)
	$(call install_package,.)
	touch $@

# The package with the extras the test suite uses.
install-test: $(VENV)/.installed-test

$(VENV)/.installed-test: $(VENV)/.build-requirements $(SOURCES)
	$(call install_package,.[$(TEST_EXTRAS)])
	touch $(VENV)/.installed $@

# The `demo` workflow of project.yml on the bundled EWT sample: convert it,
# train the raw-text pipeline (mst_tagger + lemmatizer + senter -> mst_parser)
# with `spacy train`, evaluate it on the dev file, parse a few plain
# sentences and write a displaCy SVG.
demo: install
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m spacy project run demo .

# The product's suite on every core (pytest-xdist; a test file stays on one worker, so
# its module fixtures are built once), the 15 slowest tests listed.
test: install-test
	$(PY) -m pytest -ra -n auto --dist loadfile --durations=15

# Everything but the end-to-end packaging / spacy train tests.
test-fast: install-test
	$(PY) -m pytest -ra -n auto --dist loadfile -m "not slow"

# The benchmark scripts' own tests (not part of the product's suite).
test-bench: install-test
	$(PY) -m pytest -ra benchmarks/tests

bench: install
	$(PY) -m benchmarks.bench_learners

# mst_parser vs spaCy's parser and UDPipe 1 on EWT; installs the peers
# (benchmarks/requirements-peers.txt) into .venv first. About 1.5 h on 2 cores.
bench-peers: install
	$(PY) -m pip install --quiet -r benchmarks/requirements-peers.txt
	$(PY) -m benchmarks.bench_peers

# A release wheel (no debug symbols) in dist/, built in an isolated environment.
wheel: install
	$(PY) -m pip wheel --no-deps . -w dist

clean:
	rm -rf build dist corpus training metrics packages project.lock
	find spacy_mstparse -name '*.so' -delete
	find spacy_mstparse -name '*.c' -delete
