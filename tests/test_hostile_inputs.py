"""The thirteen ways in of 2026-12-04, and variants of each, closed where the input is read.

A catalog, a recording, a URL or a workflow is input from whoever opened the
pull request. Each class is tried at its source (the rule, in one place) with
variants beyond the example that found it; then the hostile catalog entries go
together into a copy of the mini site, where ``make check`` and ``make html``
must refuse the same entries, name each by file and line, and keep the last
good site; Chromium loads a page whose interface strings were tampered with
after the build.
"""

import http.server
import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml
from conftest import FIGURE_EXAMPLE, ROOT, outside_env
from build.outputs import OutputsError, fetch
from extensions.compiled_catalogs import compile_catalogs
from extensions.localized_examples import as_drawn
from extensions.recordings import RecordingRefused, choose, sign, trusted_keys, verified
from catalogs.po import CatalogError, Catalog, catalog_text, line_problems, read, write
from gate.links import judge, target
from gate.run_checks import run_checks
from gate.words import controls, interface_problems

FIXTURES = Path(__file__).parent / "fixtures" / "recordings"
KEY = FIXTURES / "test-only-key.pem"
PASSWD = Path("/etc/passwd").read_text().splitlines()[0]  # what a leak would show

# -- 5: one catalog line that made every reader backtrack --------------------------


@pytest.mark.parametrize(
    "line",
    [
        'msgstr "' + "\\777" * 24,  # the issue's: never closed
        'msgstr "' + "\\x41" * 40 + "\\",
        'msgstr "' + "\\1" * 3000 + '" trailing',
        'msgstr "' + "\\\\" * 5000 + "\\q",
        'msgid "' + "a\\" * 20000,
    ],
)
def test_every_catalog_line_is_read_in_linear_time(line):
    start = time.monotonic()
    problems = line_problems(line)
    assert problems and time.monotonic() - start < 0.5


# -- 4: a catalog that is a symbolic link, a pipe, a device, or too large ----------


def hostile_locale(tmp_path):
    """A locale folder whose zh_TW catalogs are links and special files, not catalogs."""
    folder = tmp_path / "locale" / "zh_TW" / "LC_MESSAGES"
    (folder / "auto_examples").mkdir(parents=True)
    (folder / "leak.po").symlink_to("../../../../../../../../etc/passwd")
    (folder / "environ.po").symlink_to("/proc/self/environ")
    (folder / "gone.po").symlink_to(tmp_path / "nothing-here")
    os.mkfifo(folder / "pipe.po")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "linked.po").write_text('msgid "x"\nmsgstr "y"\n')
    (folder / "auto_examples" / "folder").symlink_to(tmp_path / "elsewhere")
    with open(folder / "huge.po", "wb") as huge:
        huge.truncate(5 * 2**20)
    return tmp_path / "locale"


def test_a_catalog_that_is_no_plain_file_is_refused_unread(tmp_path):
    locale = hostile_locale(tmp_path)
    folder = locale / "zh_TW" / "LC_MESSAGES"
    reasons = {}
    for name in ("leak.po", "environ.po", "gone.po", "pipe.po", "huge.po"):
        with pytest.raises(CatalogError) as refused:
            catalog_text(folder / name)  # the pipe does not block
        reasons[name] = str(refused.value)
    assert {name: reason.split()[0] for name, reason in reasons.items()} == {
        "leak.po": "a",
        "environ.po": "a",
        "gone.po": "a",
        "pipe.po": "not",
        "huge.po": "larger",
    }
    assert "symbolic link" in reasons["leak.po"] and "plain file" in reasons["pipe.po"]

    # make check names each, once, and shows nothing of what they point at.
    problems = run_checks(["zh_TW"], {"syntax"}, locale)
    said = "\n".join(map(str, problems))
    for name in ("leak.po", "environ.po", "gone.po", "pipe.po", "huge.po", "folder"):
        assert name in said, said
    assert PASSWD not in said and "PATH=" not in said and "linked.po" not in said

    # The build stops at each, naming it, and reads none: the links and the pipe are no
    # catalogs (as make check says), the huge one has an empty .mo; Sphinx reads only those.
    found = compile_catalogs(locale, tmp_path / "compiled")
    said = "\n".join(f"{where}: {why}" for problems in found.values() for where, why in problems)
    for name in ("leak.po", "environ.po", "gone.po", "pipe.po", "folder"):
        assert f"{name}:1: a symbolic link or special file" in said
    assert "huge.po:1: cannot be compiled: larger than" in said
    mos = sorted((tmp_path / "compiled").rglob("*"))
    assert [mo.name for mo in mos if mo.is_file()] == ["huge.mo"]
    assert read_mo_entries(tmp_path / "compiled" / "zh_TW" / "LC_MESSAGES" / "huge.mo") == 0
    assert PASSWD not in said


