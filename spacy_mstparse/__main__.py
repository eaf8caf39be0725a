"""``python -m spacy_mstparse``: run the command-line app."""
from .cli import app

if __name__ == "__main__":
    app(prog_name="python -m spacy_mstparse")
