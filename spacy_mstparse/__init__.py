"""spacy-mstparse: graph-based (MST) dependency parsing for spaCy v3.

Run from a source folder whose Cython modules are not compiled (a clone
installed with ``pip install .``, then ``python -m spacy_mstparse ...`` in
it: Python, and Ray's workers, put the current folder first on
``sys.path``), the package found there hands over to the installed build of
the same name (``_use_installed_build``), so the compiled modules load.
"""

__version__ = "0.1.0"


def _use_installed_build() -> None:
    import importlib.machinery
    import importlib.util
    import os
    import sys

    def built(package_dir: str) -> bool:
        module = os.path.join(package_dir, "features", "sentence")
        return any(os.path.exists(module + suffix)
                   for suffix in importlib.machinery.EXTENSION_SUFFIXES)

    def elsewhere_built(spec) -> bool:
        if spec is None or not spec.origin:
            return False
        package_dir = os.path.dirname(os.path.abspath(spec.origin))
        return package_dir != here and built(package_dir)

    here = os.path.dirname(os.path.abspath(__file__))
    if built(here):
        return  # built here (an editable install or build_ext --inplace)
    source_root = os.path.dirname(here)
    others = [p for p in sys.path if os.path.abspath(p or os.curdir) != source_root]
    spec = importlib.machinery.PathFinder.find_spec(__name__, others)
    if not elsewhere_built(spec):  # an installed build reached through another finder
        for finder in sys.meta_path:
            if finder is importlib.machinery.PathFinder or not hasattr(finder, "find_spec"):
                continue
            found = finder.find_spec(__name__, None)
            if elsewhere_built(found):
                spec = found
                break
    if not elsewhere_built(spec):
        return  # nothing else to use: the imports of compiled modules fail as they would
    module = importlib.util.module_from_spec(spec)
    sys.modules[__name__] = module  # what `import spacy_mstparse` now returns
    spec.loader.exec_module(module)


_use_installed_build()