def read_mo_entries(path):
    """How many translations the .mo at *path* holds."""
    from babel.messages.mofile import read_mo

    with open(path, "rb") as file:
        return len([m for m in read_mo(file) if m.id])


def test_a_line_that_is_no_catalog_is_not_echoed(tmp_path):
    """A file of someone else's secrets, saved as a catalog: the problem, not the line."""
    po = tmp_path / "x.po"
    po.write_text(Path("/etc/passwd").read_text() + 'API_TOKEN=s3cr3t-value "x"\n')
    with pytest.raises(CatalogError) as refused:
        read(po)
    assert "root" not in str(refused.value) and PASSWD not in str(refused.value)
    said = " ".join(problem for _, problem in line_problems(po.read_text()))
    assert "s3cr3t" not in said and "API_TOKEN" not in said and "root" not in said


# -- 5': a translation no parser can read ---------------------------------------------


@pytest.mark.parametrize("text", ["{http://" * 1000, "x http://a" * 1000, "中" * 7000])
def test_a_translation_far_longer_than_its_english_reaches_no_parser(tmp_path, text):
    """A thousand links overflow docutils' stack: make check and the build stop before it."""
    folder = tmp_path / "locale" / "zh_TW" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    catalog = Catalog(locale="zh_TW")
    catalog.add("A sentence.", text, [("docs/index.rst", 1)])
    catalog.add("Another sentence.", "另一句。", [("docs/index.rst", 2)])
    write(catalog, folder / "index.po")
    start = time.monotonic()
    problems = run_checks(
        ["zh_TW"], {"safety", "markup", "references", "unused", "code"}, tmp_path / "locale"
    )
    assert [(p.check, p.message.split(" (")[0]) for p in problems] == [
        ("safety", "it is far longer than its English")
    ]
    found = compile_catalogs(tmp_path / "locale", tmp_path / "compiled")
    assert "far longer" in found["zh_TW"][0][1] and len(found["zh_TW"]) == 1
    assert read_mo_entries(tmp_path / "compiled" / "zh_TW" / "LC_MESSAGES" / "index.mo") == 1  # the other
    assert time.monotonic() - start < 10


@pytest.mark.parametrize(
    "directive",
    [
        ".. include:: {}",
        ".. raw:: html\n   :file: {}",
        ".. csv-table::\n   :file: {}",
        ".. include:: /dev/zero",
    ],
)
def test_a_translations_directive_reads_no_file_in_the_checks(tmp_path, directive):
    """make check parses a translation's directives: they may name a file, never read it."""
    secret = tmp_path / "secret.txt"  # what a file's words would make the checks say
    secret.write_text(":leakedrole:`API_TOKEN` `s3cr3t`_ <leakedtag>\n", "utf-8")
    folder = tmp_path / "locale" / "zh_TW" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    catalog = Catalog(locale="zh_TW")
    catalog.add("A sentence.", "一句話。\n\n" + directive.format(secret), [("docs/index.rst", 1)])
    write(catalog, folder / "index.po")
    problems = run_checks(["zh_TW"], {"safety", "markup", "references", "unused"}, tmp_path / "locale")
    said = " ".join(p.message for p in problems)
    assert "reST: " in said  # the parser's own words: it read no file (and -W would fail)
    assert "leaked" not in said and "API_TOKEN" not in said and "s3cr3t" not in said


