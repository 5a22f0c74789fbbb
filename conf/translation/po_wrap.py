"""Wrap a PO string the way GNU gettext's tools write it, in Python.

``make update-po`` writes catalogs through ``msgmerge --width=79``; this
module lets ``make check`` and ``make format-po`` produce the same lines
without GNU gettext. gettext escapes the string, finds where a line may break
with the Unicode line breaking algorithm (UAX #14, as libunistring implements
it), then fills each line greedily up to the width, counting a Chinese
character as two columns. The classes below cover the characters of English
and Chinese technical text; a character they do not know counts as a letter
(or, when it is wide, as an ideograph), which is what UAX #14 assigns to most
characters. tests/test_canonical_po.py compares the result with ``msgcat``
on every committed catalog, at several widths.
"""

import re
import unicodedata

PROHIBITED, POSSIBLE, UNDEFINED = 0, 1, 2
# The line breaking classes of the printable ASCII characters (UAX #14).
_ASCII = {
    **{chr(c): "AL" for c in range(0x21, 0x7F)},
    **{str(d): "NU" for d in range(10)},
    " ": "SP", "!": "EX", '"': "QU", "$": "PR", "%": "PO", "'": "QU", "(": "OP",
    ")": "CP", "+": "PR", ",": "IS", "-": "HY", ".": "IS", "/": "SY", ":": "IS",
    ";": "IS", "?": "EX", "[": "OP", "\\": "PR", "]": "CP", "{": "OP", "|": "BA",
    "}": "CL", "\t": "BA",
}  # fmt: skip
# Punctuation of Chinese text, and the few others whose class is not what
# their general category and width would suggest. OPW is an opening bracket
# of East Asian width: an OP to which LB30 does not apply, so a line may
# break between "GPU" and "（".
_OTHER = {
    "\u00a0": "GL", "\u00ad": "BA", "\u00b0": "PO", "\u00b4": "BB", "\u2010": "BA",
    "\u2011": "GL", "\u2012": "BA", "\u2013": "BA", "\u2014": "B2", "\u2018": "QU",
    "\u2019": "QU", "\u201c": "QU", "\u201d": "QU", "\u2024": "IN", "\u2025": "IN",
    "\u2026": "IN", "\u2030": "PO", "\u2032": "PO", "\u2033": "PO", "\u2039": "QU",
    "\u203a": "QU", "\u2044": "IS", "\u2060": "WJ", "\ufeff": "WJ", "\u200b": "ZW",
    "\u200d": "ZWJ", "\u3000": "BA", "\u3001": "CL", "\u3002": "CL", "\u3005": "NS",
    "\u301c": "NS", "\u3008": "OPW", "\u3009": "CL", "\u300a": "OPW", "\u300b": "CL",
    "\u300c": "OPW", "\u300d": "CL", "\u300e": "OPW", "\u300f": "CL", "\u3010": "OPW",
    "\u3011": "CL", "\u3014": "OPW", "\u3015": "CL", "\u3016": "OPW", "\u3017": "CL",
    "\u301d": "OPW", "\u301e": "CL", "\u301f": "CL", "\uff01": "EX", "\uff04": "PR",
    "\uff05": "PO", "\uff08": "OPW", "\uff09": "CL", "\uff0c": "CL", "\uff0e": "CL",
    "\uff1a": "NS", "\uff1b": "NS", "\uff1f": "EX", "\uff3b": "OPW", "\uff3d": "CL",
    "\uff5b": "OPW", "\uff5d": "CL", "\uff5f": "OPW", "\uff60": "CL", "\uff61": "CL",
    "\uff62": "OPW", "\uff63": "CL", "\uff64": "CL", "\uffe0": "PO", "\uffe1": "PR",
    "\uffe5": "PR", "\uffe6": "PR",
}  # fmt: skip
_CANNOT_BREAK_BEFORE = {"CL", "CP", "EX", "IS", "SY", "WJ"}  # UAX #14 LB11, LB13
# Pairs with no break between them unless a space separates them (UAX #14
# LB19-LB30 as libunistring applies them: it does break between "." and a
# letter, so that gettext may wrap "nn." | "DataParallel").
_KEEP_TOGETHER = {
    *(("AL", b) for b in ("NU", "PR", "PO", "AL", "OP")),
    *((a, "AL") for a in ("NU", "PR", "PO", "CP")),
    ("PR", "ID"), ("ID", "PO"), ("CL", "PO"), ("CP", "PO"), ("CL", "PR"), ("CP", "PR"),
    ("NU", "PO"), ("NU", "PR"), ("PO", "OP"), ("PO", "NU"), ("PR", "OP"), ("PR", "NU"),
    ("HY", "NU"), ("IS", "NU"), ("NU", "NU"), ("SY", "NU"), ("NU", "OP"), ("CP", "NU"),
}  # fmt: skip


def line_break_class(char):
    """Return the UAX #14 line breaking class of *char*, as libunistring resolves it."""
    if char in _ASCII:
        return _ASCII[char]
    if char in _OTHER:
        return _OTHER[char]
    category = unicodedata.category(char)
    if category in ("Mn", "Mc", "Me"):
        return "CM"
    if category == "Nd" and unicodedata.east_asian_width(char) not in "WF":
        return "NU"
    if category == "Zs":
        return "BA"
    return "ID" if unicodedata.east_asian_width(char) in "WF" else "AL"


def width(char):
    """Return the columns *char* takes in a terminal: 2 for wide, 0 for combining."""
    category = unicodedata.category(char)
    if category in ("Mn", "Me", "Cf", "Cc") or "\u1160" <= char <= "\u11ff":
        return 0  # control characters, marks and Hangul vowels and finals add nothing
    if category == "Cn":
        return 1
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


