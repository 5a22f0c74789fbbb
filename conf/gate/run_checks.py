"""make check: the checks of the translations' catalogs (python -m gate.run_checks [LANG...]).

Each problem is printed as ``file:line: [check] what is wrong`` at the line of
the translation it is about, without a build: each entry is parsed as Sphinx
parses it (gate/parse.py, gate/project.py). Errors fail; warnings
(``[check] warning: ...``) are worth a look and never fail. Only translated,
non-fuzzy entries are checked for what they say; completeness reports the
others. :func:`run_checks` returns the Problems; :func:`main` alone prints.
"""

import argparse
import hashlib
import json
import os
import sys
from dataclasses import astuple, replace
from pathlib import Path

from languages import TRANSLATIONS
from site_layout import BUILD, GLOSSARY, LOCALE, POT_DIR, files_digest, machinery_version, write_if_changed
from catalogs.diff import (
    glossary_at,
    keep_changed,
    resolve_base,
    review_language,
    state,
    translation,
    unchanged_catalogs,
)
from catalogs.glossary import load as load_glossary
from catalogs.merge import fresh_templates, filled_by_update_po, shared_entries
from catalogs.po import (
    catalog_languages,
    language_catalogs,
    misplaced,
    msgstr_line,
    shown,
)
from catalogs.repository import ReviewError
from gate import catalog, code, english, language, recordings, safety
from gate.compare import compare
from gate.findings import ERROR, WARNING, Message, Problem, error
from gate.parse import SYNTAXES
from gate.project import Project
from gate.words import too_long

COMPARED = ("markup", "references", "unused")  # one pass: gate/compare.py
ENTRY_CHECKS = {
    **dict.fromkeys(COMPARED, compare),
    "script-mix": language.check_script,
    "terminology": language.check_terms,
    "english": english.check,
    "safety": safety.check,
    "interface": safety.check_interface,
    "code": code.check,
}
CHECKS = ("out-of-sync", "syntax", *ENTRY_CHECKS, "completeness", "canonical", "glyphs")
# Of the project, not of a language's catalogs: the committed GPU recordings beside them.
PROJECT_CHECKS = {recordings.CHECK: recordings}
# What the translations say; the form of a catalog (canonical, and the characters of
# its comments and unused entries: glyphs) is the reviewer's concern, and fuzzy or
# stale entries show the English.
TRANSLATION_CHECKS = tuple(
    c for c in CHECKS if c not in ("out-of-sync", "completeness", "canonical", "glyphs")
)
FUZZY = "fuzzy: check the translation against the new English, then remove the flag"
PLURAL = (
    "an entry with a plural form (msgid_plural): the English has no plural messages, "
    "so the build leaves it out (gettext would show its msgstr[0], unchecked)"
)


def check_catalog(found, lang, selected, project):
    """Return the problems of one catalog (a po.CatalogFile) for the *selected* checks."""
    problems = [Problem(found.shown, line, check, why) for line, check, why in catalog.whole(found, selected)]
    if found.catalog is None:
        return problems
    functions = list(dict.fromkeys(f for name, f in ENTRY_CHECKS.items() if name in selected))
    said = []  # (entry, check, Finding)
    for entry in found.entries:
        if entry.pluralizable:  # its msgstr[n] would be served, unchecked: the build drops it
            said.append((entry, "unused", error(PLURAL)))
        elif entry.fuzzy or not entry.string:
            said.append((entry, "completeness", error(FUZZY if entry.fuzzy else "untranslated")))
        elif too_long(entry.id, entry.string):  # no parser is given it (nor does the build compile it)
            said.append((entry, "safety", error(too_long(entry.id, entry.string))))
        else:
            syntax = project.syntax(found.path, entry)
            message = Message(entry.id, entry.string, lang, syntax, project, found.path)
            for function in functions:
                name = next(name for name, f in ENTRY_CHECKS.items() if f is function)
                said += [(entry, finding.check or name, finding) for finding in function(message)]
    problems += [
        Problem(
            found.shown,
            entry.lineno if entry.pluralizable else msgstr_line(entry, f.at),
            check,
            f.message,
            f.severity,
        )
        for entry, check, f in said
        if check in selected
    ]
    if "glyphs" in selected:  # every line: what the safety check says of a translation, it says once
        said_at = {p.line for p in problems if p.check == "safety"}
        problems += [
            Problem(found.shown, line, "glyphs", why)
            for line, why in catalog.glyphless_lines(found.text)
            if line not in said_at
        ]
    return problems


