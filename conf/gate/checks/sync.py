"""out-of-sync: the catalogs do not match the English sources."""

from catalogs.po import CatalogError, english, messages, read

from .common import Problem, brief, shown


def source_location(entry, pot_dir, pot_path):
    """Return (file, line) of the English source of a .pot *entry*, else of the .pot."""
    if entry is None or not entry.locations:
        return shown(pot_path), 1
    name, line = entry.locations[0]
    return shown(pot_dir / name), int(line or 1)


def check(pot_dir, catalog_dir, load=read):
    """Yield problems where the catalogs in *catalog_dir* differ from the .pot files.

    *load* reads a catalog: the runner passes its own, which reads each file once.
    """
    for pot_path in sorted(pot_dir.rglob("*.pot")):
        pot = {(m.context, english(m)): m for m in messages(read(pot_path))}
        po_path = catalog_dir / pot_path.relative_to(pot_dir).with_suffix(".po")
        if not po_path.exists():
            first = next(iter(pot.values()), None)
            yield Problem(
                *source_location(first, pot_dir, pot_path),
                "out-of-sync",
                f"this page has no catalog {shown(po_path)}; run make update-po",
            )
            continue
        try:
            loaded = load(po_path)
        except CatalogError:
            continue  # the syntax check names the line it cannot read
        catalog = {(m.context, english(m)): m for m in messages(loaded)}
        for key in catalog.keys() - pot.keys():
            yield Problem(
                shown(po_path),
                catalog[key].lineno,
                "out-of-sync",
                f"English no longer in the source: {brief(key[1])}; run make update-po",
            )
        for key in pot.keys() - catalog.keys():
            yield Problem(
                *source_location(pot[key], pot_dir, pot_path),
                "out-of-sync",
                f"English missing from {shown(po_path)}: {brief(key[1])}; run make update-po",
            )
