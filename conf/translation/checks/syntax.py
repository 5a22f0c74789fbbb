"""syntax: a catalog that GNU gettext would reject, found without GNU gettext.

``make html`` runs this before any language is built, so it must not need
``msgfmt``. polib and Babel read catalogs leniently (an unterminated string
is accepted or silently dropped), so the lines are read strictly here, the way
``msgfmt`` reads them: each is a comment, a keyword with one quoted string, or
a quoted continuation line, in a valid order, with no entry twice. Then
Babel's checker compares the placeholders of the entries flagged
``python-format``, as ``msgfmt -c`` does. Problems are reported at the line
``msgfmt`` would name (the ``msgstr`` line for a placeholder mismatch).

:func:`committed_compiled` reports a compiled ``.mo`` or ``.js`` committed
beside the catalogs, which the build never uses.
"""

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import polib
from babel.messages.catalog import Message, TranslationError
from babel.messages.checkers import python_format

from .common import Problem, shown

_STRING = r'"(?:[^"\\]|\\[\\"\'?abfnrtv]|\\[0-7]{1,3}|\\x[0-9a-fA-F]+)*"'
_ENTRY_LINE = re.compile(
    rf"^(?:#~ ?)?(?:(?P<keyword>[a-z_]+(?:\[\d+\])?)\s+)?(?P<string>{_STRING})\s*$"
)
_PARTS = {"msgctxt", "msgid", "msgid_plural", "msgstr", "msgstr[]"}
# What may come after each part of an entry.
_NEXT = {
    None: {"msgctxt", "msgid"},
    "msgctxt": {"msgid"},
    "msgid": {"msgstr", "msgid_plural"},
    "msgid_plural": {"msgstr[]"},
    "msgstr": {"msgctxt", "msgid"},
    "msgstr[]": {"msgstr[]", "msgctxt", "msgid"},
}


@dataclass
class Entry:
    """One entry as read: its parts' texts, its flags and where its parts start."""

    flags: set = field(default_factory=set)
    texts: dict = field(default_factory=dict)  # part -> one list of strings per keyword
    lines: dict = field(default_factory=dict)  # part -> line of its (first) keyword
    obsolete: bool = False

    def text(self, part):
        """The text of *part* (its first occurrence), as gettext joins its strings."""
        return "".join(self.texts[part][0]) if part in self.texts else ""


def _bad_line(text):
    """Say what is wrong with a line that is neither a comment nor a valid entry line."""
    body = text[3:] if text.startswith("#~ ") else text
    keyword = body.split(None, 1)[0] if body.split() else ""
    if not body.startswith('"') and not re.fullmatch(r"[a-z_]+(\[\d+\])?", keyword):
        return f"keyword {keyword!r} unknown"
    if re.sub(r"\\.", "", body).count('"') % 2:
        return "end-of-line within string"
    if re.search(r'\\[^\\"\'?abfnrtv0-7x]', body):
        return "invalid control sequence"
    return "syntax error"


def read(text):
    """Read a catalog's *text* strictly; return (entries, [(line, problem), ...])."""
    entries, problems = [], []
    state, state_line, recovering, flags = None, 0, False, set()
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("#,"):
            flags |= {flag.strip() for flag in stripped[2:].split(",")}
        if not stripped or re.match(r"#(?!~)|#~\|", stripped):
            continue  # a comment, or a previous msgid of an obsolete entry
        match = _ENTRY_LINE.match(stripped)
        keyword = match and match["keyword"]
        part = "msgstr[]" if keyword and keyword.startswith("msgstr[") else keyword
        if not match or (keyword and part not in _PARTS):
            problems.append((number, _bad_line(stripped) if not match else
                             f"keyword {keyword!r} unknown"))  # fmt: skip
            state, recovering = None, True  # one mistake, one report
            continue
        string = polib.unescape(match["string"][1:-1])
        if keyword is None:
            if state is not None:
                entries[-1].texts[state][-1].append(string)
            elif not recovering:
                problems.append((number, "a string with no keyword before it"))
            continue
        if recovering and part not in ("msgctxt", "msgid"):
            continue
        recovering = False
        if part not in _NEXT[state]:
            if state in ("msgctxt", "msgid", "msgid_plural") and part in ("msgctxt", "msgid"):
                problems.append((state_line, "missing 'msgstr' section"))
            else:
                expected = " or ".join(sorted(_NEXT[state]))
                problems.append((number, f"{keyword!r} where {expected} was expected"))
        if part == "msgctxt" or (part == "msgid" and state != "msgctxt"):
            entries.append(Entry(flags=flags, obsolete=stripped.startswith("#~")))
            flags = set()
        if entries:
            entries[-1].texts.setdefault(part, []).append([string])
            entries[-1].lines.setdefault(part, number)
        state, state_line = part, number
    if state in ("msgctxt", "msgid", "msgid_plural"):
        problems.append((state_line, "missing 'msgstr' section"))
    return entries, problems


