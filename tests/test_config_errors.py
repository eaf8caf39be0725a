"""Bad setting values are spaCy config errors: a few lines naming the
setting, no traceback, from ``spacy train`` and ``spacy debug config`` alike
(the type hints of the factories and registered functions, setting_types.py)."""
import inspect
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from confection import ConfigValidationError
from spacy.cli.debug_config import debug_config

import spacy_mstparse.registry  # noqa: F401
from spacy_mstparse.components.arcstandard_svm import make_arcstandard_svm
from spacy_mstparse.components.mst_parser import MSTParser, make_mst_parser
from spacy_mstparse.components.supertagger import make_supertagger
from spacy_mstparse.setting_types import check_settings, power_of_two

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"
MST = "components.mst_parser"
LEARNER = MST + ".learner"
FEATURES = MST + ".features"
ARC = "components.arcstandard_svm"
SPARSEPTRON = "spacy_mstparse.Sparseptron.v1"

BAD = [  # (config, override, value, what the error names)
    ("mst_parser.cfg", MST + ".decoder", "eisnr", "decoder"),
    ("mst_parser.cfg", MST + ".order", 4, "order"),
    ("mst_parser.cfg", MST + ".label_buckets", 1000, "label_buckets"),
    ("mst_parser.cfg", MST + ".max_sentence_length", 0, "max_sentence_length"),
    ("mst_parser.cfg", MST + ".nonprojective_threshold", 1.5, "nonprojective_threshold"),
    ("mst_parser.cfg", MST + ".n_best", 0, "n_best"),
    ("mst_parser.cfg", MST + ".n_threads", -2, "n_threads"),
    ("mst_parser.cfg", MST + ".parallel_batch", 0, "parallel_batch"),
    ("mst_parser.cfg", MST + ".replicas", 0, "replicas"),
    ("mst_parser.cfg", MST + ".constraints", "loose", "constraints"),
    ("mst_parser.cfg", MST + ".probabilities", "yes", "probabilities"),
    ("mst_parser.cfg", MST + ".quantize_weights", 1, "quantize_weights"),
    ("mst_parser.cfg", MST + ".arc_density", 0.0, "arc_density"),
    ("mst_parser.cfg", MST + ".label_density", 1.5, "label_density"),
    ("mst_parser.cfg", MST + ".weight_levels", 1, "weight_levels"),
    ("mst_parser.cfg", LEARNER + ".k", 0, "k"),
    ("mst_parser.cfg", LEARNER + ".C", -1.0, "C"),
    ("mst_parser.cfg", FEATURES + ".n_buckets", 1000, "n_buckets"),
    ("mst_parser.cfg", FEATURES + ".tag_columns", "pos", "tag_columns"),
    ("mst_parser.cfg", FEATURES + ".use_morph", "Case", "use_morph"),
    ("mst_parser.cfg", FEATURES + ".lemma", "yes", "lemma"),
    ("mst_parser.cfg", FEATURES + ".cluster_bits", 65, "cluster_bits"),
    ("mst_parser.cfg", (LEARNER + ".@mst_learners", LEARNER + ".debias"), (SPARSEPTRON, "PA"),
     "debias"),
    ("mst_parser.cfg", (LEARNER + ".@mst_learners", LEARNER + ".B"), (SPARSEPTRON, 0), "B"),
    ("mst_parser_ssvm.cfg", LEARNER + ".lam", 0, "lam"),
    ("mst_parser_ssvm.cfg", LEARNER + ".max_constraints", -1, "max_constraints"),
    ("arcstandard_svm.cfg", ARC + ".lam", -1e-5, "lam"),
    ("arcstandard_svm.cfg", ARC + ".n_buckets", 1000, "n_buckets"),
    ("arcstandard_svm.cfg", ARC + ".nonprojective", "keep", "nonprojective"),
    ("arcstandard_svm.cfg", ARC + ".tag_column", "morph", "tag_column"),
    ("arcstandard_svm.cfg", ARC + ".feature_groups", ["1w", "xx"], "feature_groups"),
    ("arcstandard_svm.cfg", ARC + ".word_distance", "log", "word_distance"),
    ("mst_parser_tagged.cfg", "components.mst_supertagger.label_smoothing", 1.0,
     "label_smoothing"),
    # checks of several settings together: the component's error, as a config error
    ("mst_parser.cfg", (MST + ".order", MST + ".decoder"), (3, "chu_liu_edmonds"),
     "decoded projectively only"),
    ("mst_parser.cfg", (LEARNER + ".@mst_learners", LEARNER + ".debias", LEARNER + ".C"),
     (SPARSEPTRON, "PA-I", None), "needs a value for C"),
    ("mst_parser.cfg", (FEATURES + ".use_morph",), ([],), "use_morph"),
]


