"""Rebuild the bundled English EWT sample from the shared UD treebank.

    python assets/en_ewt_sample/make_sample.py [--data-dir DIR]

Copies the first 1,000 sentences of ``en_ewt-ud-train.conllu`` to
``train.conllu`` and the first 200 sentences of ``en_ewt-ud-dev.conllu`` to
``dev.conllu``, verbatim: whole sentence blocks, comment lines included, each
followed by its blank line. ``DIR`` defaults to ``../shared/data/ud`` seen
from the repository root.
"""
import argparse
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DATA_DIR = HERE.parents[1].parent / "shared" / "data" / "ud"
SAMPLES = (
    ("en_ewt-ud-train.conllu", "train.conllu", 1000),
    ("en_ewt-ud-dev.conllu", "dev.conllu", 200),
)


def first_sentences(path: Path, n: int) -> str:
    """The first ``n`` sentence blocks of a CoNLL-U file, verbatim."""
    lines = []
    count = 0
    in_block = False
    with path.open(encoding="utf-8", newline="") as file_:
        for line in file_:
            lines.append(line)
            if line.strip():
                in_block = True
            elif in_block:
                in_block = False
                count += 1
                if count == n:
                    return "".join(lines)
    raise ValueError(f"{path} has only {count} sentences, {n} wanted")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    args = parser.parse_args()
    for source, target, n in SAMPLES:
        text = first_sentences(args.data_dir / source, n)
        (HERE / target).write_text(text, encoding="utf-8", newline="")
        print(f"{target}: first {n} sentences of {source}")


if __name__ == "__main__":
    main()
