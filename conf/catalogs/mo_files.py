"""A catalog's .mo: written as the build writes it, loaded as Sphinx loads it.

The build (extensions/compiled_catalogs.py) writes each catalog's .mo
with Babel, and Sphinx reads it with Python's gettext (``sphinx.locale.init``
→ ``gettext.translation`` → ``GNUTranslations``), which leaves a whole
catalog out, silently, when it cannot load it: a ``Plural-Forms`` expression
it refuses (Babel accepts longer ones, and ``>>``), a charset it cannot
decode. :func:`problems` asks Python's gettext itself, on the very bytes the
build writes: the build before it writes them, and ``make check``
(checks/syntax.py). Loaded, the catalog must also evaluate its plural
expression for any count and hand back every translation it holds.
"""

import gettext
import io

from babel.messages.mofile import write_mo

from catalogs.po import header_line, is_translated, messages, msgstr_line

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
                    msgstr_line(lines, message),
                    "Python's gettext reads another translation here than the catalog holds",
                )
            )
    return found


def _said(err):
    """What *err* says, short and on one line, with its type."""
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text[:120]}"
