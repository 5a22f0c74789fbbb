"""canonical: a catalog not in the one form ``make update-po`` and ``make format-po`` write.

Re-wrapped lines, an editor's header fields or revision date bury the real
change of a pull request in noise. The form is Babel's (translation/
catalogs.py), so this check needs no GNU gettext. A catalog that cannot be
read is left to the ``syntax`` check.
"""

from pathlib import Path

from catalogs.po import CatalogError, catalog_language, catalog_text, parse, text
from catalogs.merge import BABEL_FORM

from site_layout import LOCALE

from .common import Problem, shown


def first_difference(ours, canonical):
    """Return (line, what) for the first line where *ours* is not *canonical*, else None."""
    lines, expected_lines = ours.split("\n"), canonical.split("\n")
    for number, (line, expected) in enumerate(zip(lines, expected_lines), 1):
        if line != expected:
            shown = expected if len(expected) <= 50 else expected[:49] + "…"
            return number, f"this line should read {shown!r}"
    if ours != canonical:
        return min(len(lines), len(expected_lines)) + 1, "line endings or the end of the file differ"
    return None


def check(po_path):
    """Yield one problem, at the first line that differs, if *po_path* is not canonical."""
    try:
        ours = catalog_text(po_path)
        language = catalog_language(po_path)
        canonical = text(parse(ours, language), language)
    except (OSError, UnicodeDecodeError, CatalogError):
        return
    # Only this project's catalogs come from its own merge; another's may keep any locations.
    ours_to_merge = Path(po_path).resolve().is_relative_to(LOCALE)
    babel = BABEL_FORM.search(ours) if ours_to_merge else None
    if babel:
        yield Problem(
            shown(po_path),
            ours.count("\n", 0, babel.start()) + 1,
            "canonical",
            "rewritten by sphinx-intl update (the template's locations, without the"
            " old English of fuzzy entries, #|); run make update-po: it keeps every"
            " translation and takes the old English back from git",
        )
        return
    difference = first_difference(ours, canonical)
    if difference:
        line, what = difference
        yield Problem(
            shown(po_path),
            line,
            "canonical",
            f"not in the form make update-po writes ({what}); run make format-po",
        )
