"""configs/arcstandard_svm.cfg and the ``arcstandard`` workflow of project.yml:
convert -> spacy train -> evaluate -> spacy package on the bundled sample."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
import srsly

REPO = Path(__file__).resolve().parents[1]


def test_config_loads_with_overrides():
    config = spacy.util.load_config(
        REPO / "configs" / "arcstandard_svm.cfg",
        overrides={
            "nlp.lang": "de",
            "components.arcstandard_svm.lam": 0.001,
            "components.arcstandard_svm.nonprojective": "drop",
        },
    )
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    parser = nlp.get_pipe("arcstandard_svm")
    assert nlp.lang == "de" and nlp.pipe_names == ["arcstandard_svm"]
    assert parser.cfg["lam"] == 0.001 and parser.cfg["nonprojective"] == "drop"
    # the same gold-tag reader as mst_parser.cfg
    mst = spacy.util.load_config(REPO / "configs" / "mst_parser.cfg")
    assert config["corpora"] == mst["corpora"]


@pytest.mark.slow
def test_arcstandard_workflow(tmp_path):
    shutil.copy2(REPO / "project.yml", tmp_path / "project.yml")
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    shutil.copytree(REPO / "assets", tmp_path / "assets")
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    result = subprocess.run(
        [sys.executable, "-m", "spacy", "project", "run", "arcstandard", str(tmp_path),
         "--vars.eval_frequency", "100"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    variables = srsly.read_yaml(tmp_path / "project.yml")["vars"]
    name = variables["name"]
    # the stopping rule ended training before max_epochs
    assert "converged" in result.stdout
    metrics = json.loads((tmp_path / "metrics" / f"{name}-arcstandard_svm.json").read_text())
    text = json.dumps(metrics)
    assert metrics["uas"] > 60.0, text
    assert metrics["las"] > 50.0, text
    model = tmp_path / "training" / f"{name}-arcstandard_svm" / "model-best"
    meta = srsly.read_json(model / "meta.json")
    assert meta["performance"]["dep_uas"] > 0.6
    packages = list((tmp_path / "packages").glob("*arcstandard*/dist/*.tar.gz"))
    assert packages, list((tmp_path / "packages").rglob("*"))
