"""Finds, loads and checks the ctxdb shared library.

Search order (the first library found is used; nothing later is tried):

1. ``CTXDB_LIB_PATH``: a library file, or a directory holding one. When it
   is set it must work: a wrong path is an error, not a reason to look on.
2. The package's own ``lib/`` folder (``ctxdb/lib/libctxdb.so.1``), filled
   by the ``python_lib`` CMake target or by copying the built library.
3. The build trees of the repository the package sits in
   (``../../build*/`` relative to ``bindings/python``): ``build/`` first,
   then the others, newest library first. Sanitizer builds are skipped:
   loading one into a normal interpreter kills the process.
4. The system: ``libctxdb.so.1`` through the dynamic loader's search path,
   then ``ctypes.util.find_library("ctxdb")``.

A library whose ``ctxdb_abi_version()`` differs from :data:`EXPECTED_ABI`
is refused with :class:`AbiMismatch`, naming what was found and what is
needed.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
import sys
from pathlib import Path
from typing import List, Optional, Tuple

#: The CTXDB_ABI_VERSION this package is written against.
EXPECTED_ABI = 1

#: The environment variable that names the library (file or directory).
ENV_VAR = "CTXDB_LIB_PATH"

_PACKAGE_DIR = Path(__file__).resolve().parent
# bindings/python/ctxdb -> bindings/python -> bindings -> repository root
_REPO_ROOT = _PACKAGE_DIR.parents[2] if len(_PACKAGE_DIR.parents) > 2 else None

# Runtimes that must be loaded first in the process; a library that needs
# one of them aborts the interpreter when dlopen'ed without it.
_SANITIZER_RUNTIMES = (b"libasan.so", b"libtsan.so", b"libhwasan.so", b"libmsan.so")


class LibraryError(ImportError):
    """The ctxdb shared library cannot be found or used."""


class LibraryNotFound(LibraryError):
    """No ctxdb shared library was found."""


class AbiMismatch(LibraryError):
    """The library found has an ABI version this package does not speak."""

    def __init__(self, message: str, found: int, expected: int, path: str) -> None:
        super().__init__(message)
        self.found = found
        self.expected = expected
        self.path = path


def library_names(abi: int = EXPECTED_ABI) -> List[str]:
    """The file names the library has on this platform, preferred first."""
    if sys.platform == "darwin":
        return [f"libctxdb.{abi}.dylib", "libctxdb.dylib"]
    if sys.platform == "win32":
        return ["ctxdb.dll", "libctxdb.dll"]
    return [f"libctxdb.so.{abi}", "libctxdb.so"]


def check_abi(found: int, path: str = "<library>", expected: Optional[int] = None) -> None:
    """Raises AbiMismatch unless ``found`` is the ABI version this package needs."""
    if expected is None:
        expected = EXPECTED_ABI
    if found != expected:
        raise AbiMismatch(
            f"ctxdb: {path} has ABI version {found}, but this Python package "
            f"needs ABI version {expected}; point {ENV_VAR} at a matching "
            f"libctxdb.so.{expected} or install a matching ctxdb package",
            found, expected, path)


def sanitizer_runtime(path: str) -> Optional[str]:
    """The sanitizer runtime (e.g. 'libasan.so') the library links, if any."""
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return None
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                for name in _SANITIZER_RUNTIMES:
                    if data.find(name + b".") >= 0:
                        return name.decode()
    except (OSError, ValueError):
        return None
    return None


def _runtime_loaded(name: str) -> bool:
    try:
        with open("/proc/self/maps", "rb") as f:
            return name.encode() in f.read()
    except OSError:
        return False


def _in_dir(directory: Path) -> Optional[Path]:
    for name in library_names():
        p = directory / name
        if p.is_file():
            return p
    return None


def candidates(env_value: Optional[str] = None,
               package_dir: Optional[Path] = _PACKAGE_DIR,
               repo_root: Optional[Path] = _REPO_ROOT) -> List[Tuple[str, str]]:
    """The libraries to try, in order, as (source, path) pairs.

    ``source`` is "env", "package", "build" or "system". With ``env_value``
    set, it is the only candidate (LibraryNotFound when it names nothing).
    """
    if env_value:
        p = Path(env_value)
        if p.is_dir():
            found = _in_dir(p)
            if found is None:
                raise LibraryNotFound(
                    f"ctxdb: {ENV_VAR}={env_value} is a directory without "
                    f"{' or '.join(library_names())}")
            return [("env", str(found))]
        if p.is_file():
            return [("env", str(p))]
        raise LibraryNotFound(f"ctxdb: {ENV_VAR}={env_value} does not exist")

    out: List[Tuple[str, str]] = []
    if package_dir is not None:
        found = _in_dir(package_dir / "lib")
        if found is not None:
            out.append(("package", str(found)))
    if repo_root is not None and (repo_root / "include" / "ctxdb" / "ctxdb.h").is_file():
        builds = []
        for d in repo_root.glob("build*"):
            found = _in_dir(d) if d.is_dir() else None
            if found is None:
                continue
            # build/ first, then the most recently built
            builds.append((d.name != "build", -found.stat().st_mtime, str(found)))
        out.extend(("build", p) for _, _, p in sorted(builds))
    out.append(("system", library_names()[0]))
    found_name = ctypes.util.find_library("ctxdb")
    if found_name and found_name != library_names()[0]:
        out.append(("system", found_name))
    return out


def unloadable_sanitizer_build(path: str) -> Optional[str]:
    """Why dlopen'ing ``path`` would abort this process, or None.

    A library built with AddressSanitizer (CTXDB_SANITIZE=ON) needs its
    runtime loaded before everything else; dlopen'ing it into a normal
    interpreter makes the runtime end the process, which no try/except
    can catch.
    """
    runtime = sanitizer_runtime(path)
    if runtime and not _runtime_loaded(runtime):
        return (f"{path} is a sanitizer build (it links {runtime}); loading it "
                f"would abort the interpreter (preload the runtime with "
                f"LD_PRELOAD, or use a normal build)")
    return None


def load_library(env_value: Optional[str] = None, *, use_env: bool = True,
                 expected: Optional[int] = None) -> Tuple[ctypes.CDLL, str]:
    """Loads the first usable library; returns (CDLL, path).

    ``env_value`` defaults to the environment's CTXDB_LIB_PATH (when
    ``use_env``). Raises LibraryNotFound, LibraryError or AbiMismatch.
    """
    if env_value is None and use_env:
        env_value = os.environ.get(ENV_VAR) or None
    tried = []
    for source, path in candidates(env_value):
        if source != "system":
            why = unloadable_sanitizer_build(path)
            if why and source == "build":
                tried.append(why)
                continue
            if why:
                raise LibraryError("ctxdb: " + why)
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            if source == "env":
                raise LibraryError(f"ctxdb: cannot load {path} ({ENV_VAR}): {e}") from None
            tried.append(f"{path}: {e}")
            continue
        try:
            abi_fn = lib.ctxdb_abi_version
        except AttributeError:
            raise LibraryError(f"ctxdb: {path} is not a ctxdb library "
                               f"(no ctxdb_abi_version)") from None
        abi_fn.restype = ctypes.c_int
        abi_fn.argtypes = []
        check_abi(int(abi_fn()), path, expected)
        return lib, path
    raise LibraryNotFound(
        "ctxdb: cannot find the ctxdb shared library. Set "
        f"{ENV_VAR} to libctxdb.so.{EXPECTED_ABI} (or its directory), build it "
        "(cmake --build build --target ctxdb), or copy it into the package "
        "(cmake --build build --target python_lib). Tried: " + "; ".join(tried))