def test_the_length_limit_says_which_limit_a_translation_passed():
    from gate.words import too_long

    english = "word " * 1600  # a paragraph of 8000 characters
    assert too_long(english, "中" * 6000) is None
    assert too_long(english, english) is None  # Sphinx skips a translation identical to its English
    said = too_long(english, "中" * 7000)  # shorter than its English, and over the limit of any
    assert said.startswith("it is longer than any one translation may be (7000 characters; at most 6000")
    said = too_long("A sentence.", "中" * 600)
    assert said.startswith("it is far longer than its English (600 characters for 11; at most 544)")


# -- 12: the link rule and ports ---------------------------------------------------


@pytest.mark.parametrize(
    "url, english, verdict",
    [
        ("http://127.0.0.1:2375/containers/json", "http://127.0.0.1:8000/", "error"),  # the issue's
        ("http://127.0.0.1:8001/", "http://127.0.0.1:8000/", "error"),
        ("HTTP://127.0.0.1:2375/", "http://127.0.0.1/", "error"),
        ("//user@127.0.0.1:2375/x", "http://127.0.0.1:8000/", "error"),
        ("http://[::1]:2375/", "http://[::1]/", "error"),
        ("https://example.org:443/zh/", "https://example.org/en/", "warning"),  # the default port
        ("http://example.org:0080/zh/", "http://example.org/en/", "warning"),
        ("http://127.0.0.1:8000/other", "http://127.0.0.1:8000/", "warning"),
    ],
)
def test_another_port_is_another_host(url, english, verdict):
    assert (judge(url, [english]) or ("none",))[0] == verdict, (target(url), target(english))


# -- 1, 2, 3, 11: interface strings land where nobody escapes them -----------------

COPY = "Copy to clipboard"
DATE = "%b %d, %Y"
EMULATED = "GPUs emulated on the CPU, run while this page was built:"


@pytest.mark.parametrize(
    "english, translation, said",
    [
        (
            COPY,
            '複製到剪貼簿"><meta/http-equiv="refresh"/content="0;url=//evil.example/copy">',
            'adds < > "',
        ),  # the issue's: copybutton's tooltip attribute
        (COPY, "複製' onmouseover='alert(1)", "adds '"),
        (COPY, "複製`${alert(1)}`", "adds `"),
        (COPY, "複製&#34;&gt;", "adds &"),
        (COPY, "複製\\u0022", "adds \\"),
        ("Link to this heading", '連結"><a/href="//evil.example/"/style="position:fixed">', "adds <"),
        (DATE, "%Y 年 %b %d 日 {\\catcode`\\_=12 \\input{/etc/passwd}}", "adds ` \\ { } _"),
        (DATE, "%Y年%b%d日$\\def$", "adds \\ $"),
        (DATE, "%Y 年 ~ %b", "adds ~"),
        (DATE, "%Y 年 %b %d 日 %% 完", "adds %"),
        (
            EMULATED,
            "8 × NVIDIA H200 GPU（真實 nn.DataParallel，非 CPU 模擬），使用 PyTorch 2.14、CUDA 12.8：",
            "the English does not say: 12 14 2 8 cuda dataparallel gpu h200 nn nvidia pytorch",
        ),
        (EMULATED, "A100 在 CPU 上模擬的 GPU，於建置本頁時執行：", "a100"),
        (COPY, "複製\u202e", "U+202E"),
    ],
)
def test_an_interface_translation_may_add_no_markup_and_no_claim(english, translation, said):
    reasons = "; ".join(interface_problems(english, translation))
    assert said in reasons, reasons


