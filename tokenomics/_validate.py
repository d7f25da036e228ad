"""Validation helpers shared by the frozen parameter classes and public functions.

They raise :class:`tokenomics.errors.ValidationError` with one-line messages; no ``assert`` on
user input anywhere in the package.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import ValidationError

#: Smallest out-of-range fraction that the error message reads as a percent (see :func:`fraction`).
PERCENT_HINT_MIN = 2.0


def _arr(value: Any, name: str) -> np.ndarray:
    """``value`` as a float array; text, bytes and booleans are wrong types, not numbers."""
    if isinstance(value, (str, bytes, bool, np.bool_)):
        raise ValidationError(f"{name} must be a number, got {value!r:.60}")
    try:
        raw = np.asarray(value)
        if raw.dtype.kind in "USbO" and raw.size and any(isinstance(x, (str, bytes, bool)) for x in raw.ravel()[:1000]):
            raise ValidationError(f"{name} must be numbers, got {value!r:.60}")
        if raw.dtype.kind == "b":
            raise ValidationError(f"{name} must be numbers, got booleans")
        a = np.asarray(value, dtype=float)
        if a.size == 0:
            raise ValidationError(f"{name} is empty; give at least one value")
        return a
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ValidationError):
            raise
        raise ValidationError(f"{name} must be a number, got {value!r:.60}") from None


def _is_float_array(value: Any) -> bool:
    """Whether ``value`` is a non-empty float64 array: what :func:`_arr` returns as it is."""
    return type(value) is np.ndarray and value.dtype == np.float64 and value.size > 0


def finite(value: Any, name: str) -> Any:
    """Check that ``value`` (scalar or array) is finite; return it unchanged."""
    a = _arr(value, name)
    ok = np.isfinite(a)
    if not np.all(ok):
        raise ValidationError(f"{name} must be finite, got {_first_bad(value, a, ok)}")
    return value


def positive(value: Any, name: str) -> Any:
    """Check that ``value`` (scalar or array) is finite and > 0."""
    if type(value) in (int, float) and 0 < value < math.inf:  # fast path for plain numbers
        return value
    a = _arr(value, name)
    ok = np.isfinite(a) & (a > 0)
    if not np.all(ok):
        raise ValidationError(f"{name} must be a positive finite number, got {_first_bad(value, a, ok)}")
    return value


def non_negative(value: Any, name: str) -> Any:
    """Check that ``value`` (scalar or array) is finite and >= 0."""
    if type(value) in (int, float) and 0 <= value < math.inf:  # fast path for plain numbers
        return value
    if type(value) is np.ndarray and value.size and value.dtype.kind in "fiu":  # fast path for a valid array
        if value.min() >= 0 and value.max() < math.inf:  # NaN in either where there is one: no comparison holds
            return value
    a = value if _is_float_array(value) else _arr(value, name)
    ok = np.isfinite(a) & (a >= 0)
    if not ok.all():
        raise ValidationError(f"{name} must be a non-negative finite number, got {_first_bad(value, a, ok)}")
    return value


def percent_hint(value: float) -> str:
    """``" did you mean 0.9?"``-style suffix where ``value`` reads as a percent (from
    :data:`PERCENT_HINT_MIN` to 100), else ``""``."""
    v = float(value)
    return f" did you mean {v / 100:g}?" if np.isfinite(v) and PERCENT_HINT_MIN <= v <= 100 else ""


def fraction(value: Any, name: str, *, allow_zero: bool = True, allow_one: bool = True) -> Any:
    """Check that ``value`` is a fraction in [0, 1] (bounds configurable).

    The percent hint rule: a value from :data:`PERCENT_HINT_MIN` (2) to 100 reads as a percent,
    and the message suggests ``value / 100``. Values just above 1 (``1.5``) are more likely a
    ratio or a typo than 1.5 %, so they get no hint.
    """
    a = _arr(value, name)
    lo_ok = (a >= 0) if allow_zero else (a > 0)
    hi_ok = (a <= 1) if allow_one else (a < 1)
    if not np.all(np.isfinite(a)) or not np.all(lo_ok & hi_ok):
        lo = "[0" if allow_zero else "(0"
        hi = "1]" if allow_one else "1)"
        bad = a[~(np.isfinite(a) & lo_ok & hi_ok)] if a.ndim else a
        first = float(np.ravel(bad)[0]) if np.size(bad) else float("nan")
        hint = percent_hint(first)
        hint = f" Fractions are 0-1;{hint}" if hint else ""
        raise ValidationError(f"{name} must be in {lo}, {hi}, got {_show(value)}.{hint}")
    return value


def count(value: Any, name: str, *, minimum: int = 1, maximum: float | None = None) -> Any:
    """Check that ``value`` (scalar or array) is an integer >= ``minimum`` (and <= ``maximum``)."""
    if type(value) is int and value >= minimum and (maximum is None or value <= maximum):  # fast path
        return value
    if (type(value) in (float, np.float64) and math.isfinite(value) and value >= minimum and value.is_integer()
            and (maximum is None or value <= maximum)):  # fast path for a whole float
        return value
    if type(value) is np.ndarray and value.size and value.dtype.kind in "fiu":  # fast path for a valid array
        lo, hi = value.min(), value.max()  # NaN in either where there is one: no comparison holds
        if (lo >= minimum and hi <= (math.inf if maximum is None else maximum) and hi < math.inf
                and (value.dtype.kind != "f" or (np.floor(value) == value).all())):
            return value
    a = value if _is_float_array(value) else _arr(value, name)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(a) & (a >= minimum) & (a == np.round(a))
        if maximum is not None:
            ok &= a <= maximum
    if not ok.all():
        with np.errstate(invalid="ignore"):
            too_big = maximum is not None and bool(np.ravel(a[~ok] > maximum)[0])
        bound = f"<= {maximum:g} (far beyond any memory)" if too_big else f">= {minimum}"
        raise ValidationError(f"{name} must be an integer {bound}, got {_first_bad(value, a, ok)}")
    return value


def one_of(value: str, name: str, choices: tuple[str, ...]) -> str:
    """Check that ``value`` is one of ``choices`` (with a close-match hint)."""
    if value not in choices:
        import difflib

        close = difflib.get_close_matches(str(value), choices, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValidationError(f"{name} must be one of {', '.join(choices)}; got {value!r}.{hint}")
    return value


def _first_bad(value: Any, a: np.ndarray, ok: np.ndarray) -> str:
    """The offending value, or the first offending element of an array."""
    if a.ndim == 0:
        return _show(value)
    return f"{_show(a[~ok].ravel()[0])} (element of an array)"


def _show(value: Any) -> str:
    a = np.asarray(value)
    if a.ndim == 0:
        v = a.item()
        if isinstance(v, float) and math.isfinite(v) and v == int(v) and abs(v) < 1e15:
            return str(int(v)) if not isinstance(value, float) else f"{v:g}"
        if isinstance(v, int) and abs(v) >= 1e15:
            return f"{float(v):g}"
        return f"{v:g}" if isinstance(v, float) else repr(v)
    return f"array with values {np.ravel(a)[:3].tolist()}..."


def whole(value: Any, name: str, *, minimum: int = 0) -> Any:
    """A whole number (not a bool, a string or an array) >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValidationError(f"{name} must be a whole number, got {value!r}")
    return count(value, name, minimum=minimum)


