"""A release series (`promptspec history`, docs/history.md): the sides read
(series.py), each reduced to its variants' parts and counts (releases.py,
kept in release_cache.py), consecutive releases compared (compare.py) and the
result formatted (report.py).

May import the rest of `review/` (diff, lock, reach, sides); nothing in
`review/` outside this package imports it.
"""