def test_an_interface_translation_of_words_is_fine():
    assert interface_problems(COPY, "複製到剪貼簿") == []
    assert interface_problems(DATE, "%Y年%m月%d日") == []
    glossary = {"GPU"}  # the glossary's rendering of "GPUs"
    assert interface_problems(EMULATED, "在 CPU 上模擬的 GPU，於建置本頁時執行：", glossary) == []
    assert interface_problems("Open the notebook", "開啟 Jupyter Notebook", {"Jupyter", "Notebook"}) == []


# -- 7: invisible and direction-changing characters ---------------------------------


@pytest.mark.parametrize(
    "char",
    [
        "\u202e",
        "\u2066",
        "\u2069",
        "\u200b",
        "\u200d",
        "\ufeff",
        "\u00ad",
        "\u061c",
        "\u3164",
        "\ufe0f",
        "\r",
        "\x1b",
        "\u2028",
        "\u2029",
        "\U000e0041",
    ],
)
def test_every_invisible_or_direction_changing_character_is_named(char):
    assert controls(f"說明{char}文字") == [controls(char)[0]] and controls(char)[0].startswith("U+")


def test_chinese_text_tabs_and_line_breaks_are_not_controls():
    assert controls("資料平行\t張量\n「引號」（括號）　全形空白 é") == []


# -- 10: a translation the build crashed on, drawn as words ---------------------------


@pytest.mark.filterwarnings("ignore:Glyph .* missing from font")  # no CJK font needed here
@pytest.mark.parametrize("translation", ["$x^$", "行 $", "$$", "\\$x$", "50% $ 與 $ 100"])
def test_matplotlib_draws_a_translation_as_words(translation, tmp_path):
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.set_title(as_drawn("rows", translation))
    fig.savefig(tmp_path / "figure.png")  # would raise in the math parser
    plt.close(fig)
    assert as_drawn("loss $L$", "損失 $L$") == "損失 $L$"
    assert as_drawn("loss $L$", "損失 $M$") == "loss $L$"  # math is the English's or nothing


# -- 8, 9: recordings: hostile files and servers ------------------------------------


def signed(text):
    """The base64 signature of *text* by the tests' key."""
    import base64

    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    key = load_pem_private_key(KEY.read_bytes(), password=None)
    return base64.b64encode(key.sign(text.encode())).decode()


def test_a_hostile_recording_file_gets_its_one_line(tmp_path):
    keys = trusted_keys(FIXTURES / "test-only-key.pub")
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 300_000)
    deep = tmp_path / "deep.json"  # signed by the trusted key, and nested inside
    deep.write_text(json.dumps({"recording": "[" * 300_000, "signature": signed("[" * 300_000)}))
    os.mkfifo(tmp_path / "pipe.json")
    for path in (nested, deep):
        with pytest.raises(RecordingRefused, match="not a signed recording"):
            verified(path, keys)
    chosen, report = choose([str(nested), str(tmp_path / "pipe.json")], ROOT / "examples", keys)
    assert chosen == {} and len(report) == 2 and all("not used" in line for line in report)
    start = time.monotonic()
    with pytest.raises(OutputsError, match="not a plain file"):
        fetch(str(tmp_path / "pipe.json"), tmp_path / "cache")
    assert time.monotonic() - start < 5


def test_a_recording_with_hidden_characters_in_its_output_is_refused(tmp_path):
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks  # noqa: F401

    from extensions.recordings import code_digest

    example = ROOT / "examples" / "plot_02_dataparallel_in_depth.py"
    recording = {
        "format": 3,
        "examples": {
            example.name: {
                "code": code_digest(example),
                "cells": ['ok\u202e")metsys.so'],
                "executed": {"gpus": [], "torch": "2.13.0"},
            }
        },
    }
    path = tmp_path / "bidi.json"
    path.write_text(sign(recording, KEY))
    chosen, report = choose([str(path)], ROOT / "examples", trusted_keys(FIXTURES / "test-only-key.pub"))
    assert chosen == {} and "U+202E" in report[0] and "not used" in report[0]


