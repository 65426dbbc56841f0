"""The botocore model's own constraints on an operation's input, checked as AWS's front door checks them.

Owns the walk over an input shape and the rules it applies: `required` members, string length in characters,
blob length in bytes, list and map sizes, `pattern` (the value must match the whole pattern, as Java's
`Pattern.matches` does on AWS's side), `enum` for strings, and numeric `min`/`max`. The input is the dict the
botocore-model parser produced, keyed by the input shape's member names (`contract.types.ContractRequest.params`).

It also owns turning the model's patterns, written in Java's regex dialect, into ones the `regex` module reads
with the same meaning (`java_pattern`), each compiled once.

A check returns `Violation`s; `coral_message` writes them as AWS's validation layer does:
`1 validation error detected: Value 'x' at 'roleName' failed to satisfy constraint: Member must have length less
than or equal to 64`, several joined by `; ` under `N validation errors detected: `. Services that do not speak
that way (EC2, SQS) are worded by the middleware from the same violations.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import regex

#: A member the request does not carry (a required one is reported as `Value null`).
MISSING = object()

#: Constraints AWS is known not to enforce although the model states them: (botocore service, shape name,
#: rule) → why. Checked before a violation is reported, so only that one rule of that one shape is skipped.
#: Empty so far: no pattern or limit of an operation kbp calls has been seen accepted by AWS against the model.
LENIENT: dict[tuple[str, str, str], str] = {}

#: A pattern that takes longer than this on one value is given up on (the value passes): the model's patterns
#: are not written against catastrophic backtracking, and a slow check must never stall the emulator.
PATTERN_TIMEOUT_SECS = 0.05
#: Values longer than this are shortened in messages (a 128 KiB policy document would drown the log).
SHOWN_CHARS = 512


@dataclass(frozen=True)
class Violation:
    #: Where: a tuple of ("member", name, wire_name), ("index", i) and ("key", k) steps from the input's root.
    path: tuple
    #: The offending value (the whole list or map for a size or map-entry rule); MISSING for a required member.
    value: Any
    #: AWS's words for the constraint: `Member must have length less than or equal to 64`.
    constraint: str
    #: `model.required`, `model.length`, `model.size`, `model.pattern`, `model.enum`, `model.range`.
    rule: str
    #: The shape that carries the constraint (`roleNameType`): names the rule in the refusal log.
    shape: str = ""
    #: The shape is `sensitive` in the model: AWS leaves such values out of its messages.
    sensitive: bool = False
    #: For a map key or value rule, the first key or value that broke it.
    offender: Any = None


def check(service: str, shape: Any, params: dict[str, Any]) -> list[Violation]:
    """Every constraint of `shape` (an operation's input structure) that `params` breaks, in member order."""
    out: list[Violation] = []
    if shape is not None:
        _structure(service, shape, params, (), out)
    return out


def _structure(service: str, shape: Any, value: Any, path: tuple, out: list[Violation]) -> None:
    if not isinstance(value, dict):
        return
    members = shape.members
    for name in shape.required_members:
        if value.get(name) is None and name in members:
            member = members[name]
            if not _lenient(service, member, "model.required"):
                out.append(Violation(path + (_step(name, member),), MISSING, "Member must not be null",
                                     "model.required", member.name))
    for name, member in members.items():
        child = value.get(name)
        if child is not None:
            _value(service, member, child, path + (_step(name, member),), out)


def _step(name: str, member: Any) -> tuple:
    ser = member.serialization
    wire = ser.get("queryName") or ser.get("name") or name
    return ("member", name, wire[0].upper() + wire[1:] if wire else name)


def _value(service: str, shape: Any, value: Any, path: tuple, out: list[Violation]) -> None:
    kind = shape.type_name
    if kind == "structure":
        _structure(service, shape, value, path, out)
    elif kind == "list":
        if not isinstance(value, list):
            return
        _size(service, shape, value, path, out)
        for i, item in enumerate(value):
            if item is not None:
                _value(service, shape.member, item, path + (("index", i),), out)
    elif kind == "map":
        if not isinstance(value, dict):
            return
        _size(service, shape, value, path, out)
        _map_entries(service, shape, value, path, out)
    else:
        for constraint, rule in _scalar_faults(shape, value):
            if not _lenient(service, shape, rule):
                out.append(Violation(path, value, constraint, rule, shape.name, _sensitive(shape)))


def _size(service: str, shape: Any, value: Any, path: tuple, out: list[Violation]) -> None:
    md = shape.metadata
    # AWS words a collection's size as its "length", as for strings.
    if "max" in md and len(value) > md["max"] and not _lenient(service, shape, "model.size"):
        out.append(Violation(path, value, f"Member must have length less than or equal to {md['max']}",
                             "model.size", shape.name))
    if "min" in md and len(value) < md["min"] and not _lenient(service, shape, "model.size"):
        out.append(Violation(path, value, f"Member must have length greater than or equal to {md['min']}",
                             "model.size", shape.name))


def _map_entries(service: str, shape: Any, value: dict, path: tuple, out: list[Violation]) -> None:
    """AWS reports a map's entries at the map, once for keys and once for values, listing every constraint of
    the key (or value) shape: `Map keys must satisfy constraint: [Member must have length less than or equal to
    128, …]`. Structured values are walked like any member, one step per key."""
    for part, entry_shape, items in (("keys", shape.key, value.keys()), ("value", shape.value, value.values())):
        if entry_shape.type_name in ("structure", "list", "map"):
            if part == "value":
                for key, item in value.items():
                    if item is not None:
                        _value(service, entry_shape, item, path + (("key", key),), out)
            continue
        for item in items:
            faults = [(c, r) for c, r in _scalar_faults(entry_shape, item) if not _lenient(service, entry_shape, r)]
            if faults:
                listed = ", ".join(_all_constraints(entry_shape))
                noun = "Map keys" if part == "keys" else "Map value"
                out.append(Violation(path, value, f"{noun} must satisfy constraint: [{listed}]", faults[0][1],
                                     entry_shape.name, _sensitive(shape), offender=item))
                break


def _scalar_faults(shape: Any, value: Any) -> list[tuple[str, str]]:
    """(constraint, rule) for each constraint of a string, blob or number shape that `value` breaks."""
    md = shape.metadata
    kind = shape.type_name
    faults: list[tuple[str, str]] = []
    if kind == "string":
        if not isinstance(value, str):
            return faults
        if "max" in md and len(value) > md["max"]:
            faults.append((f"Member must have length less than or equal to {md['max']}", "model.length"))
        if "min" in md and len(value) < md["min"]:
            faults.append((f"Member must have length greater than or equal to {md['min']}", "model.length"))
        if "pattern" in md and not _matches(md["pattern"], value):
            faults.append((f"Member must satisfy regular expression pattern: {md['pattern']}", "model.pattern"))
        if "enum" in md and value not in md["enum"]:
            faults.append((f"Member must satisfy enum value set: [{', '.join(md['enum'])}]", "model.enum"))
    elif kind == "blob":
        if not isinstance(value, (bytes, bytearray)):
            return faults
        if "max" in md and len(value) > md["max"]:
            faults.append((f"Member must have length less than or equal to {md['max']}", "model.length"))
        if "min" in md and len(value) < md["min"]:
            faults.append((f"Member must have length greater than or equal to {md['min']}", "model.length"))
    elif kind in ("integer", "long", "double", "float"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return faults
        if "max" in md and value > md["max"]:
            faults.append((f"Member must have value less than or equal to {_bound(kind, md['max'])}", "model.range"))
        if "min" in md and value < md["min"]:
            faults.append((f"Member must have value greater than or equal to {_bound(kind, md['min'])}",
                           "model.range"))
    return faults


def _all_constraints(shape: Any) -> list[str]:
    md = shape.metadata
    words = []
    if shape.type_name in ("string", "blob"):
        if "max" in md:
            words.append(f"Member must have length less than or equal to {md['max']}")
        if "min" in md:
            words.append(f"Member must have length greater than or equal to {md['min']}")
        if "pattern" in md:
            words.append(f"Member must satisfy regular expression pattern: {md['pattern']}")
        if "enum" in md:
            words.append(f"Member must satisfy enum value set: [{', '.join(md['enum'])}]")
    else:
        if "max" in md:
            words.append(f"Member must have value less than or equal to {_bound(shape.type_name, md['max'])}")
        if "min" in md:
            words.append(f"Member must have value greater than or equal to {_bound(shape.type_name, md['min'])}")
    return words


def _bound(kind: str, number: Any) -> str:
    # AWS prints a double's bound as a double (1.0), an integer's as an integer.
    return str(float(number)) if kind in ("double", "float") else str(int(number))


def _sensitive(shape: Any) -> bool:
    return bool(shape.metadata.get("sensitive"))


def _lenient(service: str, shape: Any, rule: str) -> bool:
    return (service, shape.name, rule) in LENIENT


# --- Patterns ------------------------------------------------------------------------------------------------

_COMPILED: dict[str, Any] = {}
_warned: set[str] = set()


def _matches(java: str, value: str) -> bool:
    compiled = java_pattern(java)
    if compiled is None:
        return True
    try:
        return compiled.fullmatch(value, timeout=PATTERN_TIMEOUT_SECS) is not None
    except TimeoutError:
        _warn(java, "took too long on a value; the value passes")
        return True


def java_pattern(java: str) -> Any:
    """The compiled `regex` equivalent of a model pattern (Java syntax), cached; None if it cannot be read (then
    the pattern is not enforced, and that is said once on stderr)."""
    try:
        return _COMPILED[java]
    except KeyError:
        pass
    try:
        source, flags = translate(java)
        compiled = regex.compile(source, flags)
    except (regex.error, ValueError, IndexError) as e:
        _warn(java, f"cannot be compiled ({e}); it is not enforced")
        compiled = None
    _COMPILED[java] = compiled
    return compiled


def _warn(java: str, what: str) -> None:
    if java not in _warned:
        _warned.add(java)
        print(f"kbp_emulator: contract: model pattern {java!r} {what}", file=sys.stderr, flush=True)


# Java's \w, \d and \s are ASCII-only (without UNICODE_CHARACTER_CLASS, which AWS does not use); the regex
# module's are Unicode. Written as the body of a character class.
_ASCII_CLASSES = {"w": "a-zA-Z0-9_", "d": "0-9", "s": " \\t\\n\\x0B\\f\\r"}
# Java's POSIX classes (\p{Alpha}…) are ASCII-only too; and a few Java names the regex module spells otherwise.
_JAVA_PROPERTIES = {
    "Lower": "a-z",
    "Upper": "A-Z",
    "ASCII": "\\x00-\\x7F",
    "Alpha": "a-zA-Z",
    "Digit": "0-9",
    "Alnum": "a-zA-Z0-9",
    "Punct": "!-/:-@\\[-`{-~",
    "Graph": "!-~",
    "Print": " -~",
    "Blank": " \\t",
    "Cntrl": "\\x00-\\x1F\\x7F",
    "XDigit": "0-9a-fA-F",
    "Space": " \\t\\n\\x0B\\f\\r",
    "all": "\\x00-\\U0010FFFF",
    "LD": "\\p{L}\\p{Nd}",
    "IsWhitespace": "\\p{White_Space}",
    "javaLowerCase": "\\p{Lowercase}",
    "javaUpperCase": "\\p{Uppercase}",
    "javaWhitespace": "\\p{White_Space}",
}


def translate(java: str) -> tuple[str, int]:
    """(pattern, flags) for the regex module meaning what `java` means to java.util.regex.

    Rewrites \\w \\d \\s (and their negations outside classes) and Java's POSIX classes to ASCII sets, `\\x{h}`
    and surrogate pairs (`\\uD800\\uDC00`) to code points, `\\z` to `\\Z`, and `\\Q…\\E` to escaped text. A
    class nested in a class or `&&` (Java's union and intersection) needs the module's V1 syntax."""
    out: list[str] = []
    i, depth, nested = 0, 0, False
    n = len(java)
    while i < n:
        c = java[i]
        if c == "\\" and i + 1 < n:
            e = java[i + 1]
            if e in _ASCII_CLASSES:
                body = _ASCII_CLASSES[e]
                out.append(body if depth else f"[{body}]")
                i += 2
                if depth and java.startswith("-", i):
                    # `[\w-.]`: after a class escape Java reads `-` as itself, not as a range.
                    out.append("\\-")
                    i += 1
            elif e in "WDS" and not depth:
                out.append(f"[^{_ASCII_CLASSES[e.lower()]}]")
                i += 2
            elif e in "pP" and i + 2 < n and java[i + 2] == "{":
                end = java.index("}", i)
                name = java[i + 3 : end]
                body = _JAVA_PROPERTIES.get(name)
                if body is None and name.startswith("Is"):
                    body = f"\\p{{{name[2:]}}}"
                if body is None:
                    out.append(java[i : end + 1])
                elif e == "p":
                    out.append(body if depth else f"[{body}]")
                elif not depth:
                    out.append(f"[^{body}]")
                else:
                    # A negated Java class inside a class: V1's nested negated set says it.
                    out.append(f"[^{body}]")
                    nested = True
                i = end + 1
                if depth and java.startswith("-", i):
                    out.append("\\-")
                    i += 1
            elif e == "x" and i + 2 < n and java[i + 2] == "{":
                end = java.index("}", i)
                out.append(f"\\U{int(java[i + 3 : end], 16):08X}")
                i = end + 1
            elif e == "u" and i + 6 <= n:
                high = int(java[i + 2 : i + 6], 16)
                low = int(java[i + 8 : i + 12], 16) if java[i + 6 : i + 8] == "\\u" and i + 12 <= n else -1
                if 0xD800 <= high <= 0xDBFF and 0xDC00 <= low <= 0xDFFF:
                    out.append(f"\\U{0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00):08X}")
                    i += 12
                else:
                    out.append(java[i : i + 6])
                    i += 6
            elif e == "z":
                out.append("\\Z")
                i += 2
            elif e == "Q":
                end = java.find("\\E", i + 2)
                end = n if end < 0 else end
                out.append(regex.escape(java[i + 2 : end]))
                i = end + 2
            else:
                out.append(java[i : i + 2])
                i += 2
            continue
        if c == "[":
            if depth:
                nested = True
            depth += 1
            out.append(c)
            i += 1
            # A `]` right after `[` or `[^` is a literal in both dialects.
            if java.startswith("^]", i):
                out.append("^\\]")
                i += 2
            elif java.startswith("]", i):
                out.append("\\]")
                i += 1
            continue
        if c == "]" and depth:
            depth -= 1
        elif c == "&" and depth and java.startswith("&&", i):
            nested = True
        out.append(c)
        i += 1
    return "".join(out), regex.V1 if nested else regex.V0


# --- Messages ------------------------------------------------------------------------------------------------


def coral_path(path: tuple) -> str:
    """AWS's validation layer's name for a member: lower camel case member names, `tags.1.member.value` for the
    first list element's `Value`."""
    parts: list[str] = []
    for step in path:
        if step[0] == "member":
            name = step[1]
            parts.append(name[:1].lower() + name[1:])
        elif step[0] == "index":
            parts.append(f"{step[1] + 1}.member")
        else:
            parts.append(str(step[1]))
    return ".".join(parts)


def wire_path(path: tuple) -> str:
    """The parameter as the client sent it on the query wire (EC2's and SQS's own messages name it so):
    `TagSpecification.1.ResourceType`."""
    parts: list[str] = []
    for step in path:
        if step[0] == "member":
            parts.append(step[2])
        elif step[0] == "index":
            parts.append(str(step[1] + 1))
        else:
            parts.append(str(step[1]))
    return ".".join(parts)


def shown(value: Any) -> str:
    """A value as AWS's (Java) messages print it: lists `[a, b]`, maps `{k=v}`, booleans `true`."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (bytes, bytearray)):
        text = f"<{len(value)} bytes>"
    elif isinstance(value, list):
        text = "[" + ", ".join(shown(v) for v in value) + "]"
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{shown(k)}={shown(v)}" for k, v in value.items()) + "}"
    else:
        text = str(value)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "..."


def describe(v: Violation) -> str:
    """One violation in AWS's validation layer's words."""
    where = coral_path(v.path)
    if v.value is MISSING:
        return f"Value null at '{where}' failed to satisfy constraint: {v.constraint}"
    if v.sensitive:
        return f"Value at '{where}' failed to satisfy constraint: {v.constraint}"
    return f"Value '{shown(v.value)}' at '{where}' failed to satisfy constraint: {v.constraint}"


def coral_message(violations: list[Violation]) -> str:
    count = len(violations)
    noun = "error" if count == 1 else "errors"
    return f"{count} validation {noun} detected: " + "; ".join(describe(v) for v in violations)