def run_checks(
    langs,
    selected,
    locale_dir=LOCALE,
    pot_dir=None,
    glossary_path=GLOSSARY,
    sources=None,
    default_syntax="rst",
    cache_in=None,
    allowed_glossary=None,
):
    """Return the sorted problems of *langs*' catalogs for the *selected* checks.

    *sources*: the Sphinx source folder of the catalogs' project (default: the
    docs/ beside the locale folder, if any). *cache_in*: a folder where each
    catalog's problems are kept (:class:`ProblemCache`). *allowed_glossary*: the
    rows whose words an interface string may add (default: *glossary_path*'s;
    ``make check BASE=`` gives the base's).
    """
    beside = Path(locale_dir).parent / "docs"
    sources = sources or (beside if beside.is_dir() else None)
    glossary = load_glossary(glossary_path) if {"terminology", "interface", "english"} & selected else ()
    if "out-of-sync" in selected and pot_dir is None:
        fresh_templates()  # extracts the English only if a source changed since the last time
        pot_dir = POT_DIR
    project = Project(locale_dir, sources, pot_dir, default_syntax, glossary, allowed_glossary)
    cache = ProblemCache(project, selected, glossary_path, cache_in) if cache_in else None
    problems = []
    for lang in langs:
        if "out-of-sync" in selected:
            problems += catalog.out_of_sync(
                Path(pot_dir), locale_dir / lang / "LC_MESSAGES", project.catalog_file
            )
        for po_path in language_catalogs(locale_dir, lang).values():
            if cache:
                problems += cache.problems(po_path, lang)
            else:
                problems += check_catalog(project.catalog_file(po_path), lang, selected, project)
        if "syntax" in selected and (locale_dir / lang).is_dir():
            problems += catalog.committed_compiled(locale_dir / lang)
    if recordings.CHECK in selected:  # the project's whose catalogs these are
        problems += recordings.stale(Path(locale_dir).parent)
    if "syntax" in selected:  # what the build would stop at before it reads any catalog
        problems += [
            Problem(shown(path), 1, "syntax", why) for path, why in misplaced(Path(locale_dir), TRANSLATIONS)
        ]
    return sorted(set(problems))


def errors(langs, locale_dir=LOCALE, checks=TRANSLATION_CHECKS):
    """Return the errors that *checks* find in *langs*' catalogs (kept in _build/checks/: :class:`ProblemCache`)."""
    problems = run_checks(langs, set(checks), Path(locale_dir), cache_in=BUILD / "checks")
    return [p for p in problems if p.severity == ERROR]


class ProblemCache:
    """Each catalog's problems from the last run, reused while nothing they depend on changed.

    The build and the live preview check a language's catalogs before each
    rebuild, and a translator's save changes one. A catalog's problems depend
    on its bytes and on what the checks see: their code (site_layout.
    machinery_version), the glossary, the English (sources, examples,
    templates, every catalog's msgids, which name the roles and targets that
    exist), the checks asked for and the folders paths are shown from.
    """

    def __init__(self, project, selected, glossary, folder):
        self.project, self.selected, self.folder = project, selected, Path(folder)
        world = hashlib.sha256(
            json.dumps([sorted(selected), os.getcwd(), str(project.locale_dir.resolve())]).encode()
        )
        world.update(machinery_version().encode())
        files = [Path(glossary), *(project.pot_dir or POT_DIR).rglob("*.pot")]
        if project.sources:
            english = [*project.sources.rglob("*"), *(project.sources.parent / "examples").glob("*.py")]
            files += [
                path
                for path in english
                if path.suffix in (".py", ".rst", ".md", ".txt") and "_build" not in path.parts
            ]
        world.update(files_digest(files).encode())
        for po_path in project.catalogs():
            found = project.catalog_file(po_path)  # (unreadable: its syntax check says why)
            ids = [message.id for message in found.entries] if found.catalog else None
            world.update(json.dumps([str(po_path), ids]).encode())
        self.world = world.hexdigest()

    def problems(self, po_path, lang):
        """The problems of *lang*'s catalog *po_path*: from the cache, or found and kept there."""
        found = self.project.catalog_file(po_path)
        if found.text is None:
            return list(check_catalog(found, lang, self.selected, self.project))  # it says why
        digest = hashlib.sha256(self.world.encode() + found.text.encode()).hexdigest()
        kept = self.folder / (hashlib.sha256(str(Path(po_path).resolve()).encode()).hexdigest() + ".json")
        try:
            cached = json.loads(kept.read_text("utf-8"))
            if cached["digest"] == digest:
                return [Problem(*fields) for fields in cached["problems"]]
        except (OSError, ValueError, KeyError, TypeError):
            pass  # never checked, or by other code: check it
        problems = list(check_catalog(found, lang, self.selected, self.project))
        write_if_changed(
            kept, json.dumps({"digest": digest, "problems": [astuple(p) for p in problems]}).encode()
        )
        return problems


# -- make check BASE=: what a change brought ---------------------------------------


def changed_only(problems, commit, langs, locale_dir):
    """The *problems* on what changed since *commit* (diff.keep_changed). In a language the
    change translates nothing in (an English-only change), the unfinished entries are left
    to its translators: warnings, not errors of the change."""
    pages = [page for lang in langs for page in review_language(commit, lang, locale_dir)]
    kept = keep_changed(problems, pages, unchanged_catalogs(commit, langs, locale_dir))
    return untranslated_elsewhere(kept, pages, locale_dir)


