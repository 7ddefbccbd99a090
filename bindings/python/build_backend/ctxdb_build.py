"""The build backend of the ctxdb Python package (PEP 517), standard library only.

pip builds a package in an isolated environment and first installs the
backend's requirements into it; setuptools would have to be downloaded, so
``pip install bindings/python`` failed on a machine with no index. This
backend needs nothing: it writes the wheel with ``zipfile``.

The wheel ships the shared library in ``ctxdb/lib/``, where the loader looks
first after ``CTXDB_LIB_PATH`` (see ctxdb/_loader.py). The library comes
from, in order:

1. ``CTXDB_LIB_PATH`` at build time: a library file, or a directory holding
   ``libctxdb.so.1``;
2. ``ctxdb/lib/`` in the source tree (``cmake --build build --target
   python_lib`` fills it);
3. the repository's ``build/`` tree (``libctxdb.so.1``), when the package is
   built from a checkout that was built;
4. none: the wheel is pure Python (tagged ``py3-none-any``) and uses a
   library installed on the system (``cmake --install``), as the loader's
   last step finds it.

A wheel with a library is tagged for this platform (``py3-none-linux_x86_64``
here): it holds machine code.
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import sysconfig
import tarfile
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

_ROOT = Path(__file__).resolve().parents[1]  # bindings/python
_REPO = _ROOT.parents[1]
_LIBRARY = "libctxdb.so.1"

__all__ = ["build_wheel", "build_sdist", "get_requires_for_build_wheel",
           "get_requires_for_build_sdist"]


def get_requires_for_build_wheel(config_settings=None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings=None) -> List[str]:
    return []


def _project() -> Dict[str, str]:
    """name, version, description and requires-python from pyproject.toml."""
    text = (_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    project = text.split("[project]", 1)[1].split("\n[", 1)[0]
    fields = {}
    for key in ("name", "version", "description", "requires-python"):
        m = re.search(rf'^{re.escape(key)}\s*=\s*"([^"]*)"', project, re.M)
        if not m:
            raise ValueError(f"pyproject.toml: [project] has no {key}")
        fields[key] = m.group(1)
    return fields


def _library() -> Optional[Path]:
    """The shared library to ship, or None (see the module's docstring)."""
    named = os.environ.get("CTXDB_LIB_PATH")
    if named:
        path = Path(named)
        if path.is_dir():
            path = path / _LIBRARY
        if not path.is_file():
            raise FileNotFoundError(f"CTXDB_LIB_PATH={named}: no {_LIBRARY} there")
        return path
    for path in (_ROOT / "ctxdb" / "lib" / _LIBRARY, _REPO / "build" / _LIBRARY):
        if path.is_file():
            return path
    return None


def _package_files(library: Optional[Path]) -> List[Tuple[str, Path]]:
    """(name in the wheel, source file) for every file the package installs."""
    files = [(f"ctxdb/{p.name}", p) for p in sorted((_ROOT / "ctxdb").iterdir())
             if p.is_file() and (p.suffix == ".py" or p.name == "py.typed")]
    if library:
        files.append((f"ctxdb/lib/{_LIBRARY}", library.resolve()))
    return files


def _metadata(p: Dict[str, str]) -> str:
    readme = (_ROOT / "README.md").read_text(encoding="utf-8")
    return (f"Metadata-Version: 2.1\nName: {p['name']}\nVersion: {p['version']}\n"
            f"Summary: {p['description']}\nRequires-Python: {p['requires-python']}\n"
            "Classifier: Programming Language :: Python :: 3\n"
            "Classifier: Typing :: Typed\n"
            f"Description-Content-Type: text/markdown\n\n{readme}")


def _platform_tag() -> str:
    return re.sub(r"[-.]", "_", sysconfig.get_platform())


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    p = _project()
    library = _library()
    tag = f"py3-none-{_platform_tag()}" if library else "py3-none-any"
    dist_info = f"{p['name']}-{p['version']}.dist-info"
    wheel_name = f"{p['name']}-{p['version']}-{tag}.whl"
    entries = [(name, src.read_bytes()) for name, src in _package_files(library)]
    entries.append((f"{dist_info}/METADATA", _metadata(p).encode()))
    entries.append((f"{dist_info}/WHEEL", (
        "Wheel-Version: 1.0\nGenerator: ctxdb_build\n"
        f"Root-Is-Purelib: {'false' if library else 'true'}\nTag: {tag}\n").encode()))
    entries.append((f"{dist_info}/top_level.txt", b"ctxdb\n"))
    record = [_record_line(name, data) for name, data in entries]
    record.append(f"{dist_info}/RECORD,,")
    entries.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    path = Path(wheel_directory) / wheel_name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            # The library keeps its execute bit; everything else is 0644.
            mode = 0o755 if name.endswith(_LIBRARY) else 0o644
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return wheel_name


def build_sdist(sdist_directory, config_settings=None) -> str:
    """The package's sources (never the bundled library) as a .tar.gz."""
    p = _project()
    base = f"{p['name']}-{p['version']}"
    sources = [(f"ctxdb/{n.split('/', 1)[1]}", s) for n, s in _package_files(None)]
    sources += [(n, _ROOT / n) for n in ("pyproject.toml", "README.md",
                                         "build_backend/ctxdb_build.py")]
    path = Path(sdist_directory) / f"{base}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        pkg_info = _metadata(p).encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        tar.addfile(info, io.BytesIO(pkg_info))
        for name, src in sources:
            tar.add(src, arcname=f"{base}/{name}")
    return path.name
