#!/usr/bin/env python3
"""Count the checks in a test tree: `assert` statements and `pytest.raises` uses.

    python3 bench/count_assertions.py [TESTS_DIR]   # default: tests/ beside this script

A static count (ast), so it compares two checkouts without running either:
used to show that moving tests in-process dropped no check.  `pytest.raises`
counts calls (as a context manager or a function); `pytest.warns` and
`pytest.fail` are listed too, for the record.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path


def count(tree: Path) -> Counter:
    totals: Counter = Counter()
    for path in sorted(tree.rglob("*.py")):
        module = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(module):
            if isinstance(node, ast.Assert):
                totals["assert"] += 1
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id == "pytest" and \
                    node.func.attr in ("raises", "warns", "fail"):
                totals[f"pytest.{node.func.attr}"] += 1
        totals["files"] += 1
    return totals


def main(argv: list[str]) -> int:
    tree = Path(argv[0]) if argv else Path(__file__).resolve().parents[1] / "tests"
    c = count(tree)
    print(f"{tree}: {c['files']} files, {c['assert']} assert, {c['pytest.raises']} pytest.raises "
          f"(checks: {c['assert'] + c['pytest.raises']}); also {c['pytest.warns']} pytest.warns, {c['pytest.fail']} pytest.fail")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
