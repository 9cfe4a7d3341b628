"""Utilities with no knowledge of specs: atomic writes (atomic.py) and progress
bars (progress.py).  Imports nothing of promptspec but `errors`.
"""