def duplicates(entries):
    """Yield (line, problem) for each entry whose context and msgid came before."""
    seen = {}
    for entry in entries:
        context = entry.text("msgctxt") if "msgctxt" in entry.texts else None
        key = (entry.obsolete, context, entry.text("msgid"))
        line = entry.lines.get("msgid", 0)
        if key in seen:
            yield line, f"duplicate message definition (first at line {seen[key]})"
        seen.setdefault(key, line)


def mismatches(entries):
    """Yield (line, problem) where a translation differs from its msgid as msgfmt -c forbids.

    Placeholders of ``python-format`` entries must match; a msgid and its msgstr
    must both begin, and both end, with a newline or neither.
    """
    for entry in entries:
        if entry.obsolete or "fuzzy" in entry.flags:
            continue
        plural = "msgid_plural" in entry.texts
        ids = (entry.text("msgid"), entry.text("msgid_plural")) if plural else entry.text("msgid")
        strings = ["".join(s) for s in entry.texts.get("msgstr[]", [])] if plural else (
            entry.text("msgstr"))  # fmt: skip
        line = entry.lines.get("msgstr", entry.lines.get("msgstr[]", 0))
        for string in strings if plural else [strings]:
            if not string or not entry.text("msgid"):
                continue  # untranslated, or the header
            for end, where in ((str.startswith, "begin"), (str.endswith, "end")):
                if end(entry.text("msgid"), "\n") != end(string, "\n"):
                    yield line, f"'msgid' and 'msgstr' entries do not both {where} with '\\n'"
        if "python-format" in entry.flags:
            try:
                python_format(None, Message(ids, strings, flags={"python-format"}))
            except TranslationError as err:
                yield line, f"python-format: {err}"


def committed_compiled(folder):
    """Yield a Problem for each compiled catalog or script git tracks under *folder*.

    The build never uses one (conf/site_extensions/compiled_catalogs.py compiles
    every .po afresh; a sphinx.js stops it), but a reviewer should not have to
    wonder what it holds. Without git, nothing is reported.
    """
    try:
        tracked = subprocess.run(["git", "ls-files", "-z", "--", "*.mo", "*.js"], cwd=folder,
                                 capture_output=True, text=True, check=True).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return
    for name in filter(None, tracked.split("\0")):
        yield Problem(shown(Path(folder, name)), 1, "syntax",
                      "a compiled file in the repository: translations are .po catalogs only "
                      "(the build never uses it); remove it with git rm")  # fmt: skip


def check(po_path):
    """Yield the problems that would make ``msgfmt -c`` reject *po_path*, at their line."""
    try:
        with open(po_path, "rb") as stream:
            text = stream.read().decode("utf-8")
    except UnicodeDecodeError as err:
        yield Problem(shown(po_path), 1, "syntax", f"not UTF-8: {err.reason}")
        return
    except OSError as err:
        yield Problem(shown(po_path), 1, "syntax", f"cannot read the catalog: {err.strerror}")
        return
    entries, problems = read(text)
    if not problems:  # else the entries are not what the translator meant
        problems = [*duplicates(entries), *mismatches(entries)]
    for line, message in sorted(problems):
        yield Problem(shown(po_path), line, "syntax", message)
