"""The values templates read, in the forms the Assembler's render cache keys on.

A cache key holds what a template read: plain values frozen into tuples
(`freeze`), and records (`Record`: `model`, `tools`...) by a small token
instead of their fields, so that a key stays cheap to build and compare.
Reading a record's field notes where it came from (provenance)."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping

from ..spec.provenance import SourceRef


def freeze(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, Mapping):
        return tuple(sorted(((repr(k), freeze(v)) for k, v in value.items()), key=lambda kv: kv[0]))
    return id(value)


class Record(Mapping[str, Any]):
    """A read-only record for templates (`model.slug`), hashed by a token so
    cache keys stay cheap."""

    def __init__(self, token: Any, data: Mapping[str, Any], sources: Mapping[str, Iterable[SourceRef]] | None = None, log: Any = None):
        self._token = token
        self._data = dict(data)
        # Provenance: reading a field notes where that field came from.
        self._sources = {k: tuple(v) for k, v in (sources or {}).items()}
        self._log = log

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            value = self._data[name]
        except KeyError:
            raise AttributeError(name) from None
        if self._log is not None:
            self._log.note_all(self._sources.get(name, ()))
        return value

    def __getitem__(self, key: str) -> Any:
        value = self._data[key]
        if self._log is not None:
            self._log.note_all(self._sources.get(key, ()))
        return value

    def __iter__(self) -> Iterator[str]:
        if self._log is not None:
            for refs in self._sources.values():
                self._log.note_all(refs)
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(self._token)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and other._token == self._token

    def __repr__(self) -> str:
        return f"<{self._token}>"
