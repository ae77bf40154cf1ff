"""The package as users get it: the wheel built from this checkout, installed with its
dependencies from the package index into a fresh virtual environment, works without the source
tree -- so the ``dparray.backends`` mapping, the package data and the metadata cannot silently
break. The slow tests carry the ``packaging`` marker (``pytest -m packaging`` runs just them).
Also the version's single source, and the test run's own output (skips summed up per reason).
"""

from __future__ import annotations

import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import zipfile
from email import message_from_bytes
from email.message import Message
from importlib import metadata

import pytest

import dparray as dp

REPO = pathlib.Path(__file__).resolve().parents[1]
COMMAND_TIMEOUT = 600  # seconds; a cold pip cache downloads NumPy once
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "venv", "build", "dist", "*.egg-info",
                                    "__pycache__", ".*_cache", ".hypothesis", ".benchmarks",
                                    "site", "dparray-demo")
# A warning class named in the build backend's output (SetuptoolsDeprecationWarning, ...), or a
# distutils-style "warning: ..." line; pip's own "WARNING:" lines are about the index, not us.
BACKEND_WARNING = re.compile(r"\b[A-Za-z]*Warning\b|^\s*warning:", re.MULTILINE)

packaging = pytest.mark.packaging

SMOKE = textwrap.dedent("""
    import importlib.metadata
    import importlib.resources
    import pathlib
    import sys
    import tempfile

    import numpy as np

    import dparray as dp
    import dparray.backends.array_api
    import dparray.backends.cupy  # the adapter imports without CuPy; it is merely unavailable
    import dparray.backends.numpy
    from dparray import nn, optim
    from dparray.nn import functional as F

    version, source = sys.argv[1], sys.argv[2]
    package = pathlib.Path(dp.__file__).resolve().parent
    assert pathlib.Path(sys.prefix).resolve() in package.parents, f"imported from {package}"
    assert not any(entry.startswith(source) for entry in sys.path), sys.path
    assert importlib.resources.files("dparray").joinpath("py.typed").is_file()
    assert dp.__version__ == importlib.metadata.version("dparray") == version, dp.__version__
    assert "numpy" in dp.available_backends()

    dp.manual_seed(0)
    f64 = dp.float64
    module = nn.Sequential(nn.Linear(4, 8, dtype=f64), nn.Tanh(), nn.Linear(8, 3, dtype=f64))
    x = dp.randn(6, 4, dtype=f64)
    y = dp.tensor([0, 1, 2, 0, 1, 2])
    expected = F.cross_entropy(module(x), y).backward()
    parallel = dp.DataParallel(module, num_workers=2, execution="threads")
    grads = F.cross_entropy(parallel(x), y).backward()
    assert parallel.last_execution == "threads", parallel.last_execution
    for p in module.parameters():
        np.testing.assert_allclose(grads[p].numpy(), expected[p].numpy(), rtol=1e-12)
    optim.SGD(parallel.parameters(), lr=0.1).step(grads)

    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "model.safetensors"
        dp.save(parallel.state_dict(), path)
        loaded = dp.load(path)
    for name, tensor in parallel.state_dict().items():
        np.testing.assert_array_equal(loaded[name].numpy(), tensor.numpy())
    print("smoke ok")
""")


def _environment() -> dict[str, str]:
    """This process's environment without what would reach into the checkout or change
    dparray's defaults (the interpreter also runs isolated, ``-I``)."""
    return {key: value for key, value in os.environ.items()
            if key not in ("PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE")
            and not key.startswith("DPARRAY_")}


