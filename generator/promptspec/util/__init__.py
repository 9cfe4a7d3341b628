"""Utilities with no knowledge of specs: atomic writes (atomic.py), progress
bars (progress.py) and escaped printing of untrusted text (terminal.py).
Imports nothing of promptspec but `errors`.
"""
