"""The distribution as a user gets it: build the sdist and the wheel, install
the wheel (built from the sdist, so the sdist is complete too) into a fresh
venv, and use it from a folder that is not the checkout.

The fresh venv gets promptspec only from the wheel (`--no-deps`); its
dependencies come from the test venv's site-packages, added to sys.path by a
.pth line (plain path lines do not run the test venv's own .pth files, so the
editable install of the checkout stays invisible). No network is needed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest
import yaml

import promptspec

from _helpers import MKDOCS_YML, REPO, TEMPLATES, repo_nav, subprocess_env
from required import require_module

pytestmark = pytest.mark.slow

SOURCES = ["pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "CHANGELOG.md", "generator", "templates"]


def _copy_sources(dest: Path) -> Path:
    """The files a release is built from, without the checkout's caches,
    build folders or egg-info (which would hide a missing MANIFEST entry)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist", "example")
    for name in SOURCES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        else:
            shutil.copy2(src, dest / name)
    return dest


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_module("build", "the 'build' package is in the test extras: pip install -e '.[test]'")
    src = _copy_sources(tmp_path_factory.mktemp("src"))
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
        capture_output=True, text=True, env=subprocess_env(), timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def fresh(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with the wheel installed; returns its bin folder."""
    root = tmp_path_factory.mktemp("venv") / "v"
    venv.EnvBuilder(with_pip=False).create(root)
    bindir = root / ("Scripts" if os.name == "nt" else "bin")
    py = bindir / ("python.exe" if os.name == "nt" else "python")
    purelib = Path(subprocess.check_output([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    (purelib / "_test_venv_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    [wheel] = dist.glob("*.whl")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return bindir


def _run(bindir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = subprocess_env(PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("PYTHONPATH", None)
    return subprocess.run([str(bindir / args[0]), *args[1:]], capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def test_the_sdist_and_wheel_carry_the_example_spec_license_and_metadata(dist: Path) -> None:
    [sdist] = dist.glob("promptspec_site-*.tar.gz")
    [wheel] = dist.glob("promptspec_site-*-py3-none-any.whl")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"templates/spec.yaml", "LICENSE", "CHANGELOG.md", "setup.py"} <= names
    with zipfile.ZipFile(wheel) as zf:
        files = set(zf.namelist())
        meta = zf.read(next(n for n in files if n.endswith(".dist-info/METADATA"))).decode()
    tracked = {p.relative_to(TEMPLATES).as_posix() for p in TEMPLATES.rglob("*") if p.is_file()}
    assert {f"promptspec/example/{p}" for p in tracked} <= files
    assert "promptspec/__main__.py" in files
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in files)
    assert {"promptspec/spec/schema/spec.schema.json", "promptspec/site/assets/promptspec.css"} <= files
    assert "Name: promptspec-site\n" in meta
    assert "License-Expression: MIT\n" in meta
    assert "Classifier: Framework :: MkDocs\n" in meta
    assert "Project-URL: Source, " in meta


def test_the_installed_wheel_works_from_another_folder(fresh: Path, tmp_path: Path) -> None:
    where = _run(fresh, "python", "-c", "import promptspec, sys; print(promptspec.__file__)", cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(fresh.parent), "promptspec came from the checkout, not the wheel"

    version = _run(fresh, "python", "-m", "promptspec", "--version", cwd=tmp_path)
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"promptspec {promptspec.__version__}"

    listing = _run(fresh, "promptspec", "list", "--format", "json", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    assert '"variants"' in listing.stdout and "harbor-5" in listing.stdout

    render = _run(fresh, "promptspec", "render", "--model", "harbor-5", "--mode", "plan", cwd=tmp_path)
    assert render.returncode == 0, render.stderr
    assert "<collaboration_mode>" in render.stdout

    out = _run(fresh, "promptspec", "build", "--out", "public", "--base", "none", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "public" / "prompts" / "index.md").is_file()

    # The MkDocs plugin, found through the wheel's entry point, builds strict.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Site\n\nSee the [matrix](prompts/index.md).\n", encoding="utf-8")
    spec = shutil.copytree(TEMPLATES, tmp_path / "spec")
    cfg = {"INHERIT": str(MKDOCS_YML), "docs_dir": "docs", "site_dir": "site",
           "plugins": [{"promptspec": {"spec": "spec", "base": "none"}}], "nav": repo_nav()}
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    site = _run(fresh, "python", "-m", "mkdocs", "build", "--strict", cwd=tmp_path)
    assert site.returncode == 0, site.stderr
    assert (tmp_path / "site" / "prompts" / "index.html").is_file()
    assert spec.is_dir()
