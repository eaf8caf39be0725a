"""The documented ``arcstandard_svm`` example (docs/sections/arcstandard_example.md,
the README's snippet) runs as written, from a scratch directory holding the
bundled sample, and prints the right tree."""
import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "docs" / "sections" / "arcstandard_example.md"


def test_arcstandard_example_prints_the_right_tree(tmp_path):
    blocks = re.findall(r"^```python\n(.*?)^```", SOURCE.read_text(encoding="utf8"), re.S | re.M)
    (code,) = [b for b in blocks if 'add_pipe("arcstandard_svm"' in b]
    shutil.copytree(REPO / "assets", tmp_path / "assets")
    (tmp_path / "snippet.py").write_text(code, encoding="utf8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "snippet.py"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    printed = ast.literal_eval(result.stdout.strip().splitlines()[-1])
    assert printed == [("She", "reads", "nsubj"), ("reads", "reads", "ROOT"),
                       ("books", "reads", "obj")]
