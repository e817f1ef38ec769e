"""What the sdist and the wheel hold: the license, a description without the Space's YAML front matter, and no
tests (the sdist does not ship them, so none can be half there without their helpers)."""

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """The folder of the sdist and the wheel."""
    # Built from a copy: setuptools writes build/ and *.egg-info beside the sources, which must stay clean.
    folder = tmp_path_factory.mktemp("packaging")
    sources = folder / "sources"
    shutil.copytree(
        ROOT, sources, ignore=shutil.ignore_patterns(".*", "__pycache__", "build", "*.egg-info", "artifacts")
    )
    dist = folder / "dist"
    for command in (
        [sys.executable, "setup.py", "-q", "sdist", "-d", str(dist)],
        [sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist)],
    ):
        completed = subprocess.run(command, cwd=sources, capture_output=True, text=True, timeout=600)
        assert completed.returncode == 0, completed.stderr
    return dist


@pytest.fixture(scope="module")
def built(dist):
    """(the sdist's files, its PKG-INFO, the wheel's files, its METADATA)."""
    (sdist,) = dist.glob("bartscore-*.tar.gz")
    (wheel,) = dist.glob("bartscore-*.whl")
    with tarfile.open(sdist) as archive:
        sdist_files = {name.split("/", 1)[1]: archive for name in archive.getnames() if "/" in name}
        pkg_info = archive.extractfile(next(n for n in archive.getnames() if n.endswith("/PKG-INFO"))).read()
    with zipfile.ZipFile(wheel) as archive:
        wheel_files = set(archive.namelist())
        metadata = archive.read(next(n for n in wheel_files if n.endswith(".dist-info/METADATA"))).decode()
    return set(sdist_files), pkg_info.decode(), wheel_files, metadata


def description(metadata):
    """The long description: the metadata's body after the blank line that ends its headers."""
    return metadata.split("\n\n", 1)[1]


@pytest.mark.slow
def test_the_license_is_in_the_sdist_and_the_wheel(built):
    sdist_files, _, wheel_files, metadata = built
    with open(os.path.join(ROOT, "LICENSE"), encoding="utf-8") as handle:
        license_text = handle.read()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    assert "LICENSE" in sdist_files
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in wheel_files)
    assert "License-Expression: Apache-2.0" in metadata


@pytest.mark.slow
def test_the_description_is_the_card_without_the_spaces_front_matter(built):
    _, pkg_info, _, metadata = built
    for text in (metadata, pkg_info):
        body = description(text)
        assert body.startswith("# ") and not body.startswith("---")
        assert "sdk: gradio" not in body and "app_file:" not in body


@pytest.mark.slow
def test_neither_archive_ships_tests_or_the_space(built):
    sdist_files, _, wheel_files, _ = built
    for files in (sdist_files, wheel_files):
        assert not [name for name in files if name.startswith(("tests/", "bench/", "space/")) or name == "app.py"]
    assert "bart_score/scoring/engine.py" in sdist_files and "bart_score/scoring/engine.py" in wheel_files
    # py.typed travels with the package when the package has one
    if os.path.exists(os.path.join(ROOT, "bart_score", "py.typed")):
        assert "bart_score/py.typed" in sdist_files and "bart_score/py.typed" in wheel_files


@pytest.mark.slow
def test_the_wheel_holds_every_module_of_the_package(built):
    """Every module file of bart_score, subpackages included, is in the wheel (a subpackage that packaging missed
    would import here, from the checkout, and fail on a fresh install)."""
    _, _, wheel_files, _ = built
    package = os.path.join(ROOT, "bart_score")
    modules = {
        os.path.relpath(os.path.join(folder, name), ROOT).replace(os.sep, "/")
        for folder, _, names in os.walk(package)
        for name in names
        if name.endswith(".py")
    }
    assert {"bart_score/baselines/files.py", "bart_score/models/loading.py"} <= modules
    assert modules - wheel_files == set()


@pytest.mark.slow
def test_the_installed_package_names_the_metric_module_installed_beside_it(dist, tmp_path):
    """bartscore.py is installed beside bart_score, where bart_score.METRIC_PATH finds it: installed from the wheel
    into a folder of its own and imported from another, the path is the installed file's."""
    (wheel,) = dist.glob("bartscore-*.whl")
    target = tmp_path / "installed"
    install = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", str(target)]
    completed = subprocess.run([*install, str(wheel)], capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = "import os, bart_score; print(bart_score.METRIC_PATH); print(os.path.isfile(bart_score.METRIC_PATH))"
    completed = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        env={**os.environ, "PYTHONPATH": str(target)},
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == [str(target / "bartscore.py"), "True"]
