"""MkDocs glue and `mkdocs serve` speed-ups: generated pages split into the
skeleton MkDocs renders and the raw HTML put back (fast_pages.py,
mkdocs_pages.py), the served site rebuilt in place (served_output.py), the
generated files an edit left as they were left out of a rebuild
(served_pages.py), the theme's compiled templates kept between builds
(compiled_templates.py), the cyclic garbage collector held off until a
rebuild is done (idle_collect.py), and what Material's search indexer
reads of a page: the page with its excluded elements emptied (search_input.py).

Used by `plugin.py`; imports no page kind.
"""
