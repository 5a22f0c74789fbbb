"""Check the translation catalogs for the mistakes a reviewer would miss (make check).

Usage:
    python conf/translation/run_checks.py [--strict=1|0] [--check NAME]... [options] [LANG...]

Each check is a module of translation/checks/; this runner reads the catalogs
of LANG (default: every translation in conf/languages.py) and runs them.

Every problem is printed as ``file:line: [check] what is wrong``. The checks:

    out-of-sync   the catalogs do not match the English sources
    syntax        ``msgfmt -c`` rejects a catalog
    markup        a translation breaks reST/MyST markup, or changes an inline
                  literal, a role target, a link target or a substitution
    script-mix    Simplified characters in a Hant language (zh_TW), Traditional
                  ones in a Hans language (zh_CN)
    terminology   a glossary term is not translated as locale/glossary.csv says
    safety        a translation adds a URL, a non-http(s) link, HTML or a directive
    code          translated Python is no longer the same program
    canonical     a catalog not in the form make update-po writes (make format-po fixes it)
    completeness  fuzzy or untranslated entries; problems only with --strict=1

Only translated, non-fuzzy entries are checked for their content: a fuzzy or
empty translation is not used on the site, and ``completeness`` reports it.
``out-of-sync`` extracts the English with Sphinx's gettext builder into a
temporary folder (never _build/gettext), unless ``--pot-dir`` names .pot files.

Exit codes: 0 clean, 1 problems found, 2 bad usage.
"""

import argparse
import functools
import sys
import tempfile
from pathlib import Path

import polib

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conf/: languages and the packages
from translation.catalog_report import catalog_languages  # noqa: E402
from translation.checks import (  # noqa: E402
    canonical, code, completeness, markup, safety, script_mix, sync, syntax, terminology,
)  # fmt: skip
from translation.checks.common import GLOSSARY, ROOT, Problem, shown  # noqa: E402
from translation.checks.parsing import source_kind  # noqa: E402

CHECKS = (
    "out-of-sync", "syntax", "markup", "script-mix", "terminology", "safety", "code",
    "completeness", "canonical",
)  # fmt: skip


def entry_checks(selected, glossary):
    """Return {name: check(msgid, msgstr, kind, lang)} for the *selected* entry checks."""
    checks = {
        "markup": markup.check,
        "script-mix": script_mix.check,
        "terminology": functools.partial(terminology.check, glossary=glossary),
        "safety": safety.check,
        "code": code.check,
    }
    return {name: check for name, check in checks.items() if name in selected}


def check_catalog(po_path, lang, selected, glossary):
    """Yield the problems of one catalog for the *selected* checks."""
    if "syntax" in selected:
        yield from syntax.check(po_path)
    if "canonical" in selected:
        yield from canonical.check(po_path)
    try:
        catalog = polib.pofile(str(po_path))
    except (OSError, ValueError) as err:
        yield Problem(shown(po_path), 1, "syntax", f"cannot read the catalog: {err}")
        return
    checks = entry_checks(selected, glossary)
    for entry in catalog:
        if entry.obsolete:
            continue
        unfinished = completeness.check(entry)
        if unfinished:
            if "completeness" in selected:
                yield Problem(shown(po_path), entry.linenum, "completeness", unfinished)
            continue
        kind = source_kind(entry)
        for name, check in checks.items():
            for message in check(entry.msgid, entry.msgstr, kind, lang):
                yield Problem(shown(po_path), entry.linenum, name, message)


def run_checks(langs, selected, locale_dir, pot_dir=None, glossary_path=GLOSSARY):
    """Return the sorted problems of *langs*' catalogs for the *selected* checks."""
    glossary = terminology.load_glossary(str(glossary_path)) if "terminology" in selected else ()
    problems = []
    if "out-of-sync" in selected:
        with tempfile.TemporaryDirectory(prefix="po-checks-") as workdir:
            pots = pot_dir or sync.extract_pots(workdir)
            for lang in langs:
                problems += sync.check(Path(pots), locale_dir / lang / "LC_MESSAGES")
    for lang in langs:
        for po_path in sorted((locale_dir / lang / "LC_MESSAGES").rglob("*.po")):
            problems += check_catalog(po_path, lang, selected, glossary)
    return sorted(set(problems))


def main(argv=None):
    """Run the checks, print the problems, and return the exit code."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], epilog="Exit codes: 0 clean, 1 problems, 2 usage."
    )
    parser.add_argument("languages", nargs="*", metavar="LANG",
                        help="the languages to check (default: every translation)")
    parser.add_argument("--strict", type=int, choices=(0, 1), default=1,
                        help="1 (default): fuzzy or untranslated entries are problems")
    parser.add_argument("--check", action="append", choices=CHECKS, metavar="NAME",
                        help=f"run only this check (repeatable): {', '.join(CHECKS)}")
    parser.add_argument("--locale-dir", type=Path, default=ROOT / "locale")
    parser.add_argument("--pot-dir", type=Path, help="compare with these .pot files")
    parser.add_argument("--glossary", type=Path, default=GLOSSARY)
    parser.add_argument("--base", metavar="REV",
                        help="report only findings on entries changed since REV (review_diff.py)")
    args = parser.parse_args(argv)
    selected = set(args.check or CHECKS)
    langs = catalog_languages(parser, args.languages, args.locale_dir)
    if "terminology" in selected and not args.glossary.is_file():
        parser.error(f"glossary {args.glossary} not found")
    if args.pot_dir and not args.pot_dir.is_dir():
        parser.error(f"--pot-dir {args.pot_dir} is not a folder")
    if args.base:  # a bad revision fails before the checks run
        from translation.review_diff import ReviewError, changed_only, resolve_base

        try:
            base, _ = resolve_base(args.base, args.locale_dir)
        except ReviewError as err:
            parser.error(str(err))
    try:
        problems = run_checks(langs, selected, args.locale_dir, args.pot_dir, args.glossary)
    except RuntimeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if args.base:
        problems = changed_only(problems, base, langs, args.locale_dir)
    for problem in problems:
        print(problem)
    counted = [p for p in problems if args.strict or p.check != "completeness"]
    unfinished = len(problems) - len(counted)
    if unfinished:
        print(f"{unfinished} fuzzy or untranslated entries reported, not counted "
              "(STRICT=0)", file=sys.stderr)  # fmt: skip
    verdict = f"{len(counted)} problem(s) found" if counted else "all checks passed"
    verdict += f" on what changed since {args.base}" if args.base else ""
    print(f"{verdict} ({', '.join(langs)})", file=sys.stderr)
    return 1 if counted else 0


if __name__ == "__main__":
    sys.exit(main())
