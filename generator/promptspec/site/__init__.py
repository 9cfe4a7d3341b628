"""The site: the MkDocs plugin (plugin.py), the page index every page shares
(index.py), one module per page kind, the explorer, diagrams (mermaid.py),
HTML markup helpers (markup.py), hand-written pages' examples (examples.py)
and the CSS/JS assets.  `build.py` turns a pipeline Result into pages, with or
without MkDocs.

May import everything but `cli`; nothing imports `site` but `cli`.  This
package imports nothing on its own, so loading the plugin entry point stays
cheap.
"""
