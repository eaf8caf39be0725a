"""The CoNLL 2018 shared task scorer (the UD project's ``eval.py``): where
it is, running it, and reading its table.

``eval.py`` is not part of the project: it is looked for at
``../shared/tools/ud/eval.py`` relative to the repository root (or given).
Its UAS / LAS count every word, punctuation included, and compare universal
relations (subtypes dropped): the figures the UD community reports. Its
F1 column is used (equal to precision and recall with gold tokenization).
"""
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional

DEFAULT_EVAL = Path(__file__).resolve().parent.parent / ".." / "shared" / "tools" / "ud" / "eval.py"


def parse_eval_output(text: str) -> Dict[str, Dict[str, Optional[float]]]:
    """The rows of ``eval.py -v``'s table: ``{metric: {precision, recall,
    f1, aligned_accuracy}}`` in percent (None where a cell is empty)."""
    rows: Dict[str, Dict[str, Optional[float]]] = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) < 4 or not cells[0] or cells[0] == "Metrics":
            continue
        try:
            values = [float(cell) if cell else None for cell in cells[1:5]]
        except ValueError:
            continue
        values += [None] * (4 - len(values))
        rows[cells[0]] = dict(zip(("precision", "recall", "f1", "aligned_accuracy"), values))
    return rows


def run_eval(gold: Path, system: Path, eval_py: Path = DEFAULT_EVAL) -> Dict[str, object]:
    """Score ``system`` against ``gold``: UAS / LAS (F1, percent), the word
    and token F1 (100 with gold tokenization), and every row of the table.
    Raises RuntimeError with eval.py's message when it fails."""
    cmd = [sys.executable, str(eval_py), "-v", str(gold), str(system)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        message = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise RuntimeError(f"eval.py failed on {system}: {message[-1] if message else done.returncode}")
    rows = parse_eval_output(done.stdout)
    if "UAS" not in rows or "LAS" not in rows:
        raise RuntimeError(f"eval.py printed no UAS / LAS for {system}")

    def f1(metric: str) -> Optional[float]:
        return rows.get(metric, {}).get("f1")

    return {"uas": f1("UAS"), "las": f1("LAS"), "words_f1": f1("Words"),
            "tokens_f1": f1("Tokens"), "sentences_f1": f1("Sentences"),
            "upos_f1": f1("UPOS"), "lemmas_f1": f1("Lemmas"), "table": rows}
