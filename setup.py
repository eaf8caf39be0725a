"""Build the Cython extensions: every .pyx below spacy_mstparse/ becomes a module.

- Flags per compiler type: gcc / clang ("unix", also MinGW) and MSVC ("msvc").
- OpenMP (graph/batch.pyx parses a batch's sentences on threads with
  Cython's ``prange``) only when a test program compiles and links with it;
  otherwise those loops run on one thread (without OpenMP Cython's
  ``prange`` is a plain serial loop) and the build says so. Apple clang has
  no ``-fopenmp``; ``MSTPARSE_OPENMP=0`` turns it off anywhere.
- No debug symbols (``-g0``, and on Linux stripped when linking), so wheels
  stay small; ``MSTPARSE_DEBUG=1`` keeps them.
- One line per module compiled (``[3/41] compiling spacy_mstparse.x``), so a
  build run outside pip (``make`` does) shows where it is.
- An editable install (``pip install -e .``) reuses the modules already
  compiled in place (``python setup.py build_ext --inplace``) when they are
  newer than their C sources, so compiling happens once, in the visible step.
"""
import fnmatch
import os
import shutil
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent
DEBUG = os.environ.get("MSTPARSE_DEBUG", "") not in ("", "0")

# compile / link arguments per compiler type (CCompiler.compiler_type)
COMPILE_ARGS = {
    "unix": ["-O3", "-std=c11", "-Wno-unused-function", "-Wno-unreachable-code"]
    + ([] if DEBUG else ["-g0"]),
    "msvc": ["/O2"],
}
LINK_ARGS = {
    # -s strips the symbol tables (GNU ld; Apple's ld has nothing to strip with -g0)
    "unix": [] if DEBUG or sys.platform == "darwin" else ["-s"],
    "msvc": [],
}
OPENMP_ARGS = {"unix": (["-fopenmp"], ["-fopenmp"]), "msvc": (["/openmp"], [])}

OPENMP_TEST = r"""
#include <omp.h>
int main(void) {
    int n = 0;
    #pragma omp parallel reduction(+:n)
    n += 1;
    return n > 0 && omp_get_max_threads() > 0 ? 0 : 1;
}
"""


def compiler_family(compiler) -> str:
    """"msvc" for Microsoft's compiler, else "unix" (gcc, clang, MinGW)."""
    return "msvc" if compiler.compiler_type == "msvc" else "unix"


@contextmanager
def silenced():
    """Send the compiler's own output (file descriptors 1 and 2) to nowhere."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [devnull]:
            os.close(fd)


def openmp_args(compiler):
    """(compile args, link args) with which a small OpenMP program compiles
    and links, or None: no OpenMP here."""
    if os.environ.get("MSTPARSE_OPENMP", "") == "0":
        return None
    compile_args, link_args = OPENMP_ARGS[compiler_family(compiler)]
    tmp = tempfile.mkdtemp(prefix="mstparse-openmp-")
    try:
        source = os.path.join(tmp, "openmp_test.c")
        with open(source, "w") as f:
            f.write(OPENMP_TEST)
        with silenced():
            objects = compiler.compile([source], output_dir=tmp, extra_postargs=compile_args)
            compiler.link_executable(objects, "openmp_test", output_dir=tmp,
                                     extra_postargs=link_args)
    except Exception:  # CompileError, LinkError, or no usable compiler
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return compile_args, link_args


def uses_openmp(ext) -> bool:
    """Whether the module's .pyx runs loops with Cython's prange."""
    pyx = Path(ext.sources[0]).with_suffix(".pyx")
    return pyx.exists() and "prange" in pyx.read_text(encoding="utf8")


class BuildExt(build_ext):
    """build_ext with the flags of the compiler at hand, OpenMP if it works,
    a line per module and reuse of up-to-date in-place modules."""

    def build_extensions(self):
        family = compiler_family(self.compiler)
        openmp = openmp_args(self.compiler)
        if openmp is None and any(uses_openmp(ext) for ext in self.extensions):
            print("spacy-mstparse: no OpenMP (the compiler has none, or MSTPARSE_OPENMP=0): "
                  "a batch's sentences are parsed on one thread", flush=True)
        for ext in self.extensions:
            ext.extra_compile_args = list(COMPILE_ARGS[family])
            ext.extra_link_args = list(LINK_ARGS[family])
            if openmp is not None and uses_openmp(ext):
                ext.extra_compile_args += openmp[0]
                ext.extra_link_args += openmp[1]
        stale = [ext for ext in self.extensions if self._stale(ext)]
        # an editable install takes the modules compiled in place when up to date
        self._reuse = {}
        if getattr(self, "editable_mode", False):
            for ext in stale:
                existing = self._inplace_module(ext)
                target = self.get_ext_fullpath(ext.name)
                if existing is not None and os.path.abspath(existing) != os.path.abspath(target):
                    self._reuse[ext.name] = existing
        self._todo = [ext.name for ext in stale if ext.name not in self._reuse]
        self._done = 0
        self._lock = threading.Lock()
        if self._reuse:
            print(f"spacy-mstparse: {len(self._reuse)} modules compiled in place are up to "
                  "date: reused", flush=True)
        if self._todo:
            print(f"spacy-mstparse: compiling {len(self._todo)} of {len(self.extensions)} "
                  f"modules ({family} compiler{', OpenMP' if openmp else ''})", flush=True)
        super().build_extensions()

    def _stale(self, ext) -> bool:
        target = self.get_ext_fullpath(ext.name)
        if self.force or not os.path.exists(target):
            return True
        built = os.path.getmtime(target)
        return any(os.path.getmtime(s) > built for s in list(ext.sources) + list(ext.depends))

    def _inplace_module(self, ext):
        """The module compiled in the source tree (build_ext --inplace), if
        it is newer than every source of the extension."""
        package, _, _ = ext.name.rpartition(".")
        package_dir = self.get_finalized_command("build_py").get_package_dir(package)
        path = os.path.join(package_dir, os.path.basename(self.get_ext_filename(ext.name)))
        if not os.path.exists(path):
            return None
        built = os.path.getmtime(path)
        if any(os.path.getmtime(s) > built for s in list(ext.sources) + list(ext.depends)):
            return None
        return path

    def build_extension(self, ext):
        if ext.name in self._reuse:
            target = self.get_ext_fullpath(ext.name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(self._reuse[ext.name], target)
            return
        if ext.name in self._todo:
            with self._lock:
                self._done += 1
                print(f"[{self._done}/{len(self._todo)}] compiling {ext.name}", flush=True)
        super().build_extension(ext)


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
        extensions.append(
            Extension(
                module,
                [str(rel)],
                include_dirs=[numpy.get_include()],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            )
        )
    return extensions


# Both steps use every core: cythonize translates the .pyx files in worker
# processes, build_ext compiles the C files on as many threads.
JOBS = max(1, int(os.environ.get("MSTPARSE_JOBS", os.cpu_count() or 1)))

if __name__ == "__main__":
    setup(
        cmdclass={"build_ext": BuildExt},
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
