"""Exception and warning classes.

Every error a user can cause by giving bad input is a :class:`TokenomicsError` with a one-line
message: what was wrong, what was given, what was expected, and a hint. The CLI turns these into
one line on stderr and exit code 2; anything else is a bug and shows a traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class TokenomicsError(ValueError):
    """Base class of every user-facing error (bad input, unknown names, infeasible configs)."""


class UnknownNameError(TokenomicsError, KeyError):
    """A catalog lookup failed (unknown accelerator, model, plan, series, ...)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ValidationError(TokenomicsError):
    """A parameter is out of range, non-finite, or of the wrong kind."""


class TargetSpeedError(ValidationError):
    """No batch (and, where the layout is free, no layout) serves each user the speed asked for;
    the message gives the fastest there is."""


class DataError(TokenomicsError):
    """A data file is malformed: missing columns, bad rows, unknown kinds."""


class CellError(DataError):
    """One bad cell of a table (:func:`tokenomics.io.numeric_column`): ``row`` (0-based), ``line``
    (of the file), ``detail`` (``"COLUMN is not a number, got 'abc'"``) and ``what`` (the table),
    so a caller can name the row its own way."""

    def __init__(self, what: str, row: int, line: int, detail: str) -> None:
        super().__init__(f"{what} row {row + 1} (line {line}): {detail}")
        self.what, self.row, self.line, self.detail = what, row, line, detail


class DoesNotFitError(TokenomicsError):
    """A model plus its KV cache does not fit in the memory available."""


class TokenomicsWarning(UserWarning):
    """Base class of tokenomics warnings. Silence all with
    ``warnings.filterwarnings('ignore', category=tokenomics.errors.TokenomicsWarning)``."""


class ConvergenceWarning(TokenomicsWarning):
    """A fit did not converge cleanly. Silence with
    ``warnings.filterwarnings('ignore', category=tokenomics.errors.ConvergenceWarning)``."""


def unknown_name(kind: str, name: str, known: Iterable[str]) -> UnknownNameError:
    """Build an :class:`UnknownNameError` with close-match suggestions.

    Parameters
    ----------
    kind : str
        What was looked up, e.g. ``"accelerator"``.
    name : str
        The name the user gave.
    known : iterable of str
        Valid names.

    Returns
    -------
    UnknownNameError
        The error to raise.
    """
    known = sorted(set(known))
    low = str(name).strip().lower()
    # names the given one begins (``h100`` -> ``h100-sxm``) first, then the closest spellings
    prefix = [k.lower() for k in known if low and k.lower().startswith(low) and k.lower() != low]
    close = list(dict.fromkeys(prefix + difflib.get_close_matches(low, [k.lower() for k in known], n=3, cutoff=0.5)))[:3]
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return UnknownNameError(f"Unknown {kind} {name!r}.{hint} Known: {', '.join(known)}")
