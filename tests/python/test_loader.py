"""The library loader: CTXDB_LIB_PATH, lib/, build trees, the ABI check;
and the package importable/installable in plain interpreters."""
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ctxdb
from ctxdb import _capi, _loader
from conftest import BINDINGS, subprocess_env

SONAME = _loader.library_names()[0]  # libctxdb.so.1


# ---- the ABI check -----------------------------------------------------------------

def test_check_abi_accepts_the_expected_version():
    _loader.check_abi(_loader.EXPECTED_ABI, "/x/libctxdb.so.1")
    assert _loader.EXPECTED_ABI == _capi.ABI_VERSION == 1


@pytest.mark.parametrize("found", [0, 2, 99, -1])
def test_check_abi_refuses_another_version(found):
    with pytest.raises(ctxdb.AbiMismatch) as e:
        _loader.check_abi(found, "/x/libctxdb.so.7")
    assert isinstance(e.value, ImportError)
    assert e.value.found == found and e.value.expected == 1
    msg = str(e.value)
    assert f"ABI version {found}" in msg and "needs ABI version 1" in msg
    assert "/x/libctxdb.so.7" in msg


def test_load_refuses_real_library_when_expecting_another_abi(lib_path, monkeypatch):
    monkeypatch.setattr(_loader, "EXPECTED_ABI", 2)
    with pytest.raises(ctxdb.AbiMismatch) as e:
        _loader.load_library(lib_path)
    assert e.value.found == 1 and e.value.expected == 2
    assert "needs ABI version 2" in str(e.value)


def test_ctxdb_lib_path_is_what_gets_loaded(lib_path):
    env = os.environ.get("CTXDB_LIB_PATH")
    if not env:
        pytest.skip("CTXDB_LIB_PATH is not set")
    if os.path.isdir(env):
        assert os.path.dirname(_capi.loaded_path()) == env.rstrip("/")
    else:
        assert lib_path == os.path.realpath(env)


def test_the_loaded_library_speaks_our_abi(lib_path):
    assert _capi.ctxdb_abi_version() == _loader.EXPECTED_ABI


def header_prototypes():
    """{name: normalized prototype} of every CTXDB_API function in ctxdb.h."""
    header = (BINDINGS.parents[1] / "include" / "ctxdb" / "ctxdb.h").read_text()
    out = {}
    for proto in re.findall(r"^CTXDB_API\s+(.*?\))\s*;", header, re.S | re.M):
        proto = " ".join(proto.split())
        out[re.search(r"(ctxdb_\w+)\(", proto).group(1)] = proto
    return out


def test_capi_mirrors_every_header_function(lib_path):
    protos = header_prototypes()
    assert len(protos) >= 19
    assert set(protos) == set(_capi.FUNCTIONS)
    source = (BINDINGS / "ctxdb" / "_capi.py").read_text()
    comments = " ".join(" ".join(line.strip()[1:].split())
                        for line in source.splitlines() if line.strip().startswith("#"))
    for (name, restype, argtypes) in _capi._PROTOTYPES:
        proto = protos[name]
        assert proto + ";" in comments, f"no prototype comment for {name}"
        params = proto[proto.index("(") + 1:-1]
        n = 0 if params == "void" else params.count(",") + 1
        assert len(argtypes) == n, name
        assert (restype is None) == proto.startswith("void "), name
        assert getattr(_capi, name).argtypes == list(argtypes)


# ---- CTXDB_LIB_PATH -----------------------------------------------------------------

def test_env_file_and_directory(lib_path, tmp_path):
    lib, path = _loader.load_library(lib_path)
    assert os.path.realpath(path) == lib_path
    d = tmp_path / "libdir"
    d.mkdir()
    shutil.copy(lib_path, d / SONAME)
    lib, path = _loader.load_library(str(d))
    assert path == str(d / SONAME)


def test_env_naming_nothing_is_an_error(tmp_path):
    with pytest.raises(ctxdb.LibraryNotFound, match="does not exist"):
        _loader.load_library(str(tmp_path / "missing.so"))
    with pytest.raises(ctxdb.LibraryNotFound, match="directory without"):
        _loader.load_library(str(tmp_path))


