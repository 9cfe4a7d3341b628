"""Running a real agent and comparing the requests it sends with the spec's."""

from ..oracle.compare import Outcome, compare
from .run import Report, VariantResult, verify

__all__ = ["Outcome", "Report", "VariantResult", "compare", "verify"]
