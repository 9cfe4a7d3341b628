"""Reading a spec folder into `spec.model`: `load.py` reads `spec.yaml` and
validates it, with one reader per file kind (catalog.py for models.json,
tools.py, turns.py, scripts.py, shaping.py, exact.py), the shared `Reader`
(reader.py) and YAML/JSON parsed with line numbers (sources.py).

May import the rest of `spec/` (model, files, provenance, limits); nothing in
`spec/` outside this package imports it but `spec/__init__.py`.
"""
