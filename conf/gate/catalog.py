"""The checks of a catalog as a whole: syntax (catalogs/mo_files.py), out-of-sync, canonical."""

import re
import subprocess
import unicodedata
from pathlib import Path


from site_layout import LOCALE
from catalogs import mo_files
from catalogs.po import (
    canonical_difference,
    english,
    messages,
    read,
    shown,
)
from gate.findings import Problem, brief
from gate.words import in_pdf

# sphinx-intl update keeps the template's locations, relative to it; ours never are.
SPHINX_INTL = re.compile(r"^#: \.\./\.\./", re.MULTILINE)


def whole(found, selected):
    """``[(line, check, why)]``: the *selected* checks of a catalog as a whole (a po.CatalogFile)."""
    said = []
    if "syntax" in selected and found.text is not None:
        said = [(line, "syntax", why) for line, why in mo_files.msgfmt_problems(found.text, found.language)]
    if found.catalog is None and not said:  # else the syntax check said why, at its line
        why = str(found.error) if "syntax" in selected else f"cannot read the catalog: {found.error}"
        said = [(found.error.line or 1, "syntax", why)]
    if "canonical" in selected and found.catalog is not None:
        said += [(line, "canonical", why) for line, why in canonical(found)]
    return said


def glyphless_lines(text):
    """``[(line, why)]``: each line of a catalog's *text* holding a character no font of the PDF
    has (controls aside: the safety check names those). Every line counts, not only what is
    translated: tests/test_locale_inputs.py asks it of the whole file."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        missing = [c for c in dict.fromkeys(line) if not in_pdf(c) and unicodedata.category(c)[0] != "C"]
        if missing:
            named = ", ".join(f"{c} U+{ord(c):04X} ({unicodedata.name(c, 'unnamed')})" for c in missing[:5])
            found.append((number, f"no font of the PDF has {named}, which would stop make pdf: replace it"))
    return found


def committed_compiled(folder):
    """Yield a Problem for each compiled catalog or script git tracks under *folder*: the build
    never uses one (it compiles every .po afresh), but a reviewer should not wonder what it holds."""
    try:
        tracked = subprocess.run(
            ["git", "ls-files", "-z", "--", "*.mo", "*.js"],
            cwd=folder,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return  # no git: nothing to say
    for name in filter(None, tracked.split("\0")):
        why = "a compiled file in the repository: translations are .po catalogs only (the build never uses it); remove it with git rm"
        yield Problem(shown(Path(folder, name)), 1, "syntax", why)


def canonical(found):
    """[(line, problem)]: the first line where catalog *found* (a po.CatalogFile) is not in the
    form make update-po writes, which make format-po restores (a rewrap buries a change)."""
    rewritten = SPHINX_INTL.search(found.text)
    if rewritten and found.path.resolve().is_relative_to(LOCALE):  # ours, not another project's
        why = (
            "rewritten by sphinx-intl update, which drops the old English of fuzzy entries (#|): git checkout"
            " the catalog, then run make update-po"
        )
        return [(found.text.count("\n", 0, rewritten.start()) + 1, why)]
    difference = canonical_difference(found.text, found.language)
    if difference is None:
        return []
    return [(difference[0], f"not in the form make update-po writes ({difference[1]}); run make format-po")]


def out_of_sync(pot_dir, catalog_dir, load):
    """Yield Problems where the catalogs in *catalog_dir* differ from the .pot files, at the
    English source of an entry a catalog lacks. *load* gives a catalog's po.CatalogFile."""
    for pot_path in sorted(pot_dir.rglob("*.pot")):
        pot = {(m.context, english(m)): m for m in messages(read(pot_path))}
        po_path = catalog_dir / pot_path.relative_to(pot_dir).with_suffix(".po")

        def source(entry):  # the English source of a .pot entry, else the .pot
            if entry is None or not entry.locations:
                return shown(pot_path), 1
            return shown(pot_dir / entry.locations[0][0]), int(entry.locations[0][1] or 1)

        if not po_path.exists():
            why = f"this page has no catalog {shown(po_path)}; run make update-po"
            yield Problem(*source(next(iter(pot.values()), None)), "out-of-sync", why)
            continue
        if load(po_path).catalog is None:
            continue  # the syntax check names the line it cannot read
        catalog = {(m.context, english(m)): m for m in load(po_path).entries}
        for key in catalog.keys() - pot.keys():
            why = f"English no longer in the source: {brief(key[1])}; run make update-po"
            yield Problem(shown(po_path), catalog[key].lineno, "out-of-sync", why)
        for key in pot.keys() - catalog.keys():
            why = f"English missing from {shown(po_path)}: {brief(key[1])}; run make update-po"
            yield Problem(*source(pot[key]), "out-of-sync", why)