def _run(command: list[str], cwd: pathlib.Path) -> str:
    """Run ``command``; its output (stdout and stderr together), or a failure showing it all."""
    shown = shlex.join(command)
    try:
        result = subprocess.run(command, cwd=cwd, env=_environment(), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=COMMAND_TIMEOUT,
                                stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as error:
        partial = error.output.decode(errors="replace") if error.output else ""
        pytest.fail(f"`{shown}` ran past {COMMAND_TIMEOUT} s; its output so far:\n{partial}",
                    pytrace=False)
    if result.returncode != 0:
        pytest.fail(f"`{shown}` exited with status {result.returncode}:\n{result.stdout}",
                    pytrace=False)
    return result.stdout


def _pip(*args: str) -> list[str]:
    return [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """``(wheel path, verbose build log)`` for a wheel built from a copy of this checkout (so
    the build writes nothing here and stale build folders cannot leak into it)."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    log = _run(_pip("wheel", "--no-deps", "--verbose", "--wheel-dir", str(root / "dist"),
                    str(source)), cwd=root)
    wheels = list((root / "dist").glob("dparray-*.whl"))
    assert len(wheels) == 1, f"expected one dparray wheel, got {wheels}:\n{log}"
    return wheels[0], log


@pytest.fixture(scope="module")
def installed(built, tmp_path_factory):
    """The ``python`` of a fresh virtual environment holding the wheel and its dependencies."""
    wheel, _ = built
    root = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", "--without-pip", str(root / "env")], cwd=root)
    python = root / "env" / ("Scripts" if os.name == "nt" else "bin") / "python"
    _run(_pip("--python", str(python), "install", str(wheel)), cwd=root)
    yield python
    shutil.rmtree(root, ignore_errors=True)  # a few hundred MB, every run


def _wheel_version(wheel: pathlib.Path) -> str:
    return wheel.name.split("-")[1]


def _metadata_of(wheel: pathlib.Path) -> Message:
    with zipfile.ZipFile(wheel) as archive:
        return message_from_bytes(
            archive.read(f"dparray-{_wheel_version(wheel)}.dist-info/METADATA"))


@pytest.mark.integration
@packaging
def test_the_wheel_holds_every_module_py_typed_and_the_license(built):
    wheel, _ = built
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        license_text = archive.read(f"dparray-{_wheel_version(wheel)}.dist-info/licenses/LICENSE")
    source = {f"dparray/{p.relative_to(REPO / 'dparray').as_posix()}"
              for p in (REPO / "dparray").rglob("*.py") if "__pycache__" not in p.parts}
    source |= {f"dparray/backends/{p.relative_to(REPO / 'backends').as_posix()}"
               for p in (REPO / "backends").rglob("*.py") if "__pycache__" not in p.parts}
    assert "dparray/backends/numpy.py" in source
    assert source - names == set(), "modules of the checkout missing from the wheel"
    assert "dparray/py.typed" in names
    assert license_text == (REPO / "LICENSE").read_bytes()
    top_level = {name.split("/")[0] for name in names}
    assert top_level == {"dparray", f"dparray-{_wheel_version(wheel)}.dist-info"}, top_level
    assert not [name for name in names if name.endswith(".pyc")]


@pytest.mark.integration
@packaging
def test_the_wheel_metadata_names_the_license_version_and_typing(built):
    wheel, _ = built
    fields = _metadata_of(wheel)
    assert fields["License-Expression"] == "Apache-2.0"
    assert fields.get_all("License-File") == ["LICENSE"]
    assert fields["Version"] == metadata.version("dparray") == dp.__version__
    classifiers = fields.get_all("Classifier")
    assert "Typing :: Typed" in classifiers
    assert {f"Programming Language :: Python :: 3.{minor}" for minor in range(10, 14)} <= set(
        classifiers)
    assert not [c for c in classifiers if c.startswith("License ::")]  # the expression says it
    urls = dict(url.split(", ", 1) for url in fields.get_all("Project-URL"))
    assert {"Homepage", "Documentation"} <= set(urls)


@pytest.mark.integration
@packaging
def test_the_build_backend_warns_about_nothing(built):
    _, log = built
    warnings = [line for line in log.splitlines() if BACKEND_WARNING.search(line)]
    assert warnings == [], "the build backend warned:\n" + "\n".join(warnings) + "\n\n" + log


@pytest.mark.integration
@packaging
def test_the_installed_wheel_trains_without_the_source_tree(installed, tmp_path):
    script = tmp_path / "smoke.py"
    script.write_text(SMOKE)
    version = metadata.version("dparray")
    output = _run([str(installed), "-I", str(script), version, str(REPO)], cwd=tmp_path)
    assert output.strip().endswith("smoke ok"), output


@pytest.mark.integration
@packaging
def test_the_installed_console_script_runs(installed, tmp_path):
    command = installed.parent / ("dparray.exe" if os.name == "nt" else "dparray")
    output = _run([str(command), "info"], cwd=tmp_path)
    assert re.search(r"^\s+numpy\s+available", output, flags=re.MULTILINE), output


def test_the_version_is_the_installed_metadatas():
    assert dp.__version__ == metadata.version("dparray")


@pytest.mark.integration
def test_an_uninstalled_source_tree_has_a_recognisable_version():
    code = textwrap.dedent("""
        import importlib.metadata

        def not_installed(name):
            raise importlib.metadata.PackageNotFoundError(name)

        importlib.metadata.version = not_installed
        import dparray
        print(dparray.__version__)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0+unknown"


@pytest.mark.integration
def test_the_test_run_sums_up_skips_in_one_line_per_reason(tmp_path):
    (tmp_path / "test_skips.py").write_text(textwrap.dedent("""
        import pytest

        @pytest.mark.parametrize("i", range(3))
        def test_needs_a_device(i):
            pytest.skip("needs a device")

        @pytest.mark.skip(reason="not today")
        def test_later():
            pass

        def test_runs():
            pass
    """))
    environment = {**os.environ, "PYTHONPATH": str(REPO / "tests")}  # -p conftest: our hook
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(REPO / "pyproject.toml"), "--rootdir",
         str(tmp_path), "-p", "conftest", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=environment, check=False)
    lines = result.stdout.splitlines()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 tests skipped: needs a device" in lines, result.stdout
    assert "1 test skipped: not today" in lines, result.stdout
    assert not [line for line in lines if line.startswith("SKIPPED")], result.stdout
