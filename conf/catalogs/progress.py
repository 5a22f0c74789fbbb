"""How much of each page is translated, against the current English: the one count.

``make stat``, the status page (extensions/translation_status.py) and
the notice on a partly translated page (translation_notice.py, through
bilingual.py) all count here, so they always agree. The catalogs alone are
not enough: after an English edit and before ``make update-po``, a catalog
still holds the old sentence, translated, and a new page has no catalog at
all. So each catalog is merged, in memory, with a fresh extraction of the
current English, exactly as ``make update-po`` would merge it
(merging.merged: Babel's ``Catalog.update``), and counted then:

- translated: the entry has a translation and the English did not change;
- outdated: it has a translation of an older English (fuzzy after the merge:
  an edited sentence, or an entry already fuzzy); the page shows the English;
- untranslated: no translation at all (a new sentence, a new page).

The English is extracted by Sphinx's gettext builder into ``_build/gettext/``
(:func:`fresh_templates`, what ``make gettext`` does): a second or two when
few pages changed, and nothing at all when no source changed since the last
extraction (a digest of the sources' names, sizes and mtimes). The build
(build_site.py), the live preview, ``make stat`` and ``make update-po`` call
it before they count; inside Sphinx, the extensions only read the templates.
Where there is no template for a catalog (a bare sphinx-build of a test
project), the catalog is its own template: counted as it stands.
"""

import hashlib
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from checkout_lock import held
from site_layout import BUILD, CONF, DOCS, LOCALE, POT_DIR, ROOT
from catalogs.po import CatalogError, is_translated, language_catalogs, messages, read
from catalogs.merge import merged, template

STAMP = POT_DIR / ".sources"
STATES = ("translated", "outdated", "untranslated")


@dataclass
class Counts:
    """How many entries of a page are translated, outdated and untranslated."""

    translated: int = 0
    outdated: int = 0
    untranslated: int = 0
    # Each msgid's state, for the page's badges.
    states: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def total(self):
        return self.translated + self.outdated + self.untranslated

    @property
    def percent(self):
        """Percentage translated, rounded down so that 100 means done."""
        return 100 * self.translated // self.total if self.total else 100

    def add(self, other):
        """Add *other*'s counts to these."""
        self.translated += other.translated
        self.outdated += other.outdated
        self.untranslated += other.untranslated