def _pair(before, after):
    """Return PROHIBITED, POSSIBLE or None (only after a space) between two classes."""
    wide_open = after == "OPW"
    before, after = ("OP" if c == "OPW" else c for c in (before, after))
    if wide_open and before in ("AL", "NU"):
        return POSSIBLE
    if after in _CANNOT_BREAK_BEFORE or before == "OP":
        return PROHIBITED
    if (before, after) in (("QU", "OP"), ("CL", "NS"), ("B2", "B2")):
        return PROHIBITED
    if after == "GL":
        return POSSIBLE if before in ("BA", "HY") else None
    if before in ("WJ", "GL", "QU", "BB") or after in ("QU", "BA", "HY", "NS", "IN"):
        return None
    return None if (before, after) in _KEEP_TOGETHER else POSSIBLE


def possible_breaks(classes):
    """Return, for each position, POSSIBLE if a line may break before it, else PROHIBITED."""
    breaks, last, spaced = [], None, False
    for cls in classes:
        if cls == "SP":
            breaks.append(PROHIBITED)
            spaced = last is not None
            continue
        if cls in ("CM", "ZWJ"):
            # A combining mark stays with what it follows; after a space it is a letter.
            breaks.append(POSSIBLE if spaced or last == "ZW" else PROHIBITED)
            if spaced or last in (None, "ZW"):
                last, spaced = "AL", False
            continue
        if last is None:
            decision = PROHIBITED
        elif last == "ZW":
            decision = POSSIBLE
        else:
            decision = _pair(last, cls)
            if decision is None:
                decision = POSSIBLE if spaced else PROHIBITED
        breaks.append(PROHIBITED if cls == "ZW" else decision)
        last, spaced = cls, False
    return breaks


def fill(chars, overrides, limit, start_column):
    """Choose the breaks that fill lines of *limit* columns greedily; return their positions."""
    classes = [line_break_class(c) for c in chars]
    breaks = possible_breaks(classes)
    chosen, last_break, column, piece = [], None, start_column, 0
    for i, char in enumerate(chars):
        if overrides[i] != UNDEFINED:
            breaks[i] = overrides[i]
        if breaks[i] == POSSIBLE:
            if last_break is not None and column + piece > limit:
                chosen.append(last_break)
                column = 0
            last_break = i
            column += piece
            piece = 0
        piece += width(char)
    if last_break is not None and column + piece > limit:
        chosen.append(last_break)
    return chosen


_ESCAPES = {"\a": "a", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t", "\v": "v",
            "\\": "\\", '"': '"'}  # fmt: skip
# The part of a Python format directive after its %(name), as gettext reads it.
_PYTHON_SPEC = re.compile(r"[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?[diouxXeEfFgGcrs%]")


def _directive_end(value, start):
    """Return where the Python directive at *value*[start] (a %) ends, or None if invalid."""
    position = start + 1
    if value.startswith("(", position):
        depth = 0  # gettext lets a name hold balanced parentheses
        for position in range(position + 1, len(value) + 1):
            if position == len(value):
                return None
            if value[position] == "(":
                depth += 1
            elif value[position] == ")":
                if depth == 0:
                    break
                depth -= 1
        position += 1
    match = _PYTHON_SPEC.match(value, position)
    return match.end() if match else None


def _inside_directives(value, flags):
    """Return the positions of *value* inside (not at the start of) a format directive.

    Like gettext, only for ``python-format`` strings, and only up to the first
    invalid directive, where its parser stops.
    """
    if "python-format" not in flags:
        return set()
    inside, named, start = set(), None, value.find("%")
    while start >= 0:
        end = _directive_end(value, start)
        if end is None:
            break
        if value[start:end] != "%%":
            is_named = value.startswith("%(", start)
            if named is not None and named != is_named:
                break  # named and unnamed directives mixed: invalid from here
            named = is_named
        inside.update(range(start + 1, end))
        start = value.find("%", end)
    return inside


def wrap(keyword, value, prefix="", page_width=79, flags=()):
    """Return the lines gettext writes for ``keyword "value"``, each starting with *prefix*."""
    limit_after_break = len(prefix) + 1
    limit = (page_width if "no-wrap" not in flags else 1 << 30) - 1 - limit_after_break
    inside = _inside_directives(value, flags)
    lines, first, start = [], True, 0
    while True:
        end = value.find("\n", start)
        end = len(value) if end < 0 else end + 1
        chars, overrides = [], []
        for i in range(start, end):
            brk = PROHIBITED if i in inside else UNDEFINED
            char = value[i]
            if char in _ESCAPES:
                chars += ["\\", _ESCAPES[char]]
                overrides += [brk, PROHIBITED]
            else:
                chars.append(char)
                overrides.append(brk)
        if end > start and value[end - 1] == "\n":
            overrides[-2] = PROHIBITED  # never break just before the final \n
        column = len(keyword) + 1 if first else 0
        chosen = fill(chars, overrides, limit, column)
        if first and chars and (end < len(value) or column > limit or chosen):
            lines.append(f'{prefix}{keyword} ""')
            first, column = False, 0
            chosen = fill(chars, overrides, limit, column)
        pieces, previous = [], 0
        for position in [*chosen, len(chars)]:
            pieces.append("".join(chars[previous:position]))
            previous = position
        head = f"{prefix}{keyword} " if first else prefix
        lines.append(f'{head}"{pieces[0]}"')
        lines += [f'{prefix}"{piece}"' for piece in pieces[1:]]
        first, start = False, end
        if start >= len(value):
            return lines