def untranslated_elsewhere(problems, pages, locale_dir):
    """*problems*, with the unfinished entries of languages no change in *pages* translated by
    hand (not by make update-po itself: merge.filled_by_update_po) as warnings."""
    worked = set()
    for page in pages:
        shared = shared_entries(page.lang, page.domain, locale_dir)
        for change in page.changes:
            new = change.new
            if new is None or state(new) != "translated" or filled_by_update_po(new, shared):
                continue
            if change.old is None or translation(change.old) != translation(new):
                worked.add(page.lang)
    by_path = {Path(os.path.abspath(page.path)): page.lang for page in pages}
    result = []
    for problem in problems:
        lang = by_path.get(Path(os.path.abspath(problem.path)))
        if problem.check == "completeness" and lang is not None and lang not in worked:
            problem = replace(
                problem,
                severity=WARNING,
                message=f"{problem.message} (this change translates nothing into {lang}: left for its translators;"
                " main needs it finished, as make check without BASE= requires)",
            )
        result.append(problem)
    return result


# -- The command line ------------------------------------------------------------------


def main(argv=None):
    """Run the checks, print the problems, and return the exit code (0 no errors, 1 errors, 2 usage)."""
    module = {name: ENTRY_CHECKS.get(name, catalog.whole).__module__ for name in CHECKS}
    module["completeness"], module["glyphs"] = __name__, catalog.__name__
    module.update({name: checker.__name__ for name, checker in PROJECT_CHECKS.items()})
    parser = argparse.ArgumentParser(
        prog="python -m gate.run_checks",
        description=__doc__.split("\n\n")[1],
        epilog="checks: " + ", ".join(f"{name} ({module[name].replace('.', '/')}.py)" for name in module),
    )
    add = parser.add_argument
    add("languages", nargs="*", metavar="LANG", help="the languages to check (default: every translation)")
    add("--strict", type=int, choices=(0, 1), default=1, help="1: fuzzy or untranslated entries are errors")
    add(
        "--check",
        action="append",
        choices=[*CHECKS, *PROJECT_CHECKS],
        metavar="NAME",
        help="run only this check (repeatable)",
    )
    add("--severity", choices=(ERROR, WARNING), default=WARNING, help="the least severe problems to print")
    add("--syntax", choices=SYNTAXES, default="rst", help="for another project's entries without #:")
    add("--sources", type=Path, help="the Sphinx source folder (default: the docs/ beside --locale-dir)")
    add("--locale-dir", type=Path, default=LOCALE)
    add("--pot-dir", type=Path, help="compare with these .pot files (default: extract the English)")
    add("--glossary", type=Path, default=GLOSSARY)
    add("--base", metavar="REV", help="report only problems on entries changed since REV")
    args = parser.parse_args(argv)
    selected = set(args.check or [*CHECKS, *PROJECT_CHECKS])
    try:
        langs = catalog_languages(args.languages, args.locale_dir)
        for option, folder in (("--pot-dir", args.pot_dir), ("--sources", args.sources)):
            if folder and not folder.is_dir():
                raise ValueError(f"{option} {folder} is not a folder")
        if {"terminology", "interface", "english"} & selected and not args.glossary.is_file():
            raise ValueError(f"glossary {args.glossary} not found")
        if args.base:  # a bad revision fails before the checks run; never the change's own glossary
            base = resolve_base(args.base, args.locale_dir)[0]
        allowed = glossary_at(base, args.glossary) if args.base else None
        problems = run_checks(
            langs,
            selected,
            args.locale_dir,
            args.pot_dir,
            args.glossary,
            args.sources,
            args.syntax,
            allowed_glossary=allowed,
        )
    except (ValueError, ReviewError) as err:
        parser.error(str(err))
    except RuntimeError as err:  # the English could not be extracted
        print(f"error: {err}", file=sys.stderr)
        return 1
    if not args.strict:  # unfinished entries are reported, not counted
        problems = [replace(p, severity=WARNING) if p.check == "completeness" else p for p in problems]
    if args.base:  # (the project's checks are about the whole checkout: all kept)
        project = [p for p in problems if p.check in PROJECT_CHECKS]
        problems = changed_only([p for p in problems if p not in project], base, langs, args.locale_dir)
        problems = sorted(problems + project)
    problems = [p for p in problems if args.severity == WARNING or p.severity == ERROR]
    for problem in problems:
        print(problem)
    failing = sum(p.severity == ERROR for p in problems)
    counts = f"{failing} error(s)" if failing else "all checks passed"
    counts += f", {len(problems) - failing} warning(s)" if len(problems) > failing else ""
    counts += f" on what changed since {args.base}" if args.base else ""
    print(f"{counts} ({', '.join(langs)})", file=sys.stderr)
    unfinished = any(p.severity == ERROR and p.check == "completeness" for p in problems)
    if unfinished and not args.base and args.locale_dir == LOCALE:
        print(
            "main accepts only complete translations. After a change to the English alone, run `make check"
            ' BASE=main`: it fails only on what the change\'s own translations get wrong (docs/maintaining.md, "Adding a tutorial").',
            file=sys.stderr,
        )
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
