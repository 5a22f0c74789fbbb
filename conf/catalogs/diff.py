"""What a change did to a language's catalogs, entry by entry: the library of the review.

The English (msgid) and the translation of each entry are compared, never
the lines, so re-wrapping, moved ``#:`` locations and reordering show
nothing. An entry whose English changed is paired with its old self through
the old English a merge records (``#| msgid``), or, once that is gone, by
similarity, as a merge pairs them. ``make review-diff`` (review_diff.py)
shows the changes; ``make check BASE=`` (run_checks.py) keeps the findings on
changed entries only (:func:`changed_only`). The base is a git revision,
by default the merge base with ``main``.
"""

import difflib
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from site_layout import ROOT
from catalogs.po import (
    CatalogError,
    catalog_text,
    english,
    language_catalogs,
    messages,
    parse,
    read,
)
from gate.checks.common import WARNING
from gate.checks.terminology import parse_glossary
from catalogs.merge import filled_by_update_po, shared_entries
from catalogs.repository import ReviewError, git

PAIRING = 0.6  # how alike two msgids must be to count as one sentence edited


def resolve_base(revision=None, cwd=ROOT):
    """Return (commit, how it was chosen) for *revision*, by default the merge base with main."""
    try:
        git("rev-parse", "--git-dir", cwd=cwd)
    except ReviewError:
        raise ReviewError(f"{cwd} is not in a git repository: nothing to compare with") from None
    if revision:
        try:
            commit = git("rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}", cwd=cwd)
        except ReviewError:
            raise ReviewError(
                f"BASE={revision} is not a revision of this repository (git"
                " rev-parse cannot find it; fetch it first?)"
            ) from None
        return commit.strip(), revision
    for branch in ("main", "origin/main"):
        try:
            git("rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}", cwd=cwd)
        except ReviewError:
            continue
        try:
            return git("merge-base", branch, "HEAD", cwd=cwd).strip(), f"merge base with {branch}"
        except ReviewError:
            raise ReviewError(
                f"HEAD and {branch} have no common history here (a shallow"
                " clone? run git fetch --unshallow); give BASE=<revision>"
            ) from None
    raise ReviewError(
        "this repository has no branch main (nor origin/main) to compare with;"
        " give the revision: make review-diff BASE=<revision>"
    )


# -- Comparing catalogs ------------------------------------------------------


def changed_parts(before, after):
    """How the tokens *after* differ from *before*: [("same"|"removed"|"added", tokens)]."""
    parts = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if op == "equal":
            parts.append(("same", after[j1:j2]))
            continue
        if i2 > i1:
            parts.append(("removed", before[i1:i2]))
        if j2 > j1:
            parts.append(("added", after[j1:j2]))
    return parts


def entries(catalog):
    """A catalog's entries, header left out, each marked ``obsolete`` or not."""
    found = messages(catalog)
    for message in found:
        message.obsolete = False
    for message in catalog.obsolete.values():
        message.obsolete = True
        found.append(message)
    return found


def translation(entry):
    """The translation of a catalog entry (its plural forms joined), "" if none."""
    return entry.string if isinstance(entry.string, str) else "\n".join(entry.string)


def state(entry):
    """Return "obsolete", "untranslated", "fuzzy" or "translated"."""
    if entry.obsolete:
        return "obsolete"
    if not translation(entry):
        return "untranslated"
    return "fuzzy" if "fuzzy" in entry.flags else "translated"


def key(entry):
    """An entry's identity in its catalog: context and English."""
    return entry.context, english(entry)


def previous_key(entry):
    """The identity its English had before it became fuzzy, or None."""
    return (entry.context, entry.previous_id[0]) if entry.previous_id else None


@dataclass
class Change:
    """One entry that changed between the base and the working tree."""

    state: str
    old: object  # the Babel Message at the base, or None
    new: object  # the Babel Message in the working tree, or None
    findings: list = field(default_factory=list)
    anchor: str = None  # href of its section in the built pages
    section: str = None  # that section's title

    @property
    def old_english(self):
        if self.old is not None:
            return english(self.old)
        return (self.new.previous_id or [None])[0] if self.new is not None else None

    @property
    def new_english(self):
        return english(self.new) if self.new is not None else None


