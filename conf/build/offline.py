"""Build the offline copies of the site, a PDF and an EPUB per language.

Usage:
    python conf/build/offline.py pdf [LANG ...]    into _build/pdf/<lang>/<name>-<lang>.pdf
    python conf/build/offline.py epub [LANG ...]   into _build/epub/<lang>/<name>-<lang>.epub
    python conf/build/offline.py readthedocs [pdf|epub]   for READTHEDOCS_LANGUAGE, into
                                                         $READTHEDOCS_OUTPUT/pdf/ and epub/
                                                         (default both; .readthedocs.yaml's
                                                         build.jobs asks for one at a time)

No example is executed: like the languages built after the first one in
``build_site.py``, these builds read the gallery that the HTML build executed
(``-D reuse_gallery=1``, gallery_reuse.py), and stop at once, saying so, when it is missing or
out of date. The languages build side by side. The PDF is Sphinx's LaTeX
output run through latexmk and xelatex with the Noto CJK fonts
(``extensions/offline_copies.py``). A character that no font has fails
the build, named with its page. Each file replaces the previous one only when
its build succeeded, and a language whose inputs did not change since its last
good copy is not built again. The run holds the checkout's build lock
(``checkout_lock.py``).

Exit codes: 0 built, 1 a check or a build failed, 2 bad usage.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conf/: languages and the packages
from languages import select  # noqa: E402
from build.site import (  # noqa: E402
    CONTENT_CHECKS,
    REUSE_GALLERY,
    add_outputs_option,
    input_digest,
    readthedocs_recordings,
    readthedocs_target,
    refused,
    sphinx_build,
    use_recordings,
)
from checkout_lock import run_held  # noqa: E402
from extensions.gallery_reuse import outdated_gallery  # noqa: E402
from site_layout import BUILD, EXAMPLES, GALLERY, ROOT  # noqa: E402

BUILDERS = {"pdf": "latex", "epub": "epub"}
# "./x.tex:812: Missing character: There is no ☃ (U+2603) in font FreeSerif..."
MISSING = re.compile(
    r"^\./(?P<tex>[^:]+):(?P<line>\d+): Missing character: There is no "
    r"(?P<char>.+?) in font (?P<font>.+?)!?\.?$"
)
# A page shipped out: "[12" at the start of a line or after a space or "(".
SHIPOUT = re.compile(r"(?:^|[\s(])\[(\d+)(?=[\]\s{<]|$)")
DOC_LABEL = re.compile(r"\\label\{\\detokenize\{([^{}]+)::doc\}\}")


class BuildError(Exception):
    """An offline copy could not be built; the message says why."""


def check_gallery():
    """Raise BuildError unless the executed gallery is there and current."""
    outdated = outdated_gallery(EXAMPLES, GALLERY)
    if outdated:
        raise BuildError(
            "the executed gallery (docs/auto_examples) is missing or out of date for "
            + ", ".join(outdated)
            + ": run `make html` first (the offline copies never run the examples)"
        )


def missing_glyphs(log, texdir):
    """Return one line per character the fonts lacked, from xelatex's *log*, with its page.

    The page is the number printed on it (the last one shipped out, plus one);
    the Sphinx page is the last document label before the character's line.
    """
    found, page = [], 0
    text = Path(log).read_text("utf-8", errors="replace")
    for line in text.splitlines():
        match = MISSING.match(line)
        if match:
            tex = Path(texdir, match["tex"]).read_text("utf-8").splitlines()
            labels = DOC_LABEL.findall("\n".join(tex[: int(match["line"])]))
            doc = labels[-1] if labels else "?"
            found.append(
                f"missing character {match['char']} in font {match['font'].strip()}: "
                f"page {page + 1} of the PDF ({doc}, {match['tex']} line {match['line']})"
            )
            continue
        for shipped in SHIPOUT.findall(line):
            page = int(shipped)
    return list(dict.fromkeys(found))


def run_latexmk(texdir, stem):
    """Run latexmk with xelatex in *texdir*; raise BuildError naming missing glyphs or errors."""
    env = {**os.environ, "max_print_line": "10000"}  # one log line per message
    result = subprocess.run(
        ["latexmk", "-xelatex", "-interaction=nonstopmode", "-file-line-error", f"{stem}.tex"],
        cwd=texdir,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    log = Path(texdir, f"{stem}.log")
    missing = missing_glyphs(log, texdir) if log.is_file() else []
    if missing:
        raise BuildError("LaTeX has no glyph for some characters:\n  " + "\n  ".join(missing))
    if result.returncode != 0 or not Path(texdir, f"{stem}.pdf").is_file():
        errors = (
            [
                line
                for line in log.read_text("utf-8", errors="replace").splitlines()
                if line.startswith(("!", "./"))
            ]
            if log.is_file()
            else []
        )
        detail = "\n".join(errors[:20]) or (result.stdout + result.stderr)[-3000:]
        raise BuildError(f"latexmk failed (see {log}):\n{detail}")


def publish(built, folder):
    """Put *built* into *folder* as its only file, replacing the old one only now."""
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{built.name}.partial"
    shutil.copy2(built, partial)
    os.replace(partial, folder / built.name)
    for other in folder.iterdir():
        if other.name != built.name:
            other.unlink()  # a copy under an old name would be served as well
    return folder / built.name


def build_one(fmt, lang, dest, work):
    """Build *lang*'s *fmt* copy in *work* and publish it into *dest*; return its path."""
    builder = BUILDERS[fmt]
    # The PDF and the EPUB of a language read the same pages the same way (both
    # offline: extensions/offline_copies.py), so the second reuses what the
    # first read, as Sphinx's own Makefile shares one doctree folder between builders.
    outdir, doctrees = work / f"{fmt}-{lang}", work / "doctrees" / lang
    # A fresh output folder: an EPUB packs every file it finds there, and stale
    # LaTeX auxiliaries from another preamble can break the next run.
    shutil.rmtree(outdir, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    log = work / f"{fmt}-{lang}.log"  # what Sphinx said, printed after it under the language
    if sphinx_build(lang, outdir, doctrees, log, options=REUSE_GALLERY, builder=builder) != 0:
        # The environment may say pages are current that were never written out.
        (doctrees / "environment.pickle").unlink(missing_ok=True)
        raise BuildError(f"Sphinx's {builder} build failed")
    suffix = ".tex" if fmt == "pdf" else ".epub"
    made = sorted(outdir.glob("*" + suffix))
    if len(made) != 1:
        raise BuildError(f"expected one {suffix} file in {outdir}, found {len(made)}")
    if fmt == "pdf":
        run_latexmk(outdir, made[0].stem)
    return publish(made[0].with_suffix("." + fmt), dest)


def report(path, started):
    """Print what was built, its size and how long it took."""
    size = path.stat().st_size / 2**20
    print(
        f"built {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}"
        f" ({size:.1f} MiB) in {time.monotonic() - started:.1f} s",
        flush=True,
    )


def build_local(fmt, langs, outputs=()):
    """Build the *fmt* copy of *langs* (default: all) into _build/<fmt>/<lang>/.

    *outputs* are the recordings the HTML build was given: the copies show the same output.
    """
    langs = select(langs)
    use_recordings(outputs)
    stamps = BUILD / "stamps"
    stamps.mkdir(parents=True, exist_ok=True)
    todo = {}  # language: the digest of its inputs, for those whose last good copy is older
    for lang in langs:
        dest, stamp = BUILD / fmt / lang, stamps / f"{fmt}-{lang}.sha256"
        digest = input_digest(lang)
        if dest.is_dir() and any(dest.iterdir()) and stamp.is_file() and stamp.read_text() == digest:
            print(f"--- {lang} {fmt}: nothing changed since the last build ---", flush=True)
        else:
            stamp.unlink(missing_ok=True)
            todo[lang] = digest
    # What build_site.py refuses too; only what will be rebuilt: the others' passed at their build.
    bad = refused(list(todo), {"syntax"} | CONTENT_CHECKS)
    if bad:
        print(
            f"error: {', '.join(bad)}: the catalogs fail the checks above; nothing was built", file=sys.stderr
        )
        return 1
    check_gallery()

    def build(lang):
        """Build *lang*'s copy and stamp it with the digest of its inputs; False if it failed."""
        dest, stamp = BUILD / fmt / lang, stamps / f"{fmt}-{lang}.sha256"
        started = time.monotonic()
        try:
            report(build_one(fmt, lang, dest, BUILD / "offline"), started)
        except BuildError as err:
            print(f"error: {lang} {fmt}: {err}\n{dest} was left as it was", file=sys.stderr, flush=True)
            return False
        stamp.write_text(todo[lang])
        return True

    if not todo:
        return 0
    # The languages are independent (their own folders): side by side, as build_site.py's.
    with ThreadPoolExecutor(max_workers=len(todo)) as pool:
        return 0 if all(list(pool.map(build, todo))) else 1


def build_readthedocs(formats=tuple(BUILDERS)):
    """Build this Read the Docs project's *formats* into $READTHEDOCS_OUTPUT/pdf and epub."""
    if os.environ.get("READTHEDOCS_VERSION_TYPE") == "external":
        # A pull-request preview: Read the Docs offers no downloads there either.
        print("--- a pull-request preview: no PDF or EPUB ---")
        return 0
    lang, output = readthedocs_target()  # ValueError: exit code 2
    if refused([lang], {"syntax"} | CONTENT_CHECKS):
        return 1
    check_gallery()
    readthedocs_recordings()  # the same output as the HTML build shows
    for fmt in formats:
        started = time.monotonic()
        report(build_one(fmt, lang, output / fmt, BUILD / "offline" / "rtd"), started)
    return 0


def main(argv=None):
    """Parse the command line and build."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=[*BUILDERS, "readthedocs"])
    parser.add_argument(
        "languages", nargs="*", help="default: every language of the table (readthedocs: the formats)"
    )
    add_outputs_option(parser)
    args = parser.parse_args(argv)
    if args.mode == "readthedocs":
        unknown = set(args.languages) - set(BUILDERS)
        if unknown:
            parser.error(f"readthedocs builds pdf or epub, not {', '.join(sorted(unknown))}")
        work = lambda: build_readthedocs(args.languages or tuple(BUILDERS))  # noqa: E731
    else:
        work = lambda: build_local(args.mode, args.languages, args.outputs)  # noqa: E731
    return run_held(f"build_offline.py {args.mode}", work, failures=BuildError)


if __name__ == "__main__":
    sys.exit(main())
