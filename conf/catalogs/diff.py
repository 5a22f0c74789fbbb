"""What a change did to a language's catalogs since a base revision, entry by entry.

Entries are compared by English and translation, never by lines (re-wrapping,
moved ``#:`` lines, reordering show nothing); an edited English is paired with
its old self through the ``#| msgid`` a merge records, else by similarity. The
review page shows the changes, ``make check BASE=`` keeps the findings on them
(:func:`keep_changed`); :func:`word_diff` is the catalog tools' one word diff.
"""

import difflib
import html
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from site_layout import ROOT
from catalogs.glossary import parse as parse_glossary
from catalogs.po import CatalogError, catalog_text, english, language_catalogs, messages, parse, read
from catalogs.repository import ReviewError, git

PAIRING = 0.6  # how alike two msgids must be to count as one sentence edited
# A word of ASCII letters and digits, a run of whitespace, or any other character
# (a Chinese character is a word of its own).
_TOKEN = re.compile(r"[A-Za-z0-9_]+|\s+|.", re.DOTALL)
_COLORS = {"removed": ("\033[31m", "\033[0m"), "added": ("\033[32m", "\033[0m")}  # red, green
_BRACKETS = {"removed": ("[-", "-]"), "added": ("{+", "+}")}


def word_diff(old, new, style="text", context=None):
    """*new* with what changed since *old* marked, word by word (Chinese: character by character):
    ``[-removed-]{+added+}`` (*style* "text"; "color" in red and green; "html" escaped, as ``<del>``
    and ``<ins>`` with a hidden "removed:" for screen readers). *context*: an unchanged run longer
    than twice that many tokens keeps that many at each end around "…"."""
    before, after = _TOKEN.findall(old), _TOKEN.findall(new)
    opcodes = difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
    escape = html.escape if style == "html" else str
    out = []
    for index, (op, i1, i2, j1, j2) in enumerate(opcodes):
        if op == "equal":
            same = after[j1:j2]
            if context and len(same) > 2 * context:
                head = same[:context] if index else []
                same = [*head, "…", *(same[-context:] if index < len(opcodes) - 1 else [])]
            out.append(escape("".join(same)))
            continue
        for kind, run in (("removed", before[i1:i2]), ("added", after[j1:j2])):
            text = "".join(run)
            lead, core, trail = re.fullmatch(r"(\s*)(.*?)(\s*)", text, re.DOTALL).groups()
            if not core:  # spaces alone: no mark
                out.append(text if kind == "added" else "")
            elif style == "html":
                tag = "del" if kind == "removed" else "ins"
                out.append(
                    f'{lead}<{tag}><span class="visually-hidden">{kind}: </span>{escape(core)}</{tag}>{trail}'
                )
            else:
                (start, end), (color, reset) = (
                    _BRACKETS[kind],
                    _COLORS[kind] if style == "color" else ("", ""),
                )
                out.append(f"{lead}{color}{start}{core}{end}{reset}{trail}")
    return "".join(out)


def resolve_base(revision=None, cwd=ROOT):
    """Return (commit, how it was chosen) for *revision*, by default the merge base with main."""
    try:
        git("rev-parse", "--git-dir", cwd=cwd)
    except ReviewError:
        raise ReviewError(f"{cwd} is not in a git repository: nothing to compare with") from None
    if revision:
        try:
            return git(
                "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}", cwd=cwd
            ).strip(), revision
        except ReviewError:
            raise ReviewError(
                f"BASE={revision} is not a revision of this repository (git rev-parse cannot find it; fetch it first?)"
            ) from None
    for branch in ("main", "origin/main"):
        try:
            git("rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}", cwd=cwd)
        except ReviewError:
            continue
        try:
            return git("merge-base", branch, "HEAD", cwd=cwd).strip(), f"merge base with {branch}"
        except ReviewError:
            raise ReviewError(
                f"HEAD and {branch} have no common history here (a shallow clone? run git fetch"
                " --unshallow); give BASE=<revision>"
            ) from None
    raise ReviewError(
        "this repository has no branch main (nor origin/main) to compare with;"
        " give the revision: make review-diff BASE=<revision>"
    )


# -- Comparing catalogs ------------------------------------------------------


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


# (state at the base, state now): what happened, where the English stayed.
MOVES = {
    ("translated", "fuzzy"): "became fuzzy",
    ("untranslated", "fuzzy"): "became fuzzy",
    ("fuzzy", "translated"): "fuzzy resolved",
    ("untranslated", "translated"): "translated",
    ("translated", "untranslated"): "untranslated",
    ("fuzzy", "untranslated"): "untranslated",
}


def classify(old, new):
    """Return the state of the change from *old* to *new* (either may be None), or None."""
    if old is None:
        return "obsolete" if new.obsolete else "new"
    if new is None:
        return "removed"
    before, after = state(old), state(new)
    if (before == "obsolete") != (after == "obsolete"):
        return "obsolete" if after == "obsolete" else "restored"
    if (before, after) in MOVES:
        return MOVES[before, after]
    return "changed" if key(old) != key(new) or translation(old) != translation(new) else None


def compare(old_entries, new_entries):
    """Return the Changes from one catalog's entries to another's, in the new one's order."""
    old_by_key = {key(e): e for e in old_entries}
    paired, matches = set(), []
    for new in new_entries:
        old = old_by_key.get(key(new))
        if old is None and new.previous_id:
            old = old_by_key.get((new.context, new.previous_id[0]))
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
    return changes + [Change("removed", old, None) for old in old_entries if id(old) not in paired]


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
    return {
        name[len(folder) + 1 : -len(".po")]: git("show", f"{commit}:{name}", cwd=top)
        for name in names
        if name.endswith(".po")
    }


def glossary_at(commit, glossary):
    """The glossary rows of the file *glossary* at *commit* (none if it was not there): the words
    an interface string may add in a change are its base's, not its own."""
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
        except CatalogError:  # make check's syntax finding on it is shown for the whole catalog
            pages.append(PageReview(lang, domain, path, []))
            continue
        spans = sorted(((e.lineno, i), e) for i, e in enumerate(new))
        pages.append(PageReview(lang, domain, path, compare(old, new), spans=spans))
    return pages


# -- Findings of make check --------------------------------------------------

# Checks that judge a catalog as a whole, even when they name a line of it.
CATALOG_CHECKS = {"canonical", "syntax"}


def entry_at(spans, line):
    """The entry of a catalog whose lines include *line*, from (first line, entry) pairs."""
    found = None
    for (first, _), entry in spans:
        if first > line:
            break
        found = entry
    return found


def _where(path):
    """*path* made absolute, a symbolic link left as the link (not where it points)."""
    return Path(os.path.abspath(path))


def attach_findings(pages, problems):
    """Give each change the problems found on its entry, each page those on no entry;
    return the problems that belong to no catalog under review (English sources)."""
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
    """The problems on changed entries or on catalogs (as wholes) that changed (not *unchanged*)."""
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


def unchanged_catalogs(commit, langs, locale_dir):
    """The working tree's catalogs of *langs* whose bytes are the same at *commit*."""
    same = set()
    for lang in langs:
        old = catalogs_at(commit, lang, locale_dir)
        for domain, path in language_catalogs(locale_dir, lang).items():
            try:
                if domain in old and old[domain] == catalog_text(path):
                    same.add(_where(path))
            except CatalogError:
                pass  # no catalog (a link, say): make check says why
    return same