class Trickle(http.server.BaseHTTPRequestHandler):
    """A server that sends one byte every half second, for ever."""

    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        try:
            while True:
                self.wfile.write(b"[")
                self.wfile.flush()
                time.sleep(0.5)
        except OSError:
            pass

    def log_message(self, *args):
        pass


def test_a_server_that_sends_slowly_is_given_up_on_in_time(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        start = time.monotonic()
        with pytest.raises(OutputsError, match="took longer than 2 s"):
            fetch(f"http://127.0.0.1:{server.server_port}/outputs.json", tmp_path / "c", deadline=2)
        assert time.monotonic() - start < 6
    finally:
        server.shutdown()


# -- 13: workflows at least privilege --------------------------------------------------


def workflows():
    folder = ROOT / ".github" / "workflows"
    return {path.name: yaml.safe_load(path.read_text("utf-8")) for path in sorted(folder.glob("*.yml"))}


def test_every_workflow_job_holds_the_least_it_needs():
    for name, workflow in workflows().items():
        assert workflow.get("permissions") in ({}, {"contents": "read"}), name
        for job_name, job in workflow["jobs"].items():
            writes = {k: v for k, v in job.get("permissions", {}).items() if v == "write"}
            assert writes in ({}, {"contents": "write"}), (name, job_name)
            if writes:  # only the job that publishes, on a machine that runs no example
                assert job["runs-on"] == "ubuntu-latest" and "make" not in json.dumps(job)
            for step in job["steps"]:
                if step.get("uses", "").startswith("actions/checkout"):
                    assert step["with"]["persist-credentials"] is False, (name, job_name)


def test_the_signing_key_reaches_one_step_and_is_removed_whatever_happens():
    workflow = workflows()["gpu-outputs.yml"]
    assert set(workflow[True]) == {"push", "workflow_dispatch"}  # YAML 1.1 reads "on" as True
    assert workflow[True]["push"]["branches"] == ["main"]
    holders = [
        (job_name, step)
        for job_name, job in workflow["jobs"].items()
        for step in job["steps"]
        if "secrets." in json.dumps(step)
    ]
    assert len(holders) == 1
    job_name, step = holders[0]
    job = workflow["jobs"][job_name]
    assert job["environment"] == "recordings" and "self-hosted" not in json.dumps(job["runs-on"])
    assert "trap 'rm -f \"$key\"' EXIT" in step["run"]
    for job in workflow["jobs"].values():
        assert job["if"] == "github.ref == 'refs/heads/main'"
    publish = json.dumps(workflow["jobs"]["publish"])
    assert "outputs-$GITHUB_SHA.json" in publish and "--short" not in publish


# -- Together, in a real build: one build for the catalog entries --------------------

HEADING_LINK = "Link to this heading"
# (catalog under zh_TW/LC_MESSAGES, English, hostile translation, what make check says)
ENTRIES = {
    "copybutton": (
        "sphinx.po",
        COPY,
        '複製到剪貼簿"><meta/http-equiv="refresh"/content="0;url=//e.example">',
        "[interface] refused: it adds",
    ),
    "provenance claim": (
        "sphinx.po",
        EMULATED,
        "NVIDIA H200（真實 nn.DataParallel），使用 CUDA 12.8：",
        "[interface] refused: it adds words",
    ),
    "bidi in a docstring": (
        "auto_examples/plot_01_tiny.po",
        "It prints one line.",
        '它印出一行。\u202e("…")metsys.so',
        "[safety] holds invisible",
    ),
    "markdown in a notebook": (
        "auto_examples/plot_01_tiny.po",
        "The line it prints. ``print`` writes it to standard output and ends it with a newline.",
        "它印出的那一行。``print`` 把它寫到標準輸出，結尾加上換行。"
        "[下載 GPU 版 PyTorch](//evil.example/torch.whl) "
        "![](//evil.example/pixel.png)",
        "[safety] adds, in the tutorial's notebook",
    ),
    # The build's judge of what a translation adds (gate/safety.py), in make check too.
    "math in a reST title": (
        "auto_examples/plot_01_tiny.po",
        "A tiny tutorial",
        "一篇小教學 :math:`e^{i\\pi}`",
        "[safety] adds math",
    ),
    "a download in a MyST title": (
        "index.po",
        "A one-page site",
        "只有一頁的網站 {download}`原始碼 <index.md>`",
        "[safety] adds download_reference",
    ),
}


def set_entries(project, entries, added=()):
    """Give the zh_TW catalogs of *project* the hostile *entries*; add the *added* ones."""
    folder = project / "locale" / "zh_TW" / "LC_MESSAGES"
    for catalog, english, translation, _ in entries:
        po = read(folder / catalog)
        po.get(english).string = translation
        write(po, folder / catalog)
    for catalog, english, translation in added:
        po = read(folder / catalog)
        po.add(english, translation, locations=[("sphinx/writers/html5.py", 1)])
        write(po, folder / catalog)


def make(project, *args):
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=project,
        capture_output=True,
        text=True,
        env=outside_env(),
        timeout=600,
    )


