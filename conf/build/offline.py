"""Build the offline copies of the site, a PDF and an EPUB per language (make pdf, make epub).

They read the gallery the HTML build executed, and stop when it is missing or
out of date: they never execute an example. The PDF is Sphinx's LaTeX output
run through latexmk and xelatex (extensions/offline_copies.py); a character no
font has fails it, named with its page. Each file replaces the previous one
only when its build succeeded; a language whose inputs did not change since its
last good copy is not built again.

A local copy is also placed beside its language's pages (_build/html/<lang>/_offline/),
which link it from then on: a language's first copy of a format rewrites its pages.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from languages import select
from site_layout import BUILD, EXAMPLES, GALLERY, ROOT, linked_copies
from extensions.offline_copies import place_copies
from build import site
from build.site import (
    CONTENT_CHECKS,
    BuildError,
    check_catalogs,
    input_digest,
    outputs_option,
    readthedocs_recordings,
    readthedocs_target,
    run,
    sphinx_build,
    stale_examples,
    use_recordings,
)

BUILDERS = {"pdf": "latex", "epub": "epub"}
# "./x.tex:812: Missing character: There is no ☃ (U+2603) in font FreeSerif..."
MISSING = re.compile(
    r"^\./(?P<tex>[^:]+):(?P<line>\d+): Missing character: There is no (?P<char>.+?) in font (?P<font>.+?)!?\.?$"
)
# A page shipped out: "[12" at the start of a line or after a space or "(".
SHIPOUT = re.compile(r"(?:^|[\s(])\[(\d+)(?=[\]\s{<]|$)")
DOC_LABEL = re.compile(r"\\label\{\\detokenize\{([^{}]+)::doc\}\}")


def check_gallery():
    """Raise BuildError unless every example's page is there and made from its current source."""
    pages = [GALLERY / "index.rst"] + [GALLERY / (p.stem + ".rst") for p in EXAMPLES.glob("*.py")]
    outdated = stale_examples() + [page.name for page in pages if not page.is_file()]
    if outdated:
        raise BuildError(
            f"the executed gallery (docs/auto_examples) is missing or out of date for {', '.join(outdated)}:"
            " run `make html` first (the offline copies never run the examples)"
        )


def missing_glyphs(log_lines, texdir):
    """One line per character the fonts lacked, from the lines of xelatex's log, with its page.

    The page is the number printed on it (the last one shipped out, plus one);
    the Sphinx page is the last document label before the character's line.
    """
    found, page = [], 0
    for line in log_lines:
        match = MISSING.match(line)
        if match:
            tex = Path(texdir, match["tex"]).read_text("utf-8").splitlines()
            labels = DOC_LABEL.findall("\n".join(tex[: int(match["line"])]))
            found.append(
                f"missing character {match['char']} in font {match['font'].strip()}: page {page + 1}"
                f" of the PDF ({labels[-1] if labels else '?'}, {match['tex']} line {match['line']})"
            )
            continue
        for shipped in SHIPOUT.findall(line):
            page = int(shipped)
    return list(dict.fromkeys(found))


