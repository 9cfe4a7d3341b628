"""The package's layout is a rule, not a convention: imports run one way
through the stages (docs/architecture.md), every stage says what it holds, and
no module grows into several jobs."""

from __future__ import annotations

import ast
from pathlib import Path

import promptspec

PKG = Path(promptspec.__file__).resolve().parent

# Lower rank = nearer the data. A module may import its own stage and any stage
# of a lower rank, never a higher one; stages of equal rank stay independent.
RANK = {
    "errors": 0,
    "util": 1,
    "spec": 1,
    "render": 2,
    "assemble": 3,
    "measure": 4,
    "pipeline": 5,
    "oracle": 5,
    "importers": 6,
    "review": 6,
    "authoring": 6,
    "verify": 7,  # groups its report by axis with review/reach.py
    "site": 8,
    "cli": 9,
    "__main__": 10,
}
MAX_LINES = 600  # the aim is ~500; past this a module holds more than one job


def _stage(parts: tuple[str, ...]) -> str:
    return parts[0]


def _imports(text: str, parts: tuple[str, ...]) -> list[tuple[int, str]]:
    """(line, stage) of every promptspec module that `text`, the module at
    `parts` inside the package, imports."""
    package = list(parts[:-1])
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - (node.level - 1)]
            target = base + (node.module.split(".") if node.module else [])
            names = [target] if target else [[a.name] for a in node.names]
            out += [(node.lineno, t[0]) for t in names]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            for name in [module] if module else [a.name for a in node.names]:
                if name and name.startswith("promptspec."):
                    out.append((node.lineno, name.split(".")[1]))
    return out


def _wrong_way(text: str, parts: tuple[str, ...]) -> list[str]:
    here = _stage(parts)
    return [
        f"{'/'.join(parts)}.py:{line}: {here} imports {there}"
        for line, there in _imports(text, parts)
        if there not in ("__version__", here) and there in RANK and RANK[there] >= RANK[here]
    ]


def _modules() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_stage_is_ranked() -> None:
    stages = {_stage(p.relative_to(PKG).with_suffix("").parts) for p in _modules()} - {"__init__"}
    assert stages <= set(RANK), f"add {sorted(stages - set(RANK))} to RANK and to docs/architecture.md"


def test_imports_run_one_way() -> None:
    wrong = []
    for path in _modules():
        parts = path.relative_to(PKG).with_suffix("").parts
        if parts != ("__init__",):
            wrong += _wrong_way(path.read_text(encoding="utf-8"), parts)
    assert wrong == []


def test_every_stage_package_says_what_it_holds() -> None:
    for init in sorted(PKG.rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc) > 40, f"{init.relative_to(PKG)} needs a docstring saying what the folder holds"


def test_no_module_holds_several_jobs() -> None:
    long = {str(p.relative_to(PKG)): n for p in _modules() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_the_checker_sees_a_wrong_way_import() -> None:
    """The rule above is only as good as `_imports`: a spec module reaching up
    into the site or the CLI must be caught, a sideways import within a stage
    must not."""
    text = "from ..site import build\nimport promptspec.cli\nfrom .files import SpecFS\nfrom ..errors import SpecError\n"
    assert [s for _, s in _imports(text, ("spec", "model"))] == ["site", "cli", "spec", "errors"]
    assert _wrong_way(text, ("spec", "model")) == ["spec/model.py:1: spec imports site", "spec/model.py:2: spec imports cli"]


def test_the_documented_python_example_runs(capsys, monkeypatch) -> None:
    """docs/architecture.md shows the public API; the example must run as written."""
    doc = (PKG.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    code = doc.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(PKG.parents[1])
    exec(compile(code, "docs/architecture.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    spec = promptspec.load_spec("templates")
    assert len(lines) == len(promptspec.matrix(spec)) > 1
    assert lines[0].startswith("harbor-5/") and lines[0].endswith(" %")