def test_env_naming_a_non_library(tmp_path):
    p = tmp_path / "libctxdb.so.1"
    p.write_text("not an ELF file")
    with pytest.raises(ctxdb.LibraryError, match="cannot load"):
        _loader.load_library(str(p))


def test_env_naming_a_foreign_library():
    import _sqlite3  # a shared object without ctxdb's symbols
    with pytest.raises(ctxdb.LibraryError, match="not a ctxdb library"):
        _loader.load_library(_sqlite3.__file__)


# ---- the search order --------------------------------------------------------------------

def touch(p: Path, content=b"\x7fELF fake", mtime=None):
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(content)
    if mtime is not None:
        os.utime(p, (mtime, mtime))
    return str(p)


def test_candidates_order(tmp_path):
    pkg = tmp_path / "pkg"
    repo = tmp_path / "repo"
    touch(repo / "include" / "ctxdb" / "ctxdb.h")
    now = time.time()
    in_pkg = touch(pkg / "lib" / SONAME)
    old = touch(repo / "build-old" / SONAME, mtime=now - 100)
    main = touch(repo / "build" / SONAME, mtime=now - 50)
    new = touch(repo / "build-new" / SONAME, mtime=now)
    touch(repo / "build-empty" / "other.txt")
    c = _loader.candidates(None, pkg, repo)
    assert c[:4] == [("package", in_pkg), ("build", main), ("build", new), ("build", old)]
    assert c[4] == ("system", SONAME)
    # no ctxdb checkout there: no build trees
    assert all(s != "build" for s, _ in _loader.candidates(None, pkg, tmp_path))
    # CTXDB_LIB_PATH wins alone
    assert _loader.candidates(in_pkg, pkg, repo) == [("env", in_pkg)]


def test_sanitizer_build_detection(lib_path, tmp_path):
    fake = touch(tmp_path / "asan" / SONAME, b"\x7fELF...\0libasan.so.8\0...")
    assert _loader.sanitizer_runtime(fake) == "libasan.so"
    assert "sanitizer build" in _loader.unloadable_sanitizer_build(fake)
    assert _loader.sanitizer_runtime(lib_path) is None
    assert _loader.unloadable_sanitizer_build(lib_path) is None
    # named explicitly, it is refused instead of aborting the interpreter
    with pytest.raises(ctxdb.LibraryError, match="sanitizer build"):
        _loader.load_library(fake)


def make_checkout(root: Path, lib_path: str) -> Path:
    """A fake repository: the package, ctxdb.h and build trees."""
    shutil.copytree(BINDINGS / "ctxdb", root / "bindings" / "python" / "ctxdb",
                    ignore=shutil.ignore_patterns("lib", "__pycache__"))
    touch(root / "include" / "ctxdb" / "ctxdb.h", b"/* header */")
    return root / "bindings" / "python"


