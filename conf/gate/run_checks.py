"""Check the translation catalogs for the mistakes a reviewer would miss (make check).

Usage:
    python conf/gate/run_checks.py [--strict=1|0] [--check NAME]...
        [--severity error|warning] [--syntax rst|myst|text] [options] [LANG...]

Each check is a module of translation/checks/; this runner reads the catalogs
of LANG (default: every translation in conf/languages.py) and runs them.
Every problem is printed as ``file:line: [check] what is wrong``, at the line
of the translation (msgstr) it is about. Errors fail; warnings, printed as
``file:line: [check] warning: ...``, are worth a look and never fail.

    out-of-sync   the catalogs do not match the English sources
    syntax        a catalog is not a valid .po file, or a compiled .mo or .js
                  is committed beside the catalogs
    markup        inline markup shown as raw text (glued to Chinese text, an
                  unbalanced ``), an unknown role, a changed inline literal
    references    a cross-reference, link, link name, substitution, footnote
                  or citation reference that leads elsewhere or is lost; a
                  target that does not resolve
    unused        a translation that Sphinx will not use (it shows the English),
                  or an entry with a plural form, which the English never has
    script-mix    Simplified characters in a Hant language (zh_TW), Traditional
                  ones in a Hans language (zh_CN)
    terminology   a glossary term is not translated as locale/glossary.csv says
    safety        a translation adds a link to another site, a non-http(s)
                  link, HTML or a directive, invisible or direction-changing
                  characters, or, in a tutorial, Markdown that its notebook
                  would make a link, an image or HTML
    interface     an interface string (sphinx.po) adds a character that starts
                  or ends markup, or a word or number its English lacks (with
                  BASE, the base's glossary says which words it may add), or
                  does not keep its placeholders, or is one the site does not
                  extract
    code          translated Python (literal blocks, doctests) is another program
    canonical     a catalog not in the form make update-po writes (make format-po fixes it)
    completeness  fuzzy or untranslated entries; errors only with --strict=1

Only translated, non-fuzzy entries are checked for their content: a fuzzy or
empty translation is not used on the site, and ``completeness`` reports it.
Each entry is parsed as Sphinx will parse it (checks/project.py): this
project's catalogs by their document in docs/ (``--sources``, by default the
docs/ beside the locale folder), without needing ``#:`` lines; catalogs
without such a folder by each entry's ``#:`` line, else as ``--syntax``
(default rst). ``out-of-sync`` compares with the current English in
_build/gettext/, extracted as ``make gettext`` does when a source changed
since the last extraction (catalogs/progress.py), unless ``--pot-dir``
names .pot files.

``run_checks.py --severity error LANG`` prints only the errors and exits 1 if
there are any; in Python, ``errors(["zh_CN"])`` returns them as Problems
(by default every check of what the translations say: not out-of-sync,
completeness or canonical, which do not make a page wrong). The build
(``conf/build/site.py``) calls it with the checks that refuse a
translation, its ``CONTENT_CHECKS``.

Exit codes: 0 no errors, 1 errors found, 2 bad usage.
"""

import argparse
import hashlib
import json
import os
import sys
from dataclasses import astuple, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conf/: languages and the packages
from catalogs.report import catalog_languages  # noqa: E402
from gate.checks import (  # noqa: E402
    canonical,
    code,
    completeness,
    interface,
    markup,
    references,
    safety,
    script_mix,
    sync,
    syntax,
    terminology,
    unused,
)
from gate.checks.common import (  # noqa: E402
    ERROR,
    GLOSSARY,
    WARNING,
    Message,
    Problem,
    shown,
)
from gate.checks.parsing import SYNTAXES  # noqa: E402
from gate.checks.project import Project  # noqa: E402
from site_layout import BUILD, LOCALE, files_digest, machinery_version, write_if_changed  # noqa: E402
from languages import TRANSLATIONS  # noqa: E402
from catalogs.po import (  # noqa: E402
    catalog_text,
    language_catalogs,
    messages,
    misplaced,
    msgstr_line,
)
from catalogs.diff import changed_only, glossary_at, resolve_base  # noqa: E402
from catalogs.progress import POT_DIR, fresh_templates  # noqa: E402
from catalogs.repository import ReviewError  # noqa: E402
from gate.words import too_long  # noqa: E402

ENTRY_CHECKS = {
    "markup": markup.check,
    "references": references.check,
    "unused": unused.check,
    "script-mix": script_mix.check,
    "terminology": terminology.check,
    "safety": safety.check,
    "interface": interface.check,
    "code": code.check,
}
CHECKS = ("out-of-sync", "syntax", *ENTRY_CHECKS, "completeness", "canonical")
# What the translations say; the form of a catalog (canonical) is the
# reviewer's concern, and fuzzy or stale entries show the English.
TRANSLATION_CHECKS = tuple(c for c in CHECKS if c not in ("out-of-sync", "completeness", "canonical"))
PLURAL = (
    "an entry with a plural form (msgid_plural): the English has no plural messages, "
    "so the build leaves it out (gettext would show its msgstr[0], unchecked)"
)


