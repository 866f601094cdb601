"""The wheel's build (pyproject.toml): the extension lazybreaker._core is
built by the project's own CMake (the SWIG wrapper of bindings/swig/python.i
with the library linked in, LB_PYTHON_STATIC=ON) for the interpreter that
runs this build, then copied into the wheel with SWIG's _core.py. The
version is the C header's (CB_VERSION_*), written once."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
# LB_SOURCE_DIR: the repository, when this directory was copied out of it
ROOT = Path(os.environ.get("LB_SOURCE_DIR") or HERE.parent.parent).resolve()


def version() -> str:
    header = (ROOT / "include" / "lazybreaker" / "lazybreaker.h").read_text(encoding="utf-8")
    parts = [re.search(rf"^#define CB_VERSION_{p} ([0-9]+)$", header, re.M) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) for m in parts if m)


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        tree = Path(self.build_temp).resolve() / "cmake"
        args = [
            "cmake", "-S", str(ROOT), "-B", str(tree), "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython3_EXECUTABLE={sys.executable}", "-DLB_PYTHON=ON", "-DLB_PYTHON_STATIC=ON",
            "-DLB_BUILD_TESTS=OFF", "-DLB_BUILD_BENCH=OFF", "-DLB_JAVA=OFF", "-DLB_CSHARP=OFF", "-DLB_GO=OFF",
            "-DLB_LUA=OFF", "-DLB_CBCTL=OFF",
        ]
        subprocess.run(args, check=True)
        jobs = os.environ.get("LB_WHEEL_JOBS", "2")
        subprocess.run(["cmake", "--build", str(tree), "--target", "lazybreaker_python", "-j", jobs], check=True)
        built = tree / "bindings" / "python" / "lazybreaker"
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built / target.name, target)
        shutil.copy2(built / "_core.py", target.parent / "_core.py")


setup(
    version=version(),
    packages=["lazybreaker"],
    package_data={"lazybreaker": ["py.typed", "_core.pyi"]},
    ext_modules=[Extension("lazybreaker._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