def loaded_path_in_child(pythonpath: Path, python=sys.executable, **env) -> str:
    code = ("import ctxdb, ctxdb._capi as c; ctxdb.version(); "
            "print(c.loaded_path())")
    r = subprocess.run([python, "-c", code], capture_output=True, text=True,
                       env=subprocess_env(PYTHONPATH=str(pythonpath), **env),
                       cwd="/", timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_fallback_to_build_tree_skipping_sanitizer_builds(lib_path, tmp_path):
    root = tmp_path / "checkout"
    pkg_root = make_checkout(root, lib_path)
    now = time.time()
    # build/ is preferred but holds an ASan build: loading it would abort
    touch(root / "build" / SONAME, b"\x7fELF\0libasan.so.8\0", mtime=now)
    good = root / "build-rel" / SONAME
    good.parent.mkdir()
    shutil.copy(lib_path, good)
    assert loaded_path_in_child(pkg_root) == str(good)
    # the package's lib/ comes before the build trees
    (pkg_root / "ctxdb" / "lib").mkdir()
    shutil.copy(lib_path, pkg_root / "ctxdb" / "lib" / SONAME)
    assert loaded_path_in_child(pkg_root) == str(pkg_root / "ctxdb" / "lib" / SONAME)
    # and CTXDB_LIB_PATH before everything
    assert loaded_path_in_child(pkg_root, CTXDB_LIB_PATH=str(good)) == str(good)


def test_child_with_wrong_env_fails_cleanly(tmp_path):
    code = "import ctxdb\ntry:\n ctxdb.version()\nexcept ctxdb.LibraryNotFound as e:\n print('refused:', e)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=subprocess_env(CTXDB_LIB_PATH=str(tmp_path / "nope")),
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("refused:") and "CTXDB_LIB_PATH" in r.stdout


# ---- plain interpreters and pip -------------------------------------------------------------

def interpreters():
    """/usr/bin/python3, the python3 on PATH (e.g. pyenv's) and this one."""
    found = []
    for p in ["/usr/bin/python3", shutil.which("python3"), sys.executable]:
        if p and os.path.exists(p) and p not in found:
            found.append(p)
    return found


@pytest.mark.parametrize("python", interpreters())
def test_importable_in_plain_python(python, lib_path, tmp_path):
    code = ("import ctxdb, sys\n"
            "with ctxdb.open(sys.argv[1]) as db:\n"
            "    s = db.create_session(agent_id='a')\n"
            "    db.append(s['id'], type='UserPromptSubmitted', actor='u', payload={'text': 'hi'})\n"
            "    print(sum(1 for _ in db.events(s['id'])), db.verify()['ok'])\n"
            # left open at exit: the finalizers must free them cleanly
            "db2 = ctxdb.open(sys.argv[1])\n"
            "it = db2.events(s['id'])\n"
            "next(it)\n"
            "it2 = db2.export()\n")
    r = subprocess.run([python, "-c", code, str(tmp_path / "x.ctxdb")],
                       capture_output=True, text=True, timeout=120,
                       env=subprocess_env(CTXDB_LIB_PATH=lib_path), cwd="/")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["2", "True"]


def pip(python, *args):
    r = subprocess.run([python, "-m", "pip", *args], capture_output=True,
                       text=True, timeout=300,
                       env=subprocess_env(PIP_DISABLE_PIP_VERSION_CHECK="1"))
    if r.returncode != 0 and "No module named pip" in r.stderr:
        pytest.skip(f"pip is not installed for {python}")
    if r.returncode != 0 and "invalid command 'bdist_wheel'" in r.stderr:
        pytest.skip(f"the wheel package is not installed for {python}")
    return r


@pytest.fixture(scope="module")
def source_with_lib(lib_path, tmp_path_factory):
    """A copy of bindings/python with the library bundled in ctxdb/lib/."""
    src = tmp_path_factory.mktemp("pip") / "src"
    shutil.copytree(BINDINGS, src, ignore=shutil.ignore_patterns(
        "lib", "build", "*.egg-info", "__pycache__"))
    (src / "ctxdb" / "lib").mkdir()
    shutil.copy(lib_path, src / "ctxdb" / "lib" / SONAME)
    return src


def test_pip_install_bundles_the_library(source_with_lib, tmp_path):
    """`pip install bindings/python`, build isolation and all: no index needed."""
    site = tmp_path / "site"
    r = pip(sys.executable, "install", "-q", "--no-index",
            "--no-deps", "--target", str(site), str(source_with_lib))
    assert r.returncode == 0, r.stderr
    assert (site / "ctxdb" / "py.typed").is_file()
    assert (site / "ctxdb" / "lib" / SONAME).is_file()
    assert loaded_path_in_child(site) == str(site / "ctxdb" / "lib" / SONAME)


@pytest.mark.parametrize("python", interpreters())
def test_wheel_installs_in_every_interpreter(python, source_with_lib, tmp_path):
    """A wheel built once installs (without a build backend) anywhere."""
    dist = tmp_path / "dist"
    r = pip(sys.executable, "wheel", "-q", "--no-index",
            "--no-deps", "-w", str(dist), str(source_with_lib))
    assert r.returncode == 0, r.stderr
    wheel, = dist.glob("ctxdb-*.whl")
    site = tmp_path / "site"
    r = pip(python, "install", "-q", "--no-index", "--no-deps", "--target",
            str(site), str(wheel))
    assert r.returncode == 0, r.stderr
    assert loaded_path_in_child(site, python=python) == str(site / "ctxdb" / "lib" / SONAME)
