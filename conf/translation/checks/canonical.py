"""canonical: a catalog not in the one form ``make update-po`` writes.

Re-wrapped lines, an editor's header fields or revision date bury the real
change of a pull request in noise. The canonical text is computed in Python
(translation/canonical_po.py), so this check needs no GNU gettext;
``make format-po`` writes it. A catalog that cannot be read is left to the
``syntax`` check.
"""

from translation.canonical_po import CatalogError, canonical_text, catalog_language, first_difference
from translation.update_catalogs import BABEL_FORM

from .common import Problem, shown


def check(po_path):
    """Yield one problem, at the first line that differs, if *po_path* is not canonical."""
    try:
        text = open(po_path, encoding="utf-8", newline="").read()
        canonical = canonical_text(text, catalog_language(po_path))
    except (OSError, UnicodeDecodeError, CatalogError):
        return
    babel = BABEL_FORM.search(text)
    if babel:
        yield Problem(shown(po_path), text.count("\n", 0, babel.start()) + 1, "canonical",
                      "rewritten by sphinx-intl update (Babel's form, without the old English "
                      "of fuzzy entries, #|); run make update-po: it keeps every translation "
                      "and takes the old English back from git")  # fmt: skip
        return
    difference = first_difference(text, canonical)
    if difference:
        line, what = difference
        yield Problem(shown(po_path), line, "canonical",
                      f"not in the form make update-po writes ({what}); run make format-po")
