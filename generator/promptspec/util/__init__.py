"""Utilities with no knowledge of specs: atomic writes (atomic.py), progress
bars (progress.py), escaped printing of untrusted text (terminal.py), GitHub
Markdown that spec text cannot bring to life (gh_markdown.py) and the one
budgeted line diff (textdiff.py).
Imports nothing of promptspec but `errors`.
"""