def check_catalog(po_path, lang, selected, project):
    """Yield the problems of one catalog for the *selected* checks."""
    if "syntax" in selected:
        yield from syntax.check(po_path)
    if "canonical" in selected:
        yield from canonical.check(po_path)
    try:
        catalog = project.load(po_path)
        lines = catalog_text(po_path).split("\n")
    except (OSError, ValueError) as err:
        if "syntax" not in selected:  # else the syntax check said why, at its line
            yield Problem(shown(po_path), 1, "syntax", f"cannot read the catalog: {err}")
        return
    checks = {name: check for name, check in ENTRY_CHECKS.items() if name in selected}
    for entry in messages(catalog):
        if entry.pluralizable:  # its msgstr[n] would be served, unchecked: the build drops it
            if "unused" in selected:
                yield Problem(shown(po_path), entry.lineno, "unused", PLURAL)
            continue
        unfinished = completeness.check(entry)
        if unfinished:
            if "completeness" in selected:
                yield Problem(shown(po_path), msgstr_line(lines, entry), "completeness", unfinished)
            continue
        long = too_long(entry.id, entry.string)
        if long:  # no parser is given it (safety: the build compiles it not either)
            if "safety" in selected:
                yield Problem(shown(po_path), msgstr_line(lines, entry), "safety", long)
            continue
        message = Message(entry.id, entry.string, lang, project.syntax(po_path, entry), project, po_path)
        for name, check in checks.items():
            for finding in check(message):
                yield Problem(
                    shown(po_path),
                    msgstr_line(lines, entry, finding.at),
                    name,
                    finding.message,
                    finding.severity,
                )


def run_checks(
    langs,
    selected,
    locale_dir=LOCALE,
    pot_dir=None,
    glossary_path=GLOSSARY,
    sources=None,
    default_syntax="rst",
    remember_in=None,
    allowed_glossary=None,
):
    """Return the sorted problems of *langs*' catalogs for the *selected* checks.

    *sources* is the Sphinx source folder of the catalogs' project (default:
    the docs/ beside the locale folder, if there is one). *remember_in*: a
    folder where each catalog's problems are kept, and reused while nothing
    they depend on changed (:class:`Remembered`). *allowed_glossary*: the
    glossary rows whose words an interface string may add (default: those of
    *glossary_path*; with a base, the base's: catalog_diff.glossary_at).
    """
    beside = Path(locale_dir).parent / "docs"
    sources = sources or (beside if beside.is_dir() else None)
    wants_glossary = {"terminology", "interface"} & selected  # the words a translation may add
    glossary = terminology.load_glossary(str(glossary_path)) if wants_glossary else ()
    if "out-of-sync" in selected and pot_dir is None:
        fresh_templates()  # extracts the English only if a source changed since the last time
        pot_dir = POT_DIR
    project = Project(locale_dir, sources, pot_dir, default_syntax, glossary, allowed_glossary)
    cache = Remembered(project, selected, glossary_path, remember_in) if remember_in else None
    problems = []
    for lang in langs:
        if "out-of-sync" in selected:
            problems += sync.check(Path(pot_dir), locale_dir / lang / "LC_MESSAGES", project.load)
        for po_path in language_catalogs(locale_dir, lang).values():
            if cache:
                problems += cache.problems(po_path, lang)
            else:
                problems += check_catalog(po_path, lang, selected, project)
        if "syntax" in selected and (locale_dir / lang).is_dir():
            problems += syntax.committed_compiled(locale_dir / lang)
    if "syntax" in selected:  # what the build would stop at before it reads any catalog
        problems += [
            Problem(shown(path), 1, "syntax", why) for path, why in misplaced(Path(locale_dir), TRANSLATIONS)
        ]
    return sorted(set(problems))


def errors(langs, locale_dir=LOCALE, checks=TRANSLATION_CHECKS):
    """Return the errors that *checks* find in *langs*' catalogs (remembered: :class:`Remembered`)."""
    problems = run_checks(langs, set(checks), Path(locale_dir), remember_in=BUILD / "checks")
    return [p for p in problems if p.severity == ERROR]