def overrides_of(keys, values):
    if isinstance(keys, str):
        keys, values = (keys,), (values,)
    return dict(zip(keys, values))


def check_short(output: str, names: str) -> None:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    assert "Traceback" not in output, output
    assert len(lines) <= 10, output
    assert names in output, output


@pytest.mark.parametrize("config,keys,values,names", BAD, ids=lambda x: str(x))
def test_debug_config_rejects_a_bad_value(config, keys, values, names, capsys):
    """spaCy's own ``debug config`` (in-process): exit 1, a short message."""
    with pytest.raises(SystemExit) as stop:
        debug_config(CONFIGS / config, overrides=overrides_of(keys, values))
    assert stop.value.code == 1
    check_short(capsys.readouterr().out, names)


def run(*args):
    return subprocess.run([sys.executable, "-m", "spacy", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_spacy_train_and_debug_config_print_a_few_lines():
    sample = REPO / "assets" / "en_ewt_sample" / "dev.conllu"
    train = run("train", CONFIGS / "mst_parser.cfg", "--paths.train", sample,
                "--paths.dev", sample, "--training.max_steps", 0,
                "--components.mst_parser.features.n_buckets", 1000)
    assert train.returncode == 1
    check_short(train.stdout + train.stderr, "n_buckets")
    assert "1000 is not a power of two" in train.stdout
    debug = run("debug", "config", CONFIGS / "mst_parser.cfg",
                "--components.mst_parser.decoder", "eisnr")
    assert debug.returncode == 1
    check_short(debug.stdout + debug.stderr, "decoder")


def test_every_setting_has_a_checked_type():
    """A new setting of a factory or a registered function needs a type that
    says which values are valid (a bare str / int / float says too little)."""
    functions = [make_mst_parser, make_arcstandard_svm, make_supertagger]
    for table in ("mst_learners", "mst_features"):
        for name, func in getattr(spacy.registry, table).get_all().items():
            if name.startswith("spacy_mstparse."):
                functions.append(func)
    untyped = []
    for func in functions:
        for param in inspect.signature(func).parameters.values():
            if param.name in ("nlp", "name", "learner", "model"):
                continue
            if param.annotation in (inspect.Parameter.empty, str, int, float):
                untyped.append(f"{func.__name__}: {param.name}")
    assert not untyped


def test_python_construction_applies_the_same_types():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match=r"order = 4 is not one of 1, 2, 3"):
        MSTParser(nlp.vocab, order=4)
    with pytest.raises(ValueError, match=r"label_buckets = 1000 is not a power of two >= 256"):
        MSTParser(nlp.vocab, label_buckets=1000)
    # add_pipe validates the config as spacy train does
    with pytest.raises(ConfigValidationError, match="n_best"):
        nlp.add_pipe("mst_parser", config={"n_best": 0})
    with pytest.raises(ConfigValidationError, match="word_distance"):
        nlp.add_pipe("arcstandard_svm", config={"word_distance": "log"})


def test_constrained_types_accept_exactly_their_values():
    table = power_of_two(256)
    hints = {"n": table}
    for good in (256, 512, 2**22):
        check_settings("x", {"n": good}, hints)
    for bad in (0, 128, 1000, 257, True, 512.0, "512", None):
        with pytest.raises(ValueError, match=r"\[x\] n = .* is not a power of two >= 256"):
            check_settings("x", {"n": bad}, hints)


@pytest.mark.parametrize("config", sorted(p.name for p in CONFIGS.glob("*.cfg")))
def test_shipped_configs_are_valid(config, capsys):
    """The types reject no value the shipped configs use."""
    sample = REPO / "assets" / "en_ewt_sample" / "dev.conllu"
    debug_config(CONFIGS / config, overrides={"paths.train": str(sample), "paths.dev": str(sample)})
    assert "Config is valid" in capsys.readouterr().out


def test_missing_corpus_path_is_a_config_error(capsys):
    with pytest.raises(SystemExit):
        debug_config(CONFIGS / "mst_parser.cfg", overrides={})
    check_short(capsys.readouterr().out, "paths.train")
