"""syntax: a catalog that GNU gettext would reject, found without GNU gettext.

``make html`` runs this before any language is built, so it must not need
``msgfmt``. The lines are read strictly, as ``msgfmt`` reads them
(catalogs/po.py's ``line_problems``: Babel alone would accept an
unterminated string); then, as ``msgfmt -c`` does, the placeholders of the
entries whose file marks them ``#, python-format`` are compared (Babel marks
every msgid that looks like a format string: "2% of ..." in prose, which no
one formats, and which Sphinx's catalogs do not mark), and a msgid and its
msgstr must begin and end alike with a newline. Problems are reported at the
line ``msgfmt`` would name (the ``msgstr`` line for a mismatch). Last, the
catalog's .mo must be one that Python's gettext, Sphinx's reader, loads as
written (catalogs/mo_files.py, which the build asks too): a
``Plural-Forms`` or charset it refuses would make Sphinx leave the whole
catalog out, silently.

:func:`committed_compiled` reports a compiled ``.mo`` or ``.js`` committed
beside the catalogs, which the build never uses.
"""

import subprocess
from pathlib import Path

from babel.messages.catalog import TranslationError
from babel.messages.checkers import python_format

from catalogs import mo_files
from catalogs.po import (
    CatalogError,
    catalog_language,
    catalog_text,
    line_problems,
    messages,
    msgstr_line,
    parse,
)

from .common import Problem, shown


def mismatches(catalog, lines):
    """Yield (line, problem) where a translation differs from its msgid as msgfmt -c forbids."""
    for message in messages(catalog):
        if message.fuzzy:
            continue
        ids = message.id if message.pluralizable else [message.id]
        strings = message.string if message.pluralizable else [message.string]
        line = msgstr_line(lines, message)
        for string in strings:
            if not string:
                continue  # untranslated
            for end, where in ((str.startswith, "begin"), (str.endswith, "end")):
                if end(ids[0], "\n") != end(string, "\n"):
                    yield line, f"'msgid' and 'msgstr' entries do not both {where} with '\\n'"
        if any(strings) and "python-format" in written_flags(lines, message):
            try:
                python_format(catalog, message)
            except TranslationError as err:
                yield line, f"python-format: {err}"


def loading_problems(catalog, lines):
    """Where Python's gettext would not load *catalog*'s .mo as the build writes it (no plural
    entries: the build leaves them out, and the unused check names them)."""
    for message in messages(catalog):
        if message.pluralizable:
            catalog.delete(message.id, context=message.context)
    return mo_files.problems(catalog, lines)


def written_flags(lines, message):
    """The flags the catalog's *lines* give *message* on its ``#,`` lines (not Babel's guesses)."""
    flags, index = set(), message.lineno - 2  # the line above the msgid
    while index >= 0 and lines[index].startswith(("#", "msgctxt", '"')):
        if lines[index].startswith("#,"):
            flags.update(flag.strip() for flag in lines[index][2:].split(","))
        index -= 1
    return flags


def committed_compiled(folder):
    """Yield a Problem for each compiled catalog or script git tracks under *folder*.

    The build never uses one (conf/extensions/compiled_catalogs.py compiles
    every .po afresh; a sphinx.js stops it), but a reviewer should not have to
    wonder what it holds. Without git, nothing is reported.
    """
    try:
        tracked = subprocess.run(
            ["git", "ls-files", "-z", "--", "*.mo", "*.js"],
            cwd=folder,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return
    for name in filter(None, tracked.split("\0")):
        yield Problem(
            shown(Path(folder, name)),
            1,
            "syntax",
            "a compiled file in the repository: translations are .po catalogs only "
            "(the build never uses it); remove it with git rm",
        )


def check(po_path):
    """Yield the problems that would make ``msgfmt -c`` reject *po_path*, at their line."""
    try:
        text = catalog_text(po_path)
    except CatalogError as err:
        yield Problem(shown(po_path), err.line or 1, "syntax", str(err))
        return
    problems = line_problems(text)
    if not problems:
        try:
            catalog, lines = parse(text, catalog_language(po_path)), text.split("\n")
            problems = sorted(mismatches(catalog, lines)) or loading_problems(catalog, lines)
        except CatalogError as err:  # what Babel refuses beyond the lines (a plural too many)
            problems = [(err.line, str(err))]
    for line, message in problems:
        yield Problem(shown(po_path), line, "syntax", message)