def classify(old, new):
    """Return the state of the change from *old* to *new* (either may be None), or None."""
    if old is None:
        return "obsolete" if new.obsolete else "new"
    if new is None:
        return "removed"
    before, after = state(old), state(new)
    if before != "obsolete" and after == "obsolete":
        return "obsolete"
    if before == "obsolete" and after != "obsolete":
        return "restored"
    moves = {
        ("translated", "fuzzy"): "became fuzzy",
        ("untranslated", "fuzzy"): "became fuzzy",
        ("fuzzy", "translated"): "fuzzy resolved",
        ("untranslated", "translated"): "translated",
        ("translated", "untranslated"): "untranslated",
        ("fuzzy", "untranslated"): "untranslated",
    }
    if (before, after) in moves:
        return moves[(before, after)]
    if key(old) != key(new) or translation(old) != translation(new):
        return "changed"
    return None


def compare(old_entries, new_entries):
    """Return the Changes from one catalog's entries to another's, in the new one's order."""
    old_by_key = {key(e): e for e in old_entries}
    paired, matches = set(), []
    for new in new_entries:
        old = old_by_key.get(key(new))
        if old is None and previous_key(new) in old_by_key:
            old = old_by_key[previous_key(new)]
        if old is not None and id(old) in paired:
            old = None
        if old is not None:
            paired.add(id(old))
        matches.append([old, new])
    # A sentence edited and re-translated in the same change no longer carries
    # its old English: pair what is left by similarity, as a merge would.
    leftover = [e for e in old_entries if id(e) not in paired and not e.obsolete]
    for match in matches:
        if match[0] is None and leftover and not match[1].obsolete:
            ratio, best = max(
                (difflib.SequenceMatcher(None, english(o), english(match[1])).ratio(), i)
                for i, o in enumerate(leftover)
            )
            if ratio >= PAIRING:
                match[0] = leftover.pop(best)
                paired.add(id(match[0]))
    changes = [Change(s, old, new) for old, new in matches if (s := classify(old, new))]
    changes += [Change("removed", old, None) for old in old_entries if id(old) not in paired]
    return changes


@dataclass
class PageReview:
    """The changes of one catalog (a page, or the interface strings) of one language."""

    lang: str
    domain: str  # catalog path under LC_MESSAGES, without .po
    path: Path  # the working tree's catalog (it may no longer exist)
    changes: list
    findings: list = field(default_factory=list)  # findings on no particular entry
    spans: list = field(default_factory=list)  # (first line, entry) in the working tree


def catalogs_at(commit, lang, locale_dir):
    """Map each catalog domain of *lang* at *commit* to its text."""
    top = Path(git("rev-parse", "--show-toplevel", cwd=locale_dir).strip())
    folder = (locale_dir / lang / "LC_MESSAGES").resolve().relative_to(top.resolve()).as_posix()
    names = git("ls-tree", "-r", "--name-only", commit, "--", folder + "/", cwd=top).split("\n")
    found = {}
    for name in filter(None, names):
        if name.endswith(".po"):
            domain = name[len(folder) + 1 : -len(".po")]
            found[domain] = git("show", f"{commit}:{name}", cwd=top)
    return found


def glossary_at(commit, glossary):
    """The glossary rows of the file *glossary* as it is at *commit* (none if it was not there):
    the words an interface string may add in a change are those of its base, not its own."""
    top = Path(git("rev-parse", "--show-toplevel", cwd=Path(glossary).parent).strip())
    name = Path(glossary).resolve().relative_to(top.resolve()).as_posix()
    try:
        return parse_glossary(git("show", f"{commit}:{name}", cwd=top))
    except ReviewError:
        return ()


def review_language(commit, lang, locale_dir):
    """Return the PageReviews of *lang*: every catalog that differs in content from *commit*."""
    old_texts = catalogs_at(commit, lang, locale_dir)
    new_paths = language_catalogs(locale_dir, lang)
    pages = []
    for domain in sorted(old_texts.keys() | new_paths.keys()):
        path = new_paths.get(domain, locale_dir / lang / "LC_MESSAGES" / f"{domain}.po")
        try:
            old = entries(parse(old_texts[domain], lang)) if domain in old_texts else []
        except CatalogError:
            old = []  # unreadable at the base: everything in it counts as new
        try:
            new = entries(read(path, lang)) if domain in new_paths else []
        except CatalogError:
            # make check's syntax finding on it is shown for the catalog as a whole.
            pages.append(PageReview(lang, domain, path, []))
            continue
        changes = compare(old, new)
        spans = sorted(((e.lineno, i), e) for i, e in enumerate(new))
        pages.append(PageReview(lang, domain, path, changes, spans=spans))
    return pages


