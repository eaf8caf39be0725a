"""Build the Cython extensions: every .pyx below spacy_mstparse/ becomes a module."""
import fnmatch
import os
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

ROOT = Path(__file__).parent
COMPILE_ARGS = ["-O3", "-std=c11", "-Wno-unused-function", "-Wno-unreachable-code"]


def find_extensions():
    extensions = []
    # MSTPARSE_ONLY="spacy_mstparse/decoders/*" limits the build to matching files
    # (handy while developing one module); by default everything is built.
    only = os.environ.get("MSTPARSE_ONLY")
    for pyx in sorted((ROOT / "spacy_mstparse").rglob("*.pyx")):
        rel = pyx.relative_to(ROOT)
        if only and not fnmatch.fnmatch(str(rel), only):
            continue
        module = ".".join(rel.with_suffix("").parts)
        # modules with Cython's prange run their loops on OpenMP threads
        openmp = ["-fopenmp"] if "prange" in pyx.read_text() else []
        extensions.append(
            Extension(
                module,
                [str(rel)],
                include_dirs=[numpy.get_include()],
                extra_compile_args=COMPILE_ARGS + openmp,
                extra_link_args=openmp,
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            )
        )
    return extensions


# Both steps use every core: cythonize translates the .pyx files in worker
# processes, build_ext compiles the C files on as many threads.
JOBS = max(1, int(os.environ.get("MSTPARSE_JOBS", os.cpu_count() or 1)))

setup(
    options={"build_ext": {"parallel": JOBS}},
    ext_modules=cythonize(
        find_extensions(),
        nthreads=JOBS if JOBS > 1 else 0,
        language_level=3,
        compiler_directives={
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    ),
)
