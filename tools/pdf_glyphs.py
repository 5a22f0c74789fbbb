"""Write conf/gate/pdf_glyphs.txt: the characters every font of the PDF has, as XeLaTeX says.

Usage:
    python tools/pdf_glyphs.py [--check]

The PDF is typeset by XeLaTeX with Sphinx's FreeFont families and xeCJK's
Noto CJK ones (extensions/offline_copies.py), and a character a font
lacks stops it (``\\tracinglostchars=3``). ``make check`` and every build
refuse such a character where a translation adds it (gate/words.py),
without TeX, from the table this writes. The verdict is XeLaTeX's own: each
character any of those fonts maps is set in the serif, sans and mono
families, upright, italic, bold and bold italic, for each Chinese region,
and a character is kept only where no setting reports it missing. Run it
again when the PDF's fonts change; ``--check`` compares instead of writing
(tests/test_pdf_glyphs.py runs it where TeX is installed).

Needs XeLaTeX with xeCJK, FreeFont and the Noto CJK fonts (docs/maintaining.md, "What each target needs"),
and fontTools (installed with matplotlib).
"""

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from fontTools.ttLib import TTCollection, TTFont
from sphinx.builders.latex.constants import XELATEX_DEFAULT_FONTPKG
from sphinx.util.texescape import escape

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "conf"))
from extensions.offline_copies import CJK_FONTS, CJK_REGION  # noqa: E402
from gate.words import GLYPHS as TABLE  # noqa: E402

FONT_FILES = (
    "/usr/share/fonts/opentype/freefont/Free*.otf",
    "/usr/share/fonts/opentype/noto/Noto*CJK*.tt[cf]",
)
STYLES = [
    f"\\{family}family\\{shape}shape{weight}"
    for family in ("rm", "sf", "tt")
    for shape in ("up", "it")
    for weight in ("", "\\bfseries")
]
MISSING = re.compile(r"^Missing character: There is no .*? \(U\+([0-9A-F]+)\)", re.MULTILINE)


def ranges(codes):
    """The sorted code points *codes* as ``[(first, last)]`` runs."""
    runs = []
    for code in codes:
        if runs and runs[-1][1] == code - 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return [tuple(run) for run in runs]


def candidates():
    """Every code point some font of the PDF maps (the others are missing everywhere)."""
    found = set()
    for pattern in FONT_FILES:
        for path in sorted(Path("/").glob(pattern.lstrip("/"))):
            fonts = TTCollection(path).fonts if path.suffix == ".ttc" else [TTFont(path)]
            for font in fonts:
                found |= set(font.getBestCmap() or {})
    return sorted(c for c in found if c >= 0x20 and not 0x7F <= c < 0xA0)


def missing(chars, region):
    """The code points among *chars* that XeLaTeX reports missing in some style, for *region*."""
    lines = [escape("".join(chr(c) for c in chars[i : i + 64]), "xelatex") for i in range(0, len(chars), 64)]
    body = "\n".join(f"{{{style} {line}\\par}}" for style in STYLES for line in lines)
    tex = (
        "\\documentclass{article}\n\\usepackage{fontspec}\n"
        + XELATEX_DEFAULT_FONTPKG
        + "\\usepackage{xeCJK}\n"
        + CJK_FONTS % {"region": region}
        + "\\tracinglostchars=2\\tracingonline=0\\hbadness=10000\\hfuzz=\\maxdimen\n"
        + "\\begin{document}\n"
        + body
        + "\n\\end{document}\n"
    )
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "glyphs.tex").write_text(tex, "utf-8")
        subprocess.run(
            ["xelatex", "-interaction=batchmode", "-no-pdf", "glyphs.tex"],
            cwd=folder,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
        log = Path(folder, "glyphs.log").read_text("utf-8", errors="replace")
    if "Output written" not in log:
        sys.exit("xelatex did not finish; is it installed with xeCJK and the fonts?")
    return {int(code, 16) for code in MISSING.findall(log)}


def table():
    """The text of pdf_glyphs.txt: the code points no setting lacks, as ranges."""
    chars = candidates()
    lacking = set().union(*(missing(chars, region) for region in sorted(set(CJK_REGION.values()))))
    kept = [c for c in chars if c not in lacking]
    header = "# Characters every font of the PDF has (tools/pdf_glyphs.py writes this file).\n"
    return header + "".join(f"{a:04X}-{b:04X}\n" if a != b else f"{a:04X}\n" for a, b in ranges(kept))


def main(argv=None):
    """Write the table, or with --check say whether it is current."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed table")
    args = parser.parse_args(argv)
    text = table()
    if args.check:
        same = TABLE.read_text("utf-8") == text
        print(f"{TABLE.relative_to(ROOT)} is {'current' if same else 'out of date: run tools/pdf_glyphs.py'}")
        return 0 if same else 1
    TABLE.write_text(text, "utf-8")
    print(f"wrote {TABLE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