# -- Findings of make check --------------------------------------------------


def entry_at(spans, line):
    """The entry of a catalog whose lines include *line*, from (first line, entry) pairs."""
    found = None
    for (first, _), entry in spans:
        if first > line:
            break
        found = entry
    return found


# Checks that judge a catalog as a whole, even when they name a line of it.
CATALOG_CHECKS = {"canonical", "syntax"}


def attach_findings(pages, problems):
    """Give each change the problems found on its entry, each page those on no entry.

    Return the problems that belong to no catalog under review (English sources).
    """
    by_path = {_where(page.path): page for page in pages}
    outside = []
    for problem in problems:
        page = by_path.get(_where(problem.path))
        if page is None:
            outside.append(problem)
            continue
        entry = entry_at(page.spans, problem.line)
        change = next((c for c in page.changes if entry is not None and c.new is entry), None)
        if change is not None and problem.check not in CATALOG_CHECKS:
            change.findings.append(problem)
        else:
            page.findings.append(problem)
    return outside


def keep_changed(problems, pages, unchanged):
    """Keep the problems on changed entries, on whole catalogs that changed, and outside them.

    A problem on an unchanged entry, or anywhere in a catalog whose bytes are
    those of the base (the paths in *unchanged*), was there before the change.
    """
    by_path = {_where(page.path): page for page in pages}
    kept = []
    for problem in problems:
        path = _where(problem.path)
        if path in unchanged:
            continue
        page = by_path.get(path)
        entry = entry_at(page.spans, problem.line) if page else None
        if entry is None or problem.check in CATALOG_CHECKS or any(c.new is entry for c in page.changes):
            kept.append(problem)
    return kept


def changed_only(problems, commit, langs, locale_dir):
    """What ``make check BASE=`` reports: *problems* that this change brought (keep_changed).

    In a language the change translates nothing in (an English-only change,
    or one translated into the other language only), its unfinished entries
    are left for that language's translators: warnings, not errors of the
    change (untranslated_elsewhere).
    """
    pages = [page for lang in langs for page in review_language(commit, lang, locale_dir)]
    kept = keep_changed(problems, pages, unchanged_catalogs(commit, langs, locale_dir))
    return untranslated_elsewhere(kept, pages, locale_dir)


def translated_languages(pages, locale_dir):
    """The languages in which the change translated something by hand.

    The entries ``make update-po`` fills itself (merging.filled_by_update_po)
    are not a translator's work.
    """
    found = set()
    for page in pages:
        shared = shared_entries(page.lang, page.domain, locale_dir)
        for change in page.changes:
            new = change.new
            if new is None or state(new) != "translated" or filled_by_update_po(new, shared):
                continue
            if change.old is None or translation(change.old) != translation(new):
                found.add(page.lang)
    return found


def untranslated_elsewhere(problems, pages, locale_dir):
    """*problems*, with the unfinished entries of languages the change did not translate as warnings."""
    worked = translated_languages(pages, locale_dir)
    by_path = {_where(page.path): page.lang for page in pages}
    result = []
    for problem in problems:
        lang = by_path.get(_where(problem.path))
        if problem.check == "completeness" and lang is not None and lang not in worked:
            problem = replace(
                problem,
                severity=WARNING,
                message=problem.message
                + (
                    f" (this change translates nothing into {lang}: left for its translators;"
                    " main needs it finished, as make check without BASE= requires)"
                ),
            )
        result.append(problem)
    return result


def _where(path):
    """*path* made absolute, a symbolic link left as the link (not where it points)."""
    return Path(os.path.abspath(path))


def _text_or_none(path):
    """The text of the catalog *path*, or None if it is no catalog (a link, say)."""
    try:
        return catalog_text(path)
    except CatalogError:
        return None


def unchanged_catalogs(commit, langs, locale_dir):
    """The working tree's catalogs of *langs* whose bytes are the same at *commit*."""
    same = set()
    for lang in langs:
        old = catalogs_at(commit, lang, locale_dir)
        for domain, path in language_catalogs(locale_dir, lang).items():
            if domain in old and old[domain] == _text_or_none(path):
                same.add(_where(path))
    return same


# -- Where each entry appears in the built pages -----------------------------