def run_latexmk(texdir, stem):
    """Run latexmk with xelatex in *texdir*; raise BuildError naming missing glyphs or errors."""
    result = subprocess.run(
        ["latexmk", "-xelatex", "-interaction=nonstopmode", "-file-line-error", f"{stem}.tex"],
        cwd=texdir,
        env={**os.environ, "max_print_line": "10000"},  # one log line per message
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    log = Path(texdir, f"{stem}.log")
    said = log.read_text("utf-8", errors="replace").splitlines() if log.is_file() else []
    missing = missing_glyphs(said, texdir)
    if missing:
        raise BuildError("LaTeX has no glyph for some characters:\n  " + "\n  ".join(missing))
    if result.returncode != 0 or not Path(texdir, f"{stem}.pdf").is_file():
        errors = [line for line in said if line.startswith(("!", "./"))]
        detail = "\n".join(errors[:20]) or (result.stdout + result.stderr)[-3000:]
        raise BuildError(f"latexmk failed (see {log}):\n{detail}")


def build_one(fmt, lang, dest, work, recordings):
    """Build *lang*'s *fmt* copy in *work* and put it into *dest* as its only file; return its path."""
    builder = BUILDERS[fmt]
    # The PDF and the EPUB read the pages alike: the second reuses the doctrees of the first.
    outdir, doctrees = work / f"{fmt}-{lang}", work / "doctrees" / lang
    # A fresh output folder: an EPUB packs every file it finds there, and stale
    # LaTeX auxiliaries from another preamble can break the next run.
    shutil.rmtree(outdir, ignore_errors=True)
    if sphinx_build(lang, outdir, doctrees, recordings, builder=builder) != 0:
        # The environment may say pages are current that were never written out.
        (doctrees / "environment.pickle").unlink(missing_ok=True)
        raise BuildError(f"Sphinx's {builder} build failed")
    made = sorted(outdir.glob("*.tex" if fmt == "pdf" else "*.epub"))
    if len(made) != 1:
        raise BuildError(f"expected one {builder} file in {outdir}, found {len(made)}")
    if fmt == "pdf":
        run_latexmk(outdir, made[0].stem)
    built = made[0].with_suffix("." + fmt)
    dest.mkdir(parents=True, exist_ok=True)
    partial = dest / f".{built.name}.partial"
    shutil.copy2(built, partial)
    os.replace(partial, dest / built.name)
    for other in dest.iterdir():
        if other.name != built.name:
            other.unlink()  # a copy under an old name would be served as well
    return dest / built.name


def report(path, started):
    """Say what was built, its size and how long it took."""
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    print(f"built {shown} ({path.stat().st_size / 2**20:.1f} MiB) in {time.monotonic() - started:.1f} s")


def build_local(fmt, langs, outputs=()):
    """Build the *fmt* copy of *langs* (default: all) into _build/<fmt>/<lang>/; False if one failed.

    *outputs* are the recordings the HTML build was given: the copies show the same output.
    """
    langs = select(langs)
    recordings = use_recordings(outputs)
    stamps = BUILD / "stamps"
    stamps.mkdir(parents=True, exist_ok=True)
    todo = {}  # language: the digest of its inputs, for those whose last good copy is older
    for lang in langs:
        dest, stamp = BUILD / fmt / lang, stamps / f"{fmt}-{lang}.sha256"
        digest = input_digest(lang, recordings)
        if dest.is_dir() and any(dest.iterdir()) and stamp.is_file() and stamp.read_text() == digest:
            print(f"--- {lang} {fmt}: nothing changed since the last build ---")
        else:
            stamp.unlink(missing_ok=True)
            todo[lang] = digest
    check_catalogs(list(todo), {"syntax"} | CONTENT_CHECKS)  # what make html refuses too
    check_gallery()
    failed = False
    linked = {lang: linked_copies(lang) for lang in langs}  # what the pages link now
    for lang, digest in todo.items():
        started = time.monotonic()
        try:
            report(build_one(fmt, lang, BUILD / fmt / lang, BUILD / "offline", recordings), started)
        except BuildError as err:
            print(f"error: {lang} {fmt}: {err}\n{BUILD / fmt / lang} was left as it was", file=sys.stderr)
            failed = True
            continue
        (stamps / f"{fmt}-{lang}.sha256").write_text(digest)
    return link_from_pages(linked, recordings) and not failed


def link_from_pages(linked, recordings):
    """Put each language's copies beside its built pages; rebuild the pages of those whose
    pages name copies other than the ones now built (*linked*: the names they link), with the
    *recordings* the copies were built with."""
    pages = BUILD / "html"
    relink = [lang for lang in linked if (pages / lang).is_dir() and linked_copies(lang) != linked[lang]]
    for lang in linked:
        if (pages / lang).is_dir() and lang not in relink:
            place_copies(lang, pages / lang)
    if relink:
        print(f"--- the pages of {', '.join(relink)} link the new copies ---", flush=True)
        return site.build_local(relink, recordings=recordings)
    return True


def build_readthedocs(formats):
    """Build this Read the Docs project's *formats* into $READTHEDOCS_OUTPUT/pdf and epub."""
    if os.environ.get("READTHEDOCS_VERSION_TYPE") == "external":
        print("--- a pull-request preview: no PDF or EPUB ---")  # Read the Docs offers none there
        return True
    lang, output = readthedocs_target()
    check_catalogs([lang], {"syntax"} | CONTENT_CHECKS)
    check_gallery()
    recordings = readthedocs_recordings()  # the same output as the HTML build shows
    for fmt in formats:
        started = time.monotonic()
        report(build_one(fmt, lang, output / fmt, BUILD / "offline" / "rtd", recordings), started)
    return True


def main(argv=None):
    """``python -m build.offline pdf|epub [LANG ...]`` or ``readthedocs [pdf|epub]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=[*BUILDERS, "readthedocs"])
    parser.add_argument("languages", nargs="*", help="default: every language (readthedocs: the formats)")
    outputs_option(parser)
    args = parser.parse_args(argv)
    if args.mode != "readthedocs":
        return run(
            f"python -m build.offline {args.mode}",
            lambda: build_local(args.mode, args.languages, args.outputs),
        )
    unknown = set(args.languages) - set(BUILDERS)
    if unknown:
        parser.error(f"readthedocs builds pdf or epub, not {', '.join(sorted(unknown))}")
    return run(
        "python -m build.offline readthedocs", lambda: build_readthedocs(args.languages or list(BUILDERS))
    )


if __name__ == "__main__":
    sys.exit(main())
