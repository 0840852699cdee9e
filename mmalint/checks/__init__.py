"""The rules layer: normalized MMA calls in, findings out."""

from mmalint.checks.call import MmaCall, Operand, normalize
from mmalint.checks.rules import Finding, Note, Predicted, evaluate

__all__ = ["Finding", "MmaCall", "Note", "Operand", "Predicted", "evaluate", "normalize"]
