"""One module per page kind: the matrix, axis, variant, fragment, tool,
conversation, lint, Changes, conformance, history and summary pages.  Each
takes the `SiteIndex` and returns Markdown.

May import `site/index.py`, `site/html/` and `site/explorer/`; never the
build, the MkDocs glue (`site/serve/`, `plugin.py`) or the output writers.
"""