class Remembered:
    """Each catalog's problems from the last run, reused while nothing they depend on changed.

    The build and the live preview check every catalog of a language before
    each rebuild; after a translator saves one entry, one catalog changed.
    A catalog's problems depend on its own bytes and on the world the checks
    see: their code (conf/ and the pins: site_layout.machinery_version), the
    glossary, the English (the sources, the examples, the extracted
    templates, every catalog's msgids, which give the roles and targets that
    exist), the checks asked for and the folder paths are shown from. Each
    catalog's problems are kept in *folder* (``_build/checks/`` for the
    build) with the digest of both; any other digest checks it again.
    """

    def __init__(self, project, selected, glossary, folder):
        self.project, self.selected, self.folder = project, selected, Path(folder)
        world = hashlib.sha256(
            json.dumps([sorted(selected), os.getcwd(), str(project.locale_dir.resolve())]).encode()
        )
        world.update(machinery_version().encode())  # the checks' code: conf/ and the pins
        sources = project.sources
        files = [Path(glossary), *(project.pot_dir or POT_DIR).rglob("*.pot")]
        if sources:
            english = [*sources.rglob("*"), *(sources.parent / "examples").glob("*.py")]
            kinds = (".py", ".rst", ".md", ".txt")
            files += [path for path in english if path.suffix in kinds and "_build" not in path.parts]
        world.update(files_digest(files).encode())
        for po_path in project.catalogs():
            try:
                ids = [message.id for message in messages(project.load(po_path))]
            except (OSError, ValueError):
                ids = None  # unreadable: its own syntax check says why
            world.update(json.dumps([str(po_path), ids]).encode())
        self.world = world.hexdigest()

    def problems(self, po_path, lang):
        """The problems of *lang*'s catalog *po_path*: remembered, or found and remembered."""
        check = lambda: list(check_catalog(po_path, lang, self.selected, self.project))  # noqa: E731
        try:
            digest = hashlib.sha256(self.world.encode() + Path(po_path).read_bytes()).hexdigest()
        except OSError:
            return check()  # it says why
        kept = self.folder / (hashlib.sha256(str(Path(po_path).resolve()).encode()).hexdigest() + ".json")
        try:
            remembered = json.loads(kept.read_text("utf-8"))
            if remembered["digest"] == digest:
                return [Problem(*fields) for fields in remembered["problems"]]
        except (OSError, ValueError, KeyError, TypeError):
            pass  # never checked, or by other code: check it
        found = check()
        write_if_changed(
            kept, json.dumps({"digest": digest, "problems": [astuple(p) for p in found]}).encode()
        )
        return found


def main(argv=None):
    """Run the checks, print the problems, and return the exit code."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], epilog="Exit codes: 0 no errors, 1 errors, 2 usage."
    )
    parser.add_argument(
        "languages", nargs="*", metavar="LANG", help="the languages to check (default: every translation)"
    )
    parser.add_argument(
        "--strict",
        type=int,
        choices=(0, 1),
        default=1,
        help="1 (default): fuzzy or untranslated entries are errors",
    )
    parser.add_argument(
        "--check",
        action="append",
        choices=CHECKS,
        metavar="NAME",
        help=f"run only this check (repeatable): {', '.join(CHECKS)}",
    )
    parser.add_argument(
        "--severity",
        choices=("error", "warning"),
        default="warning",
        help="the least severe problems to print (default: warning, i.e. all)",
    )
    parser.add_argument(
        "--syntax",
        choices=SYNTAXES,
        default="rst",
        help="how to parse entries of another project's catalogs that have no #: line (default: rst)",
    )
    parser.add_argument(
        "--sources",
        type=Path,
        help="the Sphinx source folder the catalogs translate "
        "(default: the docs/ beside --locale-dir, if any)",
    )
    parser.add_argument("--locale-dir", type=Path, default=LOCALE)
    parser.add_argument("--pot-dir", type=Path, help="compare with these .pot files")
    parser.add_argument("--glossary", type=Path, default=GLOSSARY)
    parser.add_argument(
        "--base", metavar="REV", help="report only findings on entries changed since REV (review_diff.py)"
    )
    args = parser.parse_args(argv)
    selected = set(args.check or CHECKS)
    langs = catalog_languages(parser, args.languages, args.locale_dir)
    if {"terminology", "interface"} & selected and not args.glossary.is_file():
        parser.error(f"glossary {args.glossary} not found")
    for option, folder in (("--pot-dir", args.pot_dir), ("--sources", args.sources)):
        if folder and not folder.is_dir():
            parser.error(f"{option} {folder} is not a folder")
    allowed = None
    if args.base:  # a bad revision fails before the checks run
        try:
            base, _ = resolve_base(args.base, args.locale_dir)
            allowed = glossary_at(base, args.glossary)  # never the change's own glossary
        except ReviewError as err:
            parser.error(str(err))
    try:
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
    except RuntimeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if not args.strict:  # unfinished entries are reported, not counted
        problems = [replace(p, severity=WARNING) if p.check == "completeness" else p for p in problems]
    if args.base:
        problems = changed_only(problems, base, langs, args.locale_dir)
    if args.severity == ERROR:
        problems = [p for p in problems if p.severity == ERROR]
    for problem in problems:
        print(problem)
    failing = sum(p.severity == ERROR for p in problems)
    warnings = len(problems) - failing
    counts = f"{failing} error(s)" if failing else "all checks passed"
    if warnings:
        counts += f", {warnings} warning(s)"
    counts += f" on what changed since {args.base}" if args.base else ""
    print(f"{counts} ({', '.join(langs)})", file=sys.stderr)
    unfinished = sum(p.severity == ERROR and p.check == "completeness" for p in problems)
    if unfinished and not args.base and args.locale_dir == LOCALE:
        print(
            f"{unfinished} of the errors are untranslated or outdated entries: main accepts"
            " only complete translations.\nAfter a change to the English alone, run"
            " `make check BASE=main`: it fails only on what the change's own translations"
            ' get wrong, and the translators finish the rest on its branch (README, "How it'
            ' lands").',
            file=sys.stderr,
        )
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
