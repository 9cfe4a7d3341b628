"""Authoring: helping people write specs -- lint rules (lint.py, lint_rules.py,
findings.py) and scaffolding of new fragments, modes and personalities
(scaffold.py).

May import `pipeline` and everything below it.
"""