def located(output, catalog):
    """The line numbers at which *output* names the zh_TW catalog *catalog*."""
    name = re.escape(f"locale/zh_TW/LC_MESSAGES/{catalog}")
    return {int(n) for n in re.findall(rf"{name}:(\d+)", output)}


def digest(folder):
    import hashlib

    return {
        p.relative_to(folder): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


ADDED = [
    ("sphinx.po", HEADING_LINK, '連結"><a href="//e.example">'),  # Sphinx's own string
    ("sphinx.po", DATE, "%Y 年 %b %d 日 {\\input{/etc/passwd}}"),
]  # the PDF's date


def entry_lines(project, catalog, english):
    """The lines of the zh_TW *catalog*'s entry for *english*: its msgid's to its msgstr's."""
    po = project / "locale" / "zh_TW" / "LC_MESSAGES" / catalog
    first = read(po).get(english).lineno
    lines = po.read_text("utf-8").split("\n")
    last = next(n for n in range(first, len(lines) + 1) if not lines[n - 1].strip())
    return set(range(first, last))


def test_the_gate_and_the_build_refuse_the_same_entries_and_keep_the_site(mini_site):
    project = mini_site
    set_entries(project, ENTRIES.values(), ADDED)
    before = digest(project / "_build" / "html" / "zh_TW")
    check = make(project, "check", "LANGUAGES=zh_TW")
    html = make(project, "html", "LANGUAGES=zh_TW")
    said = {"check": check.stdout + check.stderr, "html": html.stdout + html.stderr}
    assert check.returncode != 0 and html.returncode != 0, said
    for name, (catalog, english, _, reason) in ENTRIES.items():
        assert reason in said["check"], name
    for catalog, english, *_ in [*ENTRIES.values(), *ADDED]:
        where = entry_lines(project, catalog, english)
        for output in said.values():  # the same entry, by file and line, in both
            assert located(output, catalog) & where, (english, output[-3000:])
    assert said["check"].count("an interface string the site does not extract") == len(ADDED)
    for output in said.values():
        assert PASSWD not in output
    assert digest(project / "_build" / "html" / "zh_TW") == before  # the last good site


def test_a_symbolic_link_under_locale_stops_the_build_before_sphinx_reads_it(mini_site):
    project = mini_site
    (project / ".gitignore").write_text("/_build/\n/.venv\n*.mo\n*.pot\n__pycache__/\n")
    for args in (
        ["init", "--quiet", "--initial-branch=main"],
        ["add", "-A"],
        ["commit", "--quiet", "-m", "base"],
    ):
        subprocess.run(
            ["git", "-c", "user.name=T", "-c", "user.email=t@example.org", *args],
            cwd=project,
            check=True,
            capture_output=True,
        )
    git = ["git", "-c", "user.name=T", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "switch", "--quiet", "-c", "pr"], cwd=project, check=True)
    (project / "locale" / "zh_TW" / "LC_MESSAGES" / "leak.po").symlink_to("/etc/passwd")
    subprocess.run([*git, "add", "-A"], cwd=project, check=True)
    subprocess.run([*git, "commit", "--quiet", "-m", "a pull request"], cwd=project, check=True)
    before = digest(project / "_build" / "html" / "zh_TW")
    for goal in ("html", "check", "review-diff"):
        result = make(project, goal, "LANGUAGES=zh_TW", *(["BASE=main"] if goal == "review-diff" else []))
        output = result.stdout + result.stderr
        named = re.search(r"leak\\?\.po", output)  # summary.md escapes the dot
        assert named and PASSWD not in output and "root:" not in output, (goal, output[-2000:])
        if goal != "review-diff":
            assert result.returncode != 0, goal
    review = project / "_build" / "review"
    for page in review.glob("*") if review.is_dir() else ():
        assert PASSWD not in page.read_text("utf-8", errors="replace")
    assert digest(project / "_build" / "html" / "zh_TW") == before


