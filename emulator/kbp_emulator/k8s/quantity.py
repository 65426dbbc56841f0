"""resource.Quantity: parsing and kube's canonical form, which is what a client reads back.

kube-apiserver stores quantities of built-in types (container requests and limits...) in canonical form:
`1000m` reads back as `1`, `0.5` as `500m`, `1024Mi` as `1Gi`, `1000M` as `1G`, and a number as a string. A
client that diffs what it applied against what it reads sees the difference on a real cluster too. Custom
resources keep their strings as given (int-or-string fields are not quantities to the server).
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal, InvalidOperation

PATTERN = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_NANO = Decimal("1e-9")


class QuantityError(ValueError):
    pass


def parse(text: str | int | float) -> tuple[Decimal, str]:
    """(value, format) where format is BinarySI, DecimalSI or DecimalExponent."""
    raw = str(text).strip()
    m = re.fullmatch(r"([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?", raw)
    if not m:
        raise QuantityError(f"quantities must match the regular expression '{PATTERN}'")
    number, suffix = Decimal(m[1]), m[2] or ""
    if suffix in _BINARY:
        return number * (Decimal(1024) ** _BINARY[suffix]), "BinarySI"
    if suffix in _DECIMAL:
        return number.scaleb(_DECIMAL[suffix]), "DecimalSI"
    try:
        return number.scaleb(int(suffix[1:])), "DecimalExponent"
    except (ValueError, InvalidOperation):
        raise QuantityError(f"quantities must match the regular expression '{PATTERN}'") from None


def canonical(text: str | int | float) -> str:
    value, fmt = parse(text)
    # Precision below a nano-unit is rounded up, as kube does.
    value = (value / _NANO).to_integral_value(rounding=ROUND_CEILING) * _NANO
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    value = abs(value)
    if fmt == "BinarySI" and value == value.to_integral_value() and value >= 1024:
        whole = int(value)
        power = 0
        while power < 6 and whole % (1024 ** (power + 1)) == 0:
            power += 1
        if power:
            suffix = {v: k for k, v in _BINARY.items()}[power]
            return f"{sign}{whole // 1024 ** power}{suffix}"
        return f"{sign}{whole}"
    for exponent in (18, 15, 12, 9, 6, 3, 0, -3, -6, -9):
        scaled = value.scaleb(-exponent)
        if scaled == scaled.to_integral_value():
            amount = int(scaled)
            if fmt == "DecimalExponent":
                return f"{sign}{amount}" + (f"e{exponent}" if exponent else "")
            return f"{sign}{amount}{_DECIMAL_SUFFIX[exponent]}"
    return f"{sign}{int(value.scaleb(9))}n"


def compare(a: str, b: str) -> int:
    va, vb = parse(a)[0], parse(b)[0]
    return (va > vb) - (va < vb)
