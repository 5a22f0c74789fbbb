"""The one form of a catalog: what ``make update-po`` writes, computed in Python.

A catalog in this form differs from another only where their content does:
same wrapping (``msgmerge --width=79``, reproduced by po_wrap.py), the same
``#:`` lines, the header fields of ``make update-po`` in its order, obsolete
entries last. (``make update-po`` writes locations without line numbers; a
catalog's locations are left as they are, since only the English sources
can say which line numbers are right.) ``make format-po`` writes it and
``make check`` reports a catalog that is not in it.

The reader keeps every entry (obsolete ones too), translator and extracted
comments, flags and previous msgids (``#|`` and ``#~|``). It even keeps what
GNU gettext would silently drop when it next writes the catalog: flags it does
not know, "fuzzy" on an untranslated entry, obsolete entries without a
translation. Editors add
header fields of their own and stamp PO-Revision-Date on every save; those
are dropped and reset, since git records who changed what and when.
"""

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from translation.po_wrap import wrap

WIDTH = 79
HEADER_ORDER = (
    "Project-Id-Version", "Report-Msgid-Bugs-To", "POT-Creation-Date", "PO-Revision-Date",
    "Last-Translator", "Language-Team", "Language", "MIME-Version", "Content-Type",
    "Content-Transfer-Encoding", "Plural-Forms",
)  # fmt: skip
# Values every catalog has; Language comes from the catalog's folder.
FIXED_HEADER = {
    "PO-Revision-Date": "YEAR-MO-DA HO:MI+ZONE",
    "MIME-Version": "1.0",
    "Content-Type": "text/plain; charset=UTF-8",
    "Content-Transfer-Encoding": "8bit",
}
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"\s*$')
_KEYWORD = re.compile(r"(msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?)\s+(?=\")")
_UNESCAPE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
             "\\": "\\", '"': '"', "'": "'", "?": "?"}  # fmt: skip


class CatalogError(ValueError):
    """A catalog this reader cannot read; ``line`` says where."""

    def __init__(self, line, message):
        super().__init__(message)
        self.line = line


@dataclass
class Entry:
    """One catalog entry: comments, flags, previous strings and strings, in order."""

    line: int
    obsolete: bool = False
    comments: list = field(default_factory=list)
    extracted: list = field(default_factory=list)
    references: list = field(default_factory=list)
    flags: list = field(default_factory=list)
    previous: list = field(default_factory=list)  # [keyword, value] pairs
    strings: list = field(default_factory=list)  # [keyword, value] pairs

    def get(self, keyword, default=None):
        """Return the value of *keyword* (``msgid``, ``msgstr``...), else *default*."""
        return next((value for key, value in self.strings if key == keyword), default)

    @property
    def is_header(self):
        return not self.obsolete and self.get("msgid") == "" and self.get("msgctxt") is None


def _unescape(text, line):
    """Return the string a PO string literal's inside stands for."""

    def one(match):
        code = match.group(1)
        if code in _UNESCAPE:
            return _UNESCAPE[code]
        if code[0] in "01234567":
            return chr(int(code, 8))
        if code[0] == "x":
            return chr(int(code[1:], 16))
        raise CatalogError(line, f"invalid escape \\{code}")

    return re.sub(r"\\([0-7]{1,3}|x[0-9a-fA-F]+|.)", one, text)


def _comment_text(text):
    """A comment's text, without the one space that follows the mark."""
    return text[1:] if text.startswith(" ") else text


def read(text):
    """Return the entries of a catalog's *text*; raise CatalogError where it is malformed."""
    entries, current, target = [], None, None

    def start(number):
        nonlocal current
        current = Entry(line=number)
        entries.append(current)
        return current

    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        obsolete = line.startswith("#~")
        body = line[2:].lstrip(" ") if obsolete else line
        previous = body.startswith("|") if obsolete else body.startswith("#|")
        if previous:
            body = body[1 if obsolete else 2:].lstrip(" ")
        elif not obsolete and line.startswith("#"):
            if current is None or current.strings or current.previous:
                start(number)
            mark, rest = line[1:2], line[2:]
            if mark == ",":
                current.flags += [f.strip() for f in rest.split(",") if f.strip()]
            elif mark == ":":
                current.references += rest.split()
            elif mark == ".":
                current.extracted.append(_comment_text(rest))
            else:
                current.comments.append(_comment_text(line[1:]))
            target = None
            continue
        keyword = _KEYWORD.match(body)
        string = _STRING.match(body[keyword.end():] if keyword else body)
        if not string:
            raise CatalogError(number, f"cannot read this line: {line[:60]!r}")
        value = _unescape(string.group(1), number)
        if keyword is None:
            if target is None:
                raise CatalogError(number, "a string with no keyword before it")
            target[1] += value
            continue
        name = keyword.group(1)
        if previous:
            if current is None or current.strings:
                start(number)
            current.previous.append([name, value])
            target = current.previous[-1]
        else:
            after_context = bool(current and current.strings) and current.strings[-1][0] == "msgctxt"
            if name == "msgctxt" or (name == "msgid" and not after_context):
                if current is None or current.strings:
                    start(number)
            elif current is None or not current.strings:
                raise CatalogError(number, f"{name} before any msgid")
            current.strings.append([name, value])
            target = current.strings[-1]
        current.obsolete = current.obsolete or obsolete
    for entry in entries:
        if entry.get("msgid") is None or not any(k.startswith("msgstr") for k, _ in entry.strings):
            raise CatalogError(entry.line, "an entry without msgid or msgstr")
    return entries