def draws(value: Any, name: str, *, ci: float = 0.9, allow_zero: bool = False) -> Any:
    """A whole number of random draws behind a central ``ci`` percentile interval: at least
    ``ceil(2 / (1 - ci))``, so that each tail beyond the interval holds one draw (20 at 90 %; fewer
    give an interval that is the sample's extremes or narrower), or 0 (no interval) where
    ``allow_zero``."""
    whole(value, name, minimum=0 if allow_zero else 1)
    need = math.ceil(round(2.0 / (1.0 - float(ci)), 9))
    if value < need and not (allow_zero and value == 0):
        none = " or 0 for none" if allow_zero else ""
        raise ValidationError(f"{name} {int(value)} is too few for a {100 * float(ci):g}% interval: give at least "
                              f"{need} (one draw in each {50 * (1 - float(ci)):g}% tail){none}")
    return value


def seed(value: Any, name: str = "seed") -> Any:
    """A random seed: a whole number in [0, 2**63)."""
    whole(value, name, minimum=0)
    if value >= 2**63:
        raise ValidationError(f"{name} must be below 2**63, got {value}")
    return value


_TRUE, _FALSE = ("true",), ("false",)


def flag(value: Any, name: str, *, optional: bool = False) -> bool | None:
    """A strict boolean: ``True``/``False`` (numpy's too), the whole numbers 0 and 1, or the text
    ``"true"``/``"false"`` in any case; ``None`` where ``optional``. Anything else (``"no"``,
    ``"yes"``, 2, 0.5, a list) is one line naming ``name`` and the accepted values, never read by
    its truthiness (``bool("no")`` is True).

    >>> flag("FALSE", "dp_attention"), flag(1, "fixed_lengths"), flag(None, "x", optional=True)
    (False, True, None)
    """
    if value is None and optional:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and int(value) in (0, 1):
        return bool(int(value))
    if isinstance(value, (float, np.floating)) and float(value) in (0.0, 1.0):
        return bool(float(value))
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    none = ", or leave it unset" if optional else ""
    raise ValidationError(f"{name} must be true or false (or 1 / 0){none}, got {shown}")


def finite_result(what: str, results: dict[str, Any], inputs: dict[str, Any], valid: Any = None) -> None:
    """Refuse a result that came out infinite (or NaN where ``valid`` says it should be a number).

    Where results are assembled, a non-physical input (a bandwidth of 1e-300 B/s, electricity
    at 1e308 USD/kWh) shows as an infinite or undefined figure; this turns it into one line naming
    the figure and the inputs that are out of any physical range (else all of ``inputs``),
    instead of returning inf or NaN.

    Parameters
    ----------
    what : str
        The computation (``"decode step"``).
    results : dict
        Figure name -> array to check.
    inputs : dict
        Input name -> value, the candidates to name.
    valid : array_like of bool, optional
        Where a figure must be a number (NaN elsewhere is a deliberate 'does not fit' mask).
    """
    for name, val in results.items():
        try:
            a = np.asarray(val, dtype=float)
        except (TypeError, ValueError):
            continue
        bad = np.isinf(a)
        if valid is not None:
            bad = bad | (np.isnan(a) & np.broadcast_to(np.asarray(valid, bool), a.shape))
        if not bad.any():
            continue
        kind = "infinite" if np.any(np.isinf(a)) else "not a number"
        shown = {}
        for k, x in inputs.items():
            try:
                xs = np.ravel(np.asarray(x, dtype=float))
            except (TypeError, ValueError):
                continue
            if xs.size and np.any(~np.isfinite(xs) | ((xs != 0) & ((np.abs(xs) < 1e-30) | (np.abs(xs) > 1e30)))):
                shown[k] = xs
        shown = shown or {k: np.ravel(np.asarray(x, dtype=float)) for k, x in inputs.items()
                          if np.asarray(x).dtype.kind in "fiu"}
        text = ", ".join(f"{k}={xs[0]:g}" + ("..." if xs.size > 1 else "") for k, xs in shown.items())
        raise ValidationError(f"{what}: {name} came out {kind} for {text}; expected physical inputs "
                              "(finite, within what hardware and prices can be)")