def test_a_dollar_in_a_figure_label_is_drawn_as_a_dollar(mini_site):
    """The gate passes it (it is words); Matplotlib gets it escaped, and the build does not crash."""
    project = mini_site
    (project / "examples" / "plot_02_figure.py").write_text(FIGURE_EXAMPLE.format(height=1))
    assert make(project, "update-po", "LANGUAGES=zh_TW").returncode == 0
    folder = project / "locale" / "zh_TW" / "LC_MESSAGES" / "auto_examples"
    po = read(folder / "plot_02_figure.po")
    for message in po:
        if message.id:
            message.string = {"One line": "一條線 $x^$"}.get(message.id, message.id)
    write(po, folder / "plot_02_figure.po")
    result = make(project, "html", "LANGUAGES=zh_TW")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    images = list((project / "_build" / "html" / "zh_TW" / "_images").glob("*plot_02_figure*.png"))
    assert images


@pytest.mark.browser
def test_tampered_interface_strings_cannot_make_copybutton_write_html(mini_built, tmp_path, visit, serve):
    """The build compiles no such string; the page's script keeps the English should one arrive."""
    import shutil

    site = Path(shutil.copytree(mini_built / "_build" / "html" / "zh_TW", tmp_path / "zh_TW"))
    page = site / "auto_examples" / "plot_01_tiny.html"
    html = page.read_text("utf-8")
    block = re.search(r'(<script[^>]*id="interface-strings"[^>]*>)(.*?)(</script>)', html, re.S)
    strings = json.loads(block[2])
    strings["copy_to_clipboard"] = '複製"><meta http-equiv="refresh" content="0;url=//example.org/x">'
    tampered = json.dumps(strings).replace("<", "\\u003c")  # as |tojson writes it
    page.write_text(html[: block.start(2)] + tampered + html[block.end(2) :], "utf-8")
    root = serve(site)
    shown, dialogs, requests = visit(root + "auto_examples/plot_01_tiny.html")
    assert shown.url == root + "auto_examples/plot_01_tiny.html" and dialogs == []
    assert [url for url in requests if not url.startswith(root)] == []
    assert shown.locator("meta[http-equiv=refresh]").count() == 0
    tooltips = shown.locator("button.copybtn").evaluate_all("(b) => b.map((x) => x.dataset.tooltip)")
    assert tooltips and set(tooltips) <= {"Copy", "Copy to clipboard"}  # copybutton's English
