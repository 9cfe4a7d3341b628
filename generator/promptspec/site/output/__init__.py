"""Writing sites outside MkDocs' build: `promptspec build --out`
(out_folder.py), a new site for a spec and a team's start (starter.py), and
the live examples expanded in hand-written pages (examples.py).

Sits above the build (`site/build.py`) and the page kinds; nothing in
`site/` but `plugin.py` imports it.
"""