def sources_digest(root=ROOT):
    """A digest of what the English is extracted from: names, sizes, mtimes of the sources."""
    digest = hashlib.sha256()
    requirements = root / "requirements.txt"  # the theme's templates hold strings too
    if requirements.is_file():
        digest.update(str(requirements.stat().st_mtime_ns).encode())
    for folder in (root / "docs", root / "examples", root / "conf"):
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(root).as_posix()
            if (
                not path.is_file()
                or rel.startswith("docs/auto_examples/")
                or "__pycache__" in rel
                or rel.endswith((".mo", ".pyc"))
            ):
                continue
            stat = path.stat()
            digest.update(f"{rel}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


class ExtractionError(RuntimeError):
    """The gettext build failed; the message holds what Sphinx said."""


def fresh_templates(pot_dir=POT_DIR, quiet=True, options=(), force=False):
    """Make *pot_dir* hold the current English, running the gettext builder if a source changed.

    *force* runs it even when no source changed (``make gettext``).

    Returns (ran, what Sphinx printed: its warnings and errors). Raises
    ExtractionError when the build fails. Must run where no other Sphinx
    process generates the gallery (it may execute a changed example, as
    ``make html`` would): it holds the checkout's lock (checkout_lock.py)
    while it extracts, and build_site.py runs it before the languages.
    """
    stamp = Path(pot_dir) / STAMP.name

    def current():
        return stamp.is_file() and stamp.read_text() == sources_digest() and any(Path(pot_dir).rglob("*.pot"))

    if current() and not force:
        return False, ""
    with held(ROOT, os.environ.get("DP_COMMAND") or "the extraction of the English"):
        if current() and not force:  # another process extracted it while this one waited
            return False, ""
        digest = sources_digest()
        # The gettext builder writes a template for every page but never deletes one:
        # the template of a removed page would keep its catalogs (make prune-po).
        stamp.unlink(missing_ok=True)
        for old in Path(pot_dir).rglob("*.pot"):
            old.unlink()
        sphinx_options = os.environ.get("SPHINXOPTS", "-W --keep-going").split()
        cmd = [
            sys.executable,
            "-m",
            "sphinx",
            "-b",
            "gettext",
            "-c",
            str(CONF),
            *sphinx_options,
            *options,
            *(["-q"] if quiet else []),
            "-d",
            str(BUILD / "doctrees" / "gettext"),
            str(DOCS),
            str(pot_dir),
        ]
        result = subprocess.run(cmd, cwd=ROOT, capture_output=quiet, text=True)
        said = (result.stdout or "") + (result.stderr or "")
        if result.returncode != 0:
            raise ExtractionError(said.strip() or "the gettext build failed")
        stamp.write_text(digest)
    return True, said


_CURRENT = {}


def current_pot_dir(srcdir, pot_dir=POT_DIR):
    """*pot_dir* if it holds the current English of the Sphinx sources *srcdir*, else None.

    Only for this project's docs/ (another project, such as a test's, has no
    templates here), and only when the stamp matches the sources. Checked
    once per process: inside a build, the sources do not change.
    """
    if Path(srcdir).resolve() != DOCS.resolve():
        return None
    if pot_dir not in _CURRENT:
        stamp = Path(pot_dir) / STAMP.name
        _CURRENT[pot_dir] = stamp.is_file() and stamp.read_text() == sources_digest()
    return pot_dir if _CURRENT[pot_dir] else None


def template_of(domain, pot_dir=POT_DIR):
    """The .pot of *domain* (``index``, ``auto_examples/plot_01_x``) under *pot_dir*, or None."""
    if pot_dir is None:
        return None
    pot = Path(pot_dir) / f"{domain}.pot"
    return pot if pot.is_file() else None


def page_counts(po, pot, lang):
    """Counts of the catalog *po* (may be missing) merged with the template *pot*.

    *pot*: a .pot path, a Babel Catalog of the English, or None (*po* as it stands).
    A catalog that cannot be read counts as none (the build uses none of it, and says why).
    """
    try:
        if pot is not None:
            catalog = merged(pot, Path(po), lang, quiet=True)
        elif Path(po).is_file():
            catalog = read(po, lang)
        else:
            return Counts()
    except CatalogError:
        if pot is None:
            return Counts()
        catalog = pot if hasattr(pot, "update") else template(pot)
    counts = Counts()
    for message in messages(catalog):
        if is_translated(message):
            state = "translated"
        elif message.fuzzy and message.string:
            state = "outdated"
        else:
            state = "untranslated"
        setattr(counts, state, getattr(counts, state) + 1)
        counts.states[message.id] = state
    return counts


def language_counts(lang, locale_dir=LOCALE, pot_dir=POT_DIR):
    """{domain: Counts} of every page of *lang*: each current template, with or without a catalog.

    Without templates (none extracted), the catalogs as they stand.
    """
    catalogs = language_catalogs(locale_dir, lang)
    pots = (
        {p.relative_to(pot_dir).with_suffix("").as_posix(): p for p in sorted(Path(pot_dir).rglob("*.pot"))}
        if pot_dir and Path(pot_dir).is_dir()
        else {}
    )
    base = Path(locale_dir) / lang / "LC_MESSAGES"
    if not pots:
        return {domain: page_counts(path, None, lang) for domain, path in catalogs.items()}
    return {
        domain: page_counts(catalogs.get(domain, base / f"{domain}.po"), pot, lang)
        for domain, pot in sorted(pots.items())
    }
