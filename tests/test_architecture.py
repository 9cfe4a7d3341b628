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
MAX_MODULES = 15  # per folder; past this a folder holds several jobs and gets sub-packages

# Inside a stage the same rule holds between its parts: a sub-package, or a
# module at the top of the stage, may import parts of a lower rank (and
# itself), never one of an equal or higher rank.  "*" ranks the top-level
# modules of a stage that are not listed; a stage's __init__.py re-exports
# and is not ranked.
LAYERS = {
    "site": {
        "explorer": 0,  # its data file name is read by the index
        "index": 1,  # the page index every page kind shares
        "html": 2,  # markup, page parts, diagrams
        "pages": 3,  # one module per page kind
        "select": 4,
        "base": 4,
        "build": 5,  # pages from a pipeline Result
        "serve": 6,  # MkDocs glue and serve speed-ups
        "output": 6,  # build --out, site init, examples
        "plugin": 7,
    },
    "review": {"*": 0, "history": 1},
    "spec": {"*": 0, "readers": 1},
}


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


def test_no_folder_holds_several_jobs() -> None:
    folders: dict[str, int] = {}
    for p in _modules():
        key = str(p.parent.relative_to(PKG)) or "."
        folders[key] = folders.get(key, 0) + 1
    assert {k: n for k, n in folders.items() if n > MAX_MODULES} == {}


def _layer(name: str) -> tuple[str, str] | None:
    """(stage, part) of a dotted module name inside the package, for stages
    with LAYERS; None for a stage's own __init__ or an unlayered stage.  The
    top-level modules a stage does not list are one part, "*"."""
    parts = name.split(".")
    if parts[0] not in LAYERS or len(parts) < 2 or parts[1] == "__init__":
        return None
    if len(parts) == 2 and parts[1] not in LAYERS[parts[0]]:
        return parts[0], "*"
    return parts[0], parts[1]


def _rank(stage: str, part: str) -> int | None:
    """A listed part's rank; None for a part LAYERS does not list (an
    unlisted sub-package, or top-level modules in a stage without "*")."""
    return LAYERS[stage].get(part)


def _sideways(graph: dict[str, set[str]]) -> list[str]:
    wrong = []
    for name, targets in sorted(graph.items()):
        here = _layer(name)
        if here is None:
            continue
        for target in sorted(targets):
            there = _layer(target) if target.split(".")[0] == here[0] else None
            if there is None or there[1] == here[1]:
                continue
            a, b = _rank(*here), _rank(*there)
            if a is None or b is None or b >= a:
                wrong.append(f"{name} imports {target}")
    return wrong


def test_parts_of_a_stage_import_downwards() -> None:
    assert _sideways(_module_graph(_package_sources())) == []


def test_every_part_of_a_layered_stage_is_ranked() -> None:
    parts = {_layer(n) for n in _package_sources()} - {None}
    assert sorted(f"{s}/{p}" for s, p in parts if _rank(s, p) is None) == []


def test_the_layer_checker_sees_an_upward_import() -> None:
    graph = {
        "site.html.markup": {"site.pages.summary", "site.index"},
        "site.pages.summary": {"site.html.markup", "site.pages.variant"},
        "review.diff": {"review.history.compare", "review.lockfile"},
        "review.__init__": {"review.history.compare"},
    }
    assert _sideways(graph) == ["review.diff imports review.history.compare", "site.html.markup imports site.pages.summary"]


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


def _module_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """Module -> the promptspec modules it imports, anywhere in its body
    (an import inside a function is still a dependency), package __init__s
    included; `sources` maps dotted names inside the package to their text."""
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for name, text in sources.items():
        is_pkg = name.endswith(".__init__") or name == "__init__"
        here = name.split(".")[:-1] if not is_pkg else name.split(".")[:-1]
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
                target = ".".join(base + (node.module.split(".") if node.module else []))
                for alias in node.names:
                    for cand in (f"{target}.{alias.name}" if target else alias.name, target):
                        key = cand if cand in sources else f"{cand}.__init__" if cand else ""
                        if key in sources:
                            graph[name].add(key)
                            break
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                module = node.module if isinstance(node, ast.ImportFrom) else None
                for full in [module] if module else [a.name for a in node.names]:
                    if full and full.startswith("promptspec."):
                        cand = full.split(".", 1)[1]
                        key = cand if cand in sources else f"{cand}.__init__"
                        if key in sources:
                            graph[name].add(key)
        graph[name].discard(name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    group.append(w)
                    if w == v:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def _package_sources() -> dict[str, str]:
    return {".".join(p.relative_to(PKG).with_suffix("").parts): p.read_text(encoding="utf-8") for p in _modules()}


def test_no_two_modules_import_each_other() -> None:
    """No import cycle anywhere, between folders or inside one, counting
    imports made inside functions (review/diff.py and diff_json.py once
    imported each other that way)."""
    assert _cycles(_module_graph(_package_sources())) == []


def test_the_cycle_checker_sees_a_cycle() -> None:
    sources = {
        "review.__init__": "from .diff import Diff\n",
        "review.diff": "def f():\n    from .diff_json import data\n",
        "review.diff_json": "from .diff import Diff\n",
        "review.report": "from . import diff\nfrom ..spec import model\n",
        "spec.__init__": "",
        "spec.model": "import promptspec.review.report\n",
    }
    graph = _module_graph(sources)
    assert graph["review.report"] == {"review.diff", "spec.model"}
    assert graph["review.diff"] == {"review.diff_json"}  # an import inside a function counts
    assert sorted(_cycles(graph)) == [["review.diff", "review.diff_json"], ["review.report", "spec.model"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
