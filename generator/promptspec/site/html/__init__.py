"""HTML parts every page kind uses: escaping and Markdown/HTML helpers
(markup.py), shared page pieces (page_parts.py) and diagrams (diagram.py as
offline HTML, mermaid.py for sites that opt in).

Lowest layer of `site/`: imports only `site/index.py` and the stages below
`site`, never a page kind, the build or the MkDocs glue.
"""
