"""The table of characters the PDF can show (conf/gate/pdf_glyphs.txt) is XeLaTeX's verdict.

make check and every build refuse a translation that adds a character outside
the table (gate/words.py), without TeX. Here, where TeX is installed,
XeLaTeX itself is asked, with the PDF's fonts, as tools/pdf_glyphs.py asks it.
"""

import importlib.util
import shutil

import pytest
from conftest import ROOT
from gate.words import in_pdf

pytestmark = pytest.mark.skipif(
    not shutil.which("xelatex"), reason="needs TeX Live with XeLaTeX and xeCJK (see docs/maintaining.md)"
)


def tool():
    """tools/pdf_glyphs.py, imported (tools/ is no package)."""
    spec = importlib.util.spec_from_file_location("pdf_glyphs", ROOT / "tools" / "pdf_glyphs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_xelatex_lacks_exactly_what_the_table_lacks():
    """The issue's characters and other kinds, and characters the pages use, in one run."""
    chars = "𓀀🧪☃\u20dd𐀀𗀀🀄⠁\U0001f1e8𝐇٨ई✓" + "A中文繁體→×…「」！，８Ｈé"
    missing = tool().missing([ord(c) for c in chars], "TC")
    assert {chr(c) for c in missing} == {c for c in chars if not in_pdf(c)}
    assert "𓀀" in {chr(c) for c in missing} and "中" not in {chr(c) for c in missing}


def test_the_table_is_xelatexs_verdict_on_every_character_of_the_fonts():
    assert tool().main(["--check"]) == 0
