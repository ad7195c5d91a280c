"""Figures as the page shows them: formatted once, with their unit, and ``n/a`` for a figure
that is undefined (``null`` in the JSON), never 0."""

import json
import math
from dataclasses import dataclass

__all__ = ["Value", "NA", "integer", "number", "percent", "share", "verdict", "plain"]


@dataclass(frozen=True)
class Value:
    """One figure on the page.

    Attributes
    ----------
    text : str
        What the page shows.
    unit : str
        Its unit, shown beside it ("" for a count of nothing in particular or a name).
    state : str
        ``""``; ``"na"`` (undefined), ``"ok"``/``"bad"`` (a check's verdict) or ``"flag"`` (a
        suspect figure, such as a saturated counter's lower bound).
    note : str
        Said on hover (the title attribute).
    """
    text: str
    unit: str = ""
    state: str = ""
    note: str = ""


def NA(unit="", note="undefined: the JSON holds null"):
    return Value("n/a", unit, "na", note)


def _undefined(value):
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def integer(value, unit="", *, saturated=False, note=""):
    """A count, with thousands separators; a saturated counter shows as a lower bound."""
    if _undefined(value):
        return NA(unit)
    if saturated:
        return Value(f"\u2265 {value:,}", unit, "flag",
                     "the counter saturated: the true value is at least this")
    return Value(f"{value:,}", unit, note=note)


def number(value, unit="", *, digits=3, note=""):
    """A measured or derived real number, ``digits`` after the point (integers stay exact)."""
    if _undefined(value):
        return NA(unit)
    if isinstance(value, int) and not isinstance(value, bool):
        return Value(f"{value:,}", unit, note=note)
    return Value(f"{value:,.{digits}f}", unit, note=note)


def percent(value, *, digits=1, note=""):
    """A percentage given in percent."""
    if _undefined(value):
        return NA("%")
    return Value(f"{value:.{digits}f}", "%", note=note)


def share(part, whole, *, digits=1):
    """``part`` as a percentage of ``whole``; n/a when ``whole`` is 0 or either is undefined."""
    if _undefined(part) or _undefined(whole) or whole == 0:
        return NA("%", "undefined: no cycles to share")
    return percent(100 * part / whole, digits=digits)


def verdict(ok, good, bad, *, note=""):
    """A check's outcome: ``good`` when ``ok``, ``bad`` when not, n/a when not checked."""
    if ok is None:
        return NA(note="not checked")
    return Value(good if ok else bad, state="ok" if ok else "bad", note=note)


def plain(value):
    """Any JSON value as one line: numbers and names as themselves, lists and tables as compact
    JSON (a mask's rows one after another)."""
    if value is None:
        return NA()
    if isinstance(value, bool):
        return Value("yes" if value else "no")
    if isinstance(value, int):
        return integer(value)
    if isinstance(value, float):
        return Value(f"{value:g}")
    if isinstance(value, str):
        return Value(value)
    if isinstance(value, list) and value and all(isinstance(row, list) for row in value):
        return Value(" / ".join(" ".join(str(v) for v in row) for row in value))
    return Value(json.dumps(value))
