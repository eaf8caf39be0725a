"""Every ```python block of README.md runs as written: each as its own script
in a scratch directory holding the bundled sample (`assets/`), as a user
would run it from a checkout. A block that loads the pipeline `make demo`
trains (`training/.../model-best`) gets a small one trained with the same
config first."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf8"), re.S | re.M)
DEMO_MODEL = re.compile(r"training/([\w.-]+)-([\w.-]+)/model-best")


def test_readme_has_python_blocks():
    assert len(BLOCKS) >= 3


def train_small_demo_pipeline(root: Path, name: str, config_name: str) -> None:
    """The demo's pipeline (configs/<config>.cfg on the sample converted as
    project.yml converts it), trained for one epoch only."""
    import spacy
    import srsly
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import train

    from spacy_mstparse.corpus.convert import convert

    variables = srsly.read_yaml(REPO / "project.yml")["vars"]
    assert (name, config_name) == (variables["name"], variables["config"])
    corpus = root / "corpus"
    corpus.mkdir()
    for part in ("train", "dev"):
        convert(root / variables[f"{part}_file"], corpus / f"{part}.spacy",
                n_sents=variables["n_sents"], vocab_lang=variables["lang"])
    config = spacy.util.load_config(REPO / "configs" / f"{config_name}.cfg", overrides={
        "paths.train": str(corpus / "train.spacy"), "paths.dev": str(corpus / "dev.spacy"),
        "training.max_epochs": 1,
    })
    nlp = init_nlp(config)
    output = root / "training" / f"{name}-{config_name}"
    output.mkdir(parents=True)
    train(nlp, output, stdout=open(os.devnull, "w"))
    assert (output / "model-best").is_dir()


def blocks() -> list:
    return [
        pytest.param(code, id=f"block{k}", marks=[pytest.mark.slow] if DEMO_MODEL.search(code) else [])
        for k, code in enumerate(BLOCKS)
    ]


@pytest.mark.parametrize("code", blocks())
def test_readme_python_block_runs(code, tmp_path):
    shutil.copytree(REPO / "assets", tmp_path / "assets")
    model = DEMO_MODEL.search(code)
    if model:
        train_small_demo_pipeline(tmp_path, model.group(1), model.group(2))
    script = tmp_path / "snippet.py"
    script.write_text(code, encoding="utf8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=600,
    )
    assert result.returncode == 0, code + "\n--- stdout\n" + result.stdout + "\n--- stderr\n" + result.stderr
    assert result.stdout.strip(), "the snippet prints its result"
    # the parser warns when the docs lack a tag column its features read
    assert "annotation but the parser's features" not in result.stderr, result.stderr