def canonical_header(value, lang=None):
    """Return the header *value* with update-po's fields in its order, editors' stamps undone.

    Fields gettext does not write (an editor's ``X-Generator``...) go; a
    PO-Revision-Date and Language present get the values every catalog has.
    """
    fields = {}
    for line in value.splitlines():
        name, sep, content = line.partition(":")
        if sep and name.strip() in HEADER_ORDER:
            fields[name.strip()] = content.strip()
    fixed = {**FIXED_HEADER, **({"Language": lang} if lang else {})}
    fields.update({name: fixed[name] for name in fields.keys() & fixed.keys()})
    return "".join(f"{name}: {fields[name]}\n" for name in HEADER_ORDER if name in fields)


def canonical_references(references):
    """The locations, each once, as gettext writes them (without a leading ``./``)."""
    names = []
    for reference in references:
        while reference.startswith("./"):
            reference = reference[2:]
        names.append(reference)
    return list(dict.fromkeys(names))


def _flag_rank(flag):
    """gettext writes fuzzy, then format flags, then range, then wrap; we keep others last."""
    if flag == "fuzzy":
        return 0
    if flag.endswith("-format"):
        return 1
    if flag.startswith("range:"):
        return 2
    return 3 if flag in ("wrap", "no-wrap") else 4


def canonical_flags(flags):
    """Flags once each, in the order gettext writes them (flags it does not know last)."""
    return sorted(dict.fromkeys(flags), key=_flag_rank)


def _reference_lines(files, page_width):
    """The ``#:`` lines for *files*, filled as gettext fills them."""
    lines, line = [], "#:"
    for name in files:
        if line != "#:" and len(line) + 1 + len(name) > page_width:
            lines.append(line)
            line = "#:"
        line += " " + name
    return lines + [line] if files else []


def render(entries, lang=None, page_width=WIDTH, header=True):
    """Return the canonical text of *entries* (obsolete ones last).

    With *header* False the header's fields are written as they are.
    """
    out = []
    ordered = [e for e in entries if not e.obsolete] + [e for e in entries if e.obsolete]
    for entry in ordered:
        if out:
            out.append("")
        out += ["#" + (" " + c if c else "") for c in entry.comments]
        out += ["#." + (" " + c if c else "") for c in entry.extracted]
        out += _reference_lines(canonical_references(entry.references), page_width)
        flags = canonical_flags(entry.flags)
        if flags:
            out.append("#, " + ", ".join(flags))
        prefix = "#~ " if entry.obsolete else ""
        for keyword, value in entry.previous:
            out += wrap(keyword, value, "#~| " if entry.obsolete else "#| ", page_width, flags)
        for keyword, value in entry.strings:
            if header and entry.is_header and keyword == "msgstr":
                value = canonical_header(value, lang)
            out += wrap(keyword, value, prefix, page_width, flags)
    return "\n".join(out) + "\n"


def catalog_language(path):
    """The language of a catalog from its place, locale/<lang>/LC_MESSAGES/..., else None."""
    parts = PurePosixPath(str(path).replace("\\", "/")).parts
    if "LC_MESSAGES" in parts:
        index = parts.index("LC_MESSAGES")
        return parts[index - 1] if index else None
    return None


def canonical_text(text, lang=None):
    """Return *text* (a catalog) in the canonical form; raise CatalogError if unreadable."""
    return render(read(text.lstrip("\ufeff")), lang)


def first_difference(text, canonical):
    """Return (line, what) for the first line where *text* is not *canonical*, else None."""
    ours, theirs = text.splitlines(), canonical.splitlines()
    for number, (line, expected) in enumerate(zip(ours, theirs), 1):
        if line != expected:
            shown = expected if len(expected) <= 50 else expected[:49] + "…"
            return number, f"this line should read {shown!r}"
    if len(ours) != len(theirs) or text != canonical:
        number = min(len(ours), len(theirs)) + 1
        return number, "line endings or the end of the file differ"
    return None
