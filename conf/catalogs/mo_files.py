"""A catalog as GNU gettext and Python's gettext take it, found without GNU gettext.

:func:`msgfmt_problems` is what ``msgfmt -c`` would reject (make check's syntax
check, which make html runs first). The build writes each .mo with Babel
(:func:`mo`); Sphinx loads it with Python's gettext, which leaves a catalog out
silently when it cannot (a ``Plural-Forms`` it refuses, a charset it cannot
decode): :func:`problems` asks it, on those very bytes.
"""

import gettext
import io

from babel.messages.catalog import TranslationError
from babel.messages.checkers import python_format
from babel.messages.mofile import write_mo

from catalogs.po import CatalogError, header_line, is_translated, line_problems, messages, msgstr_line, parse

# The counts a plural expression is evaluated for: every one a page could show, and some large.
COUNTS = (*range(1001), 10**6, 2**31 - 1, 2**63)


def mo(catalog):
    """The .mo of *catalog*, as the build writes it: Babel's, without fuzzy entries."""
    data = io.BytesIO()
    write_mo(data, catalog, use_fuzzy=False)
    return data.getvalue()


def loaded(data):
    """*data* (a .mo) as Sphinx loads it: a GNUTranslations, or the exception gettext raises."""
    return gettext.GNUTranslations(io.BytesIO(data))


def problems(catalog, lines):
    """Return ``[(line, why)]`` where Python's gettext would not use *catalog* (its *lines*) as written.

    Whatever makes Sphinx drop the catalog is reported at the header field
    that caused it (``Plural-Forms``, else ``Content-Type``); a translation
    it would read back otherwise, at that entry's msgstr.
    """
    try:
        data = mo(catalog)
    except (UnicodeError, LookupError) as err:  # catalogs.parse refuses these charsets first
        return [(header_line(lines, "Content-Type"), f"Babel cannot write its .mo: {_said(err)}")]
    try:
        translations = loaded(data)
    except Exception as err:  # gettext raises what its parser raises
        field = "Plural-Forms" if "plural" in str(err).lower() else "Content-Type"
        return [
            (
                header_line(lines, field),
                f"Python's gettext, which Sphinx reads catalogs with,"
                f" cannot load it ({_said(err)}): Sphinx would leave the whole catalog out",
            )
        ]
    for count in COUNTS:
        try:
            translations.plural(count)
        except Exception as err:
            return [
                (
                    header_line(lines, "Plural-Forms"),
                    f"its plural expression fails for"
                    f" {count} ({_said(err)}): Python's gettext raises it wherever a count"
                    " is translated",
                )
            ]
    found = []
    for message in messages(catalog):
        if message.pluralizable or not is_translated(message):
            continue
        if message.context:
            read_back = translations.pgettext(message.context, message.id)
        else:
            read_back = translations.gettext(message.id)
        if read_back != message.string:
            found.append(
                (
                    msgstr_line(message),
                    "Python's gettext reads another translation here than the catalog holds",
                )
            )
    return found


def _said(err):
    """What *err* says, short and on one line, with its type."""
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text[:120]}"


def msgfmt_problems(text, language):
    """``[(line, problem)]`` where ``msgfmt -c`` would reject the catalog *text*, or the build not use it.

    The lines are read as ``msgfmt`` reads them (po.line_problems); then a
    msgid and its msgstr must begin and end alike with a newline, and the
    entries the file marks ``#, python-format`` keep their placeholders (Babel
    marks every msgid that looks like one, "2% of ..." in prose); last,
    Python's gettext must load its .mo (:func:`problems`).
    """
    problems_found = line_problems(text)
    if problems_found:
        return problems_found
    lines = text.split("\n")
    try:
        catalog = parse(text, language)
    except CatalogError as err:  # what Babel refuses beyond the lines (a plural too many)
        return [(err.line, str(err))]
    for message in messages(catalog):
        ids = message.id if message.pluralizable else [message.id]
        strings = [s for s in (message.string if message.pluralizable else [message.string]) if s]
        if message.fuzzy or not strings:
            continue
        for end, where in ((str.startswith, "begin"), (str.endswith, "end")):
            if any(end(ids[0], "\n") != end(string, "\n") for string in strings):
                problems_found.append(
                    (msgstr_line(message), f"'msgid' and 'msgstr' entries do not both {where} with '\\n'")
                )
        if "python-format" in _written_flags(lines, message):
            try:
                python_format(catalog, message)
            except TranslationError as err:
                problems_found.append((msgstr_line(message), f"python-format: {err}"))
    if problems_found:
        return sorted(problems_found)
    for message in messages(catalog):  # the build leaves plural entries out (unused names them)
        if message.pluralizable:
            catalog.delete(message.id, context=message.context)
    return problems(catalog, lines)


def _written_flags(lines, message):
    """The flags the catalog's *lines* give *message* on its ``#,`` lines (not Babel's guesses)."""
    flags, index = set(), message.lineno - 2  # the line above the msgid
    while index >= 0 and lines[index].startswith(("#", "msgctxt", '"')):
        if lines[index].startswith("#,"):
            flags.update(flag.strip() for flag in lines[index][2:].split(","))
        index -= 1
    return flags
