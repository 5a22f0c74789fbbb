"""Recorded example output is data (conf/extensions/recordings.py, conf/build/outputs.py).

``make outputs`` records the real examples (one of them, checked cell by cell
against what the site's build printed) and, in a copy of the mini site that
trusts the tests' key (tests/fixtures/recordings), a tutorial whose result
blocks carry the headers the provenance notes read. From that recording the
tests make the ones a hostile contributor would publish (tampered, signed by
another key, stale, oversized, carrying markup or claiming real GPUs): each is
refused with a one-line reason, or, signed by the trusted key, shows its text
as text and nothing else. Pages, figures and downloads always come from the
build's own execution of the sources.
"""

import base64
import hashlib
import json
import re
import shutil
import subprocess
import tracemalloc
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from docutils import nodes
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from build import outputs
from build.outputs import NotPublished, OutputsError, fetch, published, shard_of
from conftest import ROOT, mini_copy, one_worker_at_a_time, outside_env, run_module
from extensions.recordings import (
    MAX_FILE,
    RECORDED_SOURCES,
    choose,
    code_digest,
    committed,
    sign,
    trusted_keys,
    verified,
)

FIXTURES = Path(__file__).parent / "fixtures" / "recordings"
KEY = FIXTURES / "test-only-key.pem"
EPOCH = "1700000000"
LANGS = "LANGUAGES=en zh_TW"
RESULTS = "plot_02_results.py"
TUTORIAL = "auto_examples/plot_02_results.html"
GPU = "NVIDIA A100-SXM4-80GB"
EXAMPLES = 2  # the mini site's tutorial and RESULTS
# A tutorial for the mini site whose result blocks start with the examples' headers
# (conf/extensions/provenance.py, HEADERS), each under a provenance note.
RESULTS_EXAMPLE = '''"""
Results
=======

Each block starts with the header the real tutorials print.
"""

# %%
# On one emulated GPU.

print("# 1 GPU emulated on CPU")
print("loss 0.50")

# %%
# On two.

print("# 2 GPUs emulated on CPU")
print("loss 0.40")

# %%
# On eight.

print("# 8 GPUs emulated on CPU")
print("loss 0.25")
'''
# What a recording's text may try to be: HTML, reST, a page that goes elsewhere.
HOSTILE = (
    '<script>alert(1)</script><meta http-equiv="refresh" content="0;url=//example.org/">'
    "\n.. raw:: html\n\n   <b>raw</b>\n\n.. literalinclude:: /etc/passwd\n"
)


def run(project, *args, **env):
    """Run make in *project* as a person would; return the completed process."""
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=project,
        env=outside_env(**{"SOURCE_DATE_EPOCH": EPOCH, **env}),
        capture_output=True,
        text=True,
    )


def ok(result):
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


def trusting(project, *public_keys):
    """Make *project* trust *public_keys* (files) for its recordings; return it."""
    lines = [Path(key).read_text().strip() for key in public_keys]
    (project / "conf" / "recording-keys.txt").write_text("\n".join(lines) + "\n")
    return project


def contents(path):
    """The recording dict inside the signed file *path*."""
    return json.loads(json.loads(Path(path).read_text("utf-8"))["recording"])


def resigned(recording, target, key=KEY, change=lambda r: None):
    """Write *recording*, changed by ``change(copy)``, signed with *key*, to *target*."""
    copy = json.loads(json.dumps(recording))
    change(copy)
    Path(target).write_text(sign(copy, key), "utf-8")
    return Path(target)


def cells(recording, example=RESULTS):
    return recording["examples"][example]["cells"]


def on_real_gpus(recording):
    """Claim that the 8-GPU result came from real GPUs, with markup in its text."""
    found = cells(recording)
    index = next(i for i, c in enumerate(found) if c and c.startswith("# 8 GPUs emulated on CPU"))
    found[index] = (
        found[index].replace("# 8 GPUs emulated on CPU", f"# 8 × {GPU} (real nn.DataParallel)")
        + "\n"
        + HOSTILE
    )
    recording["examples"][RESULTS]["executed"].update(gpus=[GPU] * 8, cuda="12.8", driver="570.86.15")


def notes(project, lang, page):
    soup = BeautifulSoup((project / "_build/html" / lang / page).read_text("utf-8"), "html.parser")
    return [p.get_text() for p in soup.select("p.provenance")]


def files(folder, pattern="*"):
    """{relative path: sha256} of the files under *folder* matching *pattern*."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(Path(folder).rglob(pattern))
        if p.is_file()
    }


def record(project, out, *args):
    """``make outputs`` in *project*, signed with the tests' key, into *out*; return its log."""
    return ok(run(project, "outputs", f"KEY={KEY}", f"OUT={out}", *args))


@pytest.fixture(scope="module")
def recorder(tmp_path_factory):
    """(tmp, a mini site trusting the tests' key, with RESULTS, built; its signed recording)."""
    tmp = tmp_path_factory.mktemp("outputs")
    project = trusting(mini_copy(tmp / "recorder"), FIXTURES / "test-only-key.pub")
    (project / "examples" / RESULTS).write_text(RESULTS_EXAMPLE, "utf-8")
    assert f"executing {EXAMPLES} example(s)" in record(project, tmp / "all.json")
    ok(run(project, "html", LANGS))  # the copy's own output, for comparison
    return tmp, project, tmp / "all.json"


def check_recording(path, project, keys=FIXTURES / "test-only-key.pub"):
    """Assert that *path* is a recording of *project*'s examples, each cell's text, signed."""
    import torch

    recording = verified(path, trusted_keys(keys))
    assert recording["format"] == 3
    for name, example in recording["examples"].items():
        assert example["code"] == code_digest(project / "examples" / name)
        assert all(cell is None or isinstance(cell, str) for cell in example["cells"])
        facts = example["executed"]
        assert facts["torch"] == torch.__version__ and facts["date"] == "2023-11-14"
        assert facts["gpus"] == [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return recording


def test_a_recording_is_what_each_cell_printed_and_its_provenance_signed(recorder):
    _, project, path = recorder
    recording = check_recording(path, project, project / "conf" / "recording-keys.txt")
    assert set(recording["examples"]) == {p.name for p in (project / "examples").glob("*.py")}
    # One entry per code cell: the text it printed.
    assert cells(recording) == [
        "# 1 GPU emulated on CPU\nloss 0.50",
        "# 2 GPUs emulated on CPU\nloss 0.40",
        "# 8 GPUs emulated on CPU\nloss 0.25",
    ]
    assert cells(recording, "plot_01_tiny.py") == ["one line"]


def test_a_shard_of_the_real_examples_records_their_results(tmp_path):
    """A shard of one example, plot_01: its result blocks, each under its header, as the page shows them."""
    import torch

    names = sorted(p.name for p in (ROOT / "examples").glob("plot_*.py"))
    shard = f"{names.index('plot_01_dataparallel.py') + 1}/{len(names)}"  # plot_01 alone
    out = tmp_path / "plot_01.json"
    with one_worker_at_a_time(sources=False):  # make outputs copies the checkout
        log = record(ROOT, out, f"SHARD={shard}")
    assert "executing 1 example(s): plot_01_dataparallel.py" in log
    recording = check_recording(out, ROOT)
    assert set(recording["examples"]) == {"plot_01_dataparallel.py"}
    headers = [
        c.split("\n", 1)[0] for c in cells(recording, "plot_01_dataparallel.py") if c and c.startswith("# ")
    ]
    gpus = torch.cuda.device_count()
    name = torch.cuda.get_device_name(0) if gpus else None
    assert headers[-4:] == [  # real nn.DataParallel for the counts this machine has
        f"# {n} × {name} (real nn.DataParallel)" if gpus >= n else f"# {n} GPU{'s' * (n > 1)} emulated on CPU"
        for n in (1, 2, 3, 8)
    ]


def another_key(tmp_path):
    """A fresh private key nobody trusts."""
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    (tmp_path / "other.pem").write_bytes(pem)
    return tmp_path / "other.pem"


def tampered(recording, tmp_path):
    """Signed, then changed: the signature no longer holds."""
    target = resigned(recording, tmp_path / "tampered.json")
    signed = json.loads(target.read_text())
    signed["recording"] = signed["recording"].replace("emulated on CPU", "real nn.DataParallel")
    target.write_text(json.dumps(signed))
    return target


def oversized(recording, tmp_path):
    target = tmp_path / "oversized.json"
    with open(target, "wb") as file:
        file.truncate(MAX_FILE + 1)
    return target


# Each way a recording is refused: (make the file, what the one line says).
REFUSED = {
    "tampered": (tampered, "its signature is not from a trusted key"),
    "another key": (
        lambda r, tmp: resigned(r, tmp / "other.json", another_key(tmp)),
        "its signature is not from a trusted key",
    ),
    "not signed": (
        lambda r, tmp: Path(tmp / "plain.json").write_text(json.dumps(r)) and tmp / "plain.json",
        "not a signed recording made by make outputs",
    ),
    "oversized": (oversized, "larger than 8 MiB"),
    "stale": (
        lambda r, tmp: resigned(
            r, tmp / "stale.json", change=lambda c: c["examples"]["plot_01_tiny.py"].update(code="0" * 64)
        ),
        "plot_01_tiny.py: its code changed since it was recorded",
    ),
    "real GPUs its facts deny": (
        lambda r, tmp: resigned(
            r,
            tmp / "deny.json",
            change=lambda c: cells(c).__setitem__(2, f"# 8 × {GPU} (real nn.DataParallel)\nloss 0.25"),
        ),
        f"{RESULTS}: a result's header claims GPUs its facts deny (it claims 8 GPU(s), its facts list 0)",
    ),
    "a GPU per process its facts deny": (
        lambda r, tmp: resigned(
            r,
            tmp / "nccl.json",
            change=lambda c: (
                cells(c).__setitem__(1, f"# 2 processes on 2 × {GPU} (nccl)\nloss 0.40"),
                c["examples"][RESULTS]["executed"].update(gpus=["NVIDIA T4", "NVIDIA T4"]),
            ),
        ),
        "its facts list ['NVIDIA T4']",
    ),
    "cells not text": (
        lambda r, tmp: resigned(
            r, tmp / "cells.json", change=lambda c: cells(c).__setitem__(0, {"html": "<b>x</b>"})
        ),
        "its cells are not text",
    ),
    "markup in provenance": (
        lambda r, tmp: resigned(
            r,
            tmp / "facts.json",
            change=lambda c: c["examples"][RESULTS]["executed"].update(gpus=["A100\n.. raw:: html"]),
        ),
        "its provenance holds 'gpus'",
    ),
    "unknown fact": (
        lambda r, tmp: resigned(
            r,
            tmp / "fact.json",
            change=lambda c: c["examples"][RESULTS]["executed"].update(url="https://example.org"),
        ),
        "its provenance holds 'url'",
    ),
    "a path for a name": (
        lambda r, tmp: resigned(
            r,
            tmp / "path.json",
            change=lambda c: c["examples"].__setitem__("../conf/conf.py", c["examples"][RESULTS]),
        ),
        "../conf/conf.py: no such example here",
    ),
}


@pytest.mark.parametrize("case", REFUSED)
def test_a_recording_the_build_cannot_trust_is_refused_in_one_line(recorder, tmp_path, case):
    _, project, path = recorder
    make, reason = REFUSED[case]
    bad = make(contents(path), tmp_path)
    keys = trusted_keys(project / "conf" / "recording-keys.txt")
    chosen, report = choose([str(bad)], project / "examples", keys)
    refusals = [line for line in report if "not used" in line]
    assert len(refusals) == 1 and reason in refusals[0], report
    if case in (
        "stale",
        "cells not text",
        "markup in provenance",
        "unknown fact",
        "a path for a name",
        "real GPUs its facts deny",
        "a GPU per process its facts deny",
    ):
        assert len(chosen) == (
            EXAMPLES if case == "a path for a name" else EXAMPLES - 1
        )  # the others are used
    else:
        assert chosen == {}
    assert "\n" not in refusals[0]


def test_a_recording_holds_while_only_the_prose_changes(recorder, tmp_path):
    """Format 3 ties a recording to the example's code cells: prose edits keep it, code edits do not."""
    _, project, path = recorder
    keys = trusted_keys(project / "conf" / "recording-keys.txt")
    examples = tmp_path / "examples"
    shutil.copytree(project / "examples", examples)
    source = examples / RESULTS
    source.write_text(RESULTS_EXAMPLE.replace("On two.", "On two GPUs, a longer sentence."))
    chosen, report = choose([str(path)], examples, keys)
    assert RESULTS in chosen, report
    source.write_text(RESULTS_EXAMPLE.replace('print("loss 0.40")', 'print("loss 0.41")'))
    chosen, report = choose([str(path)], examples, keys)
    assert RESULTS not in chosen
    assert [line for line in report if f"{RESULTS}: its code changed since it was recorded" in line]


def test_a_format_2_recording_holds_while_the_file_it_recorded_has_todays_code(
    recorder, tmp_path, monkeypatch
):
    """Recordings made before format 3 signed Sphinx-Gallery's checksum of the whole file: a prose
    edit keeps one only if the file it recorded is kept (conf/recordings/sources/, by that signed
    checksum) and has the same code cells as today's; nothing else vouches for it."""
    from sphinx_gallery.utils import get_md5sum

    from extensions import recordings

    _, project, path = recorder
    keys = trusted_keys(project / "conf" / "recording-keys.txt")
    examples = tmp_path / "examples"
    shutil.copytree(project / "examples", examples)
    sources = tmp_path / "sources"
    monkeypatch.setattr(recordings, "RECORDED_SOURCES", sources)

    def as_format_2(recording):
        recording["format"] = 2
        for name, example in recording["examples"].items():
            example["md5"] = get_md5sum(examples / name, mode="t")
            del example["code"]

    old = resigned(contents(path), tmp_path / "format-2.json", change=as_format_2)
    md5 = get_md5sum(examples / RESULTS, mode="t")

    def refused(why):
        chosen, report = choose([str(old)], examples, keys)
        assert RESULTS not in chosen and [line for line in report if f"{RESULTS}: {why}" in line], report

    assert RESULTS in choose([str(old)], examples, keys)[0]  # the very file
    (examples / RESULTS).write_text(RESULTS_EXAMPLE.replace("On two.", "On two GPUs."))
    refused(
        "its source changed since it was recorded, and the file it recorded is not kept in"
        f" conf/recordings/sources/{md5}.txt"
    )
    sources.mkdir()
    (sources / f"{md5}.txt").write_text(RESULTS_EXAMPLE.replace("On one emulated GPU.", "On one."))
    refused(f"conf/recordings/sources/{md5}.txt is not the file it recorded")  # named so, but not it
    (sources / f"{md5}.txt").unlink()
    (sources / f"{md5}.txt").symlink_to(project / "examples" / RESULTS)
    refused("its source changed since it was recorded, and the file it recorded is not kept")
    (sources / f"{md5}.txt").unlink()
    shutil.copyfile(project / "examples" / RESULTS, sources / f"{md5}.txt")
    chosen, report = choose([str(old)], examples, keys)
    assert RESULTS in chosen, report  # only the prose changed
    (examples / RESULTS).write_text(RESULTS_EXAMPLE.replace('print("loss 0.40")', 'print("loss 0.41")'))
    refused("its code changed since it was recorded")


def edited(source, code):
    """*source* with a word added to its docstring's last line, or with a line of code added."""
    if code:
        return source + '\nprint("one more line")\n'
    closing = source.index('"""', source.index('"""') + 3)  # after the docstring's last line
    return source[: closing - 1] + " Also this." + source[closing - 1 :]


def test_a_committed_recording_holds_after_a_prose_edit_and_not_after_a_code_edit(tmp_path):
    """Whatever conf/recordings/ holds (none is fine): each example it recorded keeps its
    recording when a word is added to its prose, and loses it when a line of code is."""
    for path in committed():
        recording = verified(path, trusted_keys())
        for name in recording["examples"]:
            for code in (False, True):
                examples = tmp_path / f"{Path(path).stem}-{name}-{code}"
                shutil.copytree(ROOT / "examples", examples)
                source = examples / name
                source.write_text(edited(source.read_text("utf-8"), code), "utf-8")
                chosen, report = choose([path], examples)
                assert (name in chosen) != code, (name, code, report)


def test_a_kept_recorded_source_is_the_file_of_its_recordings_commit():
    """The files in conf/recordings/sources/ are the repository's own, where its history has them."""
    for path in committed():
        recording = verified(path, trusted_keys())
        for name, example in recording["examples"].items():
            kept = RECORDED_SOURCES / f"{example.get('md5')}.txt"
            if recording["format"] != 2 or not kept.is_file():
                continue
            commit = example["executed"].get("commit", "")
            shown = subprocess.run(
                ["git", "show", f"{commit}:examples/{name}"], cwd=ROOT, capture_output=True, text=True
            )
            if shown.returncode != 0:  # a shallow clone: the checksum alone decides, in the build
                continue
            assert kept.read_text("utf-8") == shown.stdout, kept


def test_every_committed_recording_is_signed_current_and_shown_by_default(site):
    """The reviewed GPU recordings in conf/recordings/ (if any): the default build shows each,
    every output block under a line that says it was recorded, with its facts, in each language."""
    chosen, report = choose(committed(), ROOT / "examples")
    refused = [line for line in report if "not used" in line]
    assert not refused, "a committed recording went stale: record it again, or remove it"
    for name, (recorded_cells, facts) in chosen.items():
        expected = {"PyTorch": facts["torch"], "commit": facts["commit"], "date": facts["date"]}
        for lang in ("en", "zh_CN", "zh_TW"):
            page = ROOT / "_build/html" / lang / "auto_examples" / f"{name[:-3]}.html"
            soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
            blocks = soup.select(".sphx-glr-script-out")
            shown = [block.select_one("pre").get_text().rstrip("\n") for block in blocks]
            assert shown == [cell for cell in recorded_cells if cell is not None], name
            for block in blocks:
                line = block.find_previous_sibling()
                assert line is not None and "provenance" in line.get("class", []), (name, lang)
                values = [v.get_text() for v in line.select(".provenance-fact")]
                assert values[0] == f"{len(facts['gpus'])} × {', '.join(sorted(set(facts['gpus'])))}"
                assert set(expected.values()) <= set(values), (values, expected)


RECORD = {
    "gpus": ["NVIDIA H200"],
    "torch": "2.11.0+cu130",
    "cuda": "13.0",
    "driver": "580.159.04",
    "date": "2026-12-04",
    "commit": "e2a3648",
    "python": "3.12.3",
}


@pytest.mark.parametrize(
    "translation",
    ["８ × ＮＶＩＤＩＡ Ｈ１００，PyTorch 2.14：", "%(count)s × %(model)s", "真实 GPU（非 CPU 模拟）：", ""],
)
@pytest.mark.parametrize(
    "header", ["# 8 GPUs emulated on CPU", "# 1 × NVIDIA H200 (real nn.DataParallel)", "loss 0.25"]
)
def test_no_translation_changes_the_facts_a_provenance_line_shows(monkeypatch, translation, header):
    """Full-width digits, dropped placeholders, a reworded claim: whatever sphinx.po says, the
    values the line shows are the execution record's, composed outside every translation."""
    from extensions import provenance

    monkeypatch.setattr(provenance, "_", lambda english: translation)
    line = provenance.note(header, RECORD, recorded=True)

    def shown(part):
        return [node.astext() for node in line.findall(nodes.inline) if part in node["classes"]]

    assert shown("provenance-fact") == [
        "1 × NVIDIA H200",
        "2.11.0+cu130",
        "13.0",
        "580.159.04",
        "2026-12-04",
        "e2a3648",
    ]
    words = shown("provenance-words")
    assert words == [translation]  # the words are the translation's, and hold no fact of the record


def test_no_trusted_key_refuses_every_recording(recorder):
    _, project, path = recorder
    chosen, report = choose([str(path)], project / "examples", keys=[])
    assert chosen == {} and "no trusted key in recording-keys.txt" in report[0]


def test_shards_merge_into_the_whole_recording(recorder, tmp_path):
    _, project, path = recorder
    whole = contents(path)
    names = sorted(whole["examples"])
    assert shard_of(names, "1/2") + shard_of(names, "2/2") == names[0::2] + names[1::2]
    shards = [
        resigned(
            whole,
            tmp_path / f"{k}.json",
            change=lambda c, k=k: c.update(examples={n: c["examples"][n] for n in shard_of(names, f"{k}/2")}),
        )
        for k in (1, 2)
    ]
    keys = trusted_keys(project / "conf" / "recording-keys.txt")
    merged, _ = choose(list(map(str, shards)), project / "examples", keys)
    assert merged == choose([str(path)], project / "examples", keys)[0]
    assert len(merged) == EXAMPLES


def test_fetch_reads_no_more_than_the_limit(tmp_path):
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as file:
        file.truncate(2**30)  # 1 GiB, sparse
    tracemalloc.start()
    with pytest.raises(OutputsError, match="larger than 8 MiB"):
        fetch(str(huge), tmp_path / "cache")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 3 * MAX_FILE
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_a_trusted_recording_shows_its_text_as_text_and_nothing_else(recorder, tmp_path):
    tmp, project, path = recorder
    gpus = resigned(contents(path), tmp_path / "gpus.json", change=on_real_gpus)
    before = {lang: files(project / "_build/html" / lang, "_downloads/**/*") for lang in ("en", "zh_TW")}
    images = files(project / "_build/html/en/_images")
    log = ok(run(project, "html", LANGS, f"OUTPUTS={gpus}"))
    assert f"{RESULTS}: recorded output used ({gpus}; commit" in log
    english = notes(project, "en", TUTORIAL)
    assert english[-1].startswith("Real nn.DataParallel, recorded, not run by this build:")
    assert f"machine with 8 × {GPU} · " in english[-1] and "recorded on 2023-11-14 · " in english[-1]
    assert "CUDA 12.8 · driver 570.86.15" in english[-1]
    assert all(n.startswith("GPUs emulated on the CPU, recorded") for n in english[:-1])
    chinese = notes(project, "zh_TW", TUTORIAL)
    assert chinese[-1].startswith("真正的 nn.DataParallel，錄製的輸出") and f"8 × {GPU}" in chinese[-1]
    assert "模擬" in chinese[-2] and "2023-11-14" in chinese[-2]

    page = (project / "_build/html/en" / TUTORIAL).read_text("utf-8")
    soup = BeautifulSoup(page, "html.parser")
    shown = [pre.get_text() for pre in soup.select(".sphx-glr-script-out pre")]
    assert any(HOSTILE.strip() in text for text in shown)  # the recording's text, as text
    assert not [s for s in soup.find_all("script") if "alert" in s.get_text()]
    assert not soup.find("meta", attrs={"http-equiv": "refresh"}) and not soup.find("b", string="raw")
    passwd = Path("/etc/passwd").read_text().splitlines()[0]
    assert not [p for p in (project / "_build/html").rglob("*.html") if passwd in p.read_text("utf-8")]
    # Downloads and figures are the build's own, made from the sources.
    for lang in ("en", "zh_TW"):
        assert files(project / "_build/html" / lang, "_downloads/**/*") == before[lang]
    assert files(project / "_build/html/en/_images") == images

    # Nothing of it stays: the next build without OUTPUTS shows its own output.
    ok(run(project, "html", LANGS))
    assert all("run while this page was built" in n for n in notes(project, "en", TUTORIAL))
    assert HOSTILE.split("\n", 1)[0] not in (project / "_build/html/en" / TUTORIAL).read_text()


@pytest.mark.browser
def test_a_recordings_markup_makes_no_element_request_or_navigation(recorder, tmp_path, visit, serve):
    tmp, project, path = recorder
    gpus = resigned(contents(path), tmp_path / "gpus.json", change=on_real_gpus)
    site = tmp_path / "site"
    args = ["-b", "html", "-q", "-c", "conf", "-D", "language=en", "-D", f"recordings={gpus}"]
    built = run_module(project, "sphinx", *args, "-d", tmp_path / "doctrees", "docs", site, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    root = serve(site)
    page, dialogs, requests = visit(root + TUTORIAL)
    assert dialogs == [] and page.url == root + TUTORIAL
    assert [url for url in requests if not url.startswith(root)] == []
    assert page.locator("meta[http-equiv=refresh], article script, article b").count() == 0
    assert "<script>alert(1)</script>" in page.locator("article").text_content()  # in a tab


def test_a_refused_recording_builds_the_pages_with_their_own_output(recorder, tmp_path):
    tmp, project, path = recorder
    bad = tampered(contents(path), tmp_path)
    before = files(project / "_build/html/zh_TW")
    log = ok(run(project, "html", "LANGUAGES=zh_TW", f"OUTPUTS={bad}"))
    assert re.search(
        r"recording \S+tampered.json not used: its signature is not from a trusted"
        r" key; the examples show this build's output",
        log,
    )
    assert "recorded output used" not in log
    shown = notes(project, "zh_TW", TUTORIAL)
    assert shown and not [n for n in shown if "錄製" in n]  # none says "recorded"
    after = files(project / "_build/html/zh_TW")
    assert {k for k in after if after[k] != before.get(k)} <= {"searchindex.js", ".buildinfo"}


def test_read_the_docs_uses_the_published_recording_of_its_commit(recorder, tmp_path, serve):
    tmp, project, path = recorder
    folder = tmp_path / "served"
    folder.mkdir()
    (folder / "outputs-abc1234.json").write_bytes(path.read_bytes())
    base = serve(folder)
    template = base + "outputs-{commit}.json"
    cache = tmp_path / "cache"
    with pytest.raises(NotPublished):
        fetch(base + "outputs-def5678.json", cache)
    assert published(template, "def5678", cache) is None
    url, copy = published(template, "abc1234", cache)
    assert url == base + "outputs-abc1234.json" and copy.read_bytes() == path.read_bytes()

    env = {
        "READTHEDOCS": "True",
        "READTHEDOCS_LANGUAGE": "zh-tw",
        "READTHEDOCS_VERSION": "latest",
        "READTHEDOCS_OUTPUT": str(tmp_path / "out"),
        "READTHEDOCS_GIT_COMMIT_HASH": "abc1234",
        "DP_OUTPUTS_URL": f"{base}outputs-{{commit}}.json {base}outputs-latest.json",
        "SOURCE_DATE_EPOCH": EPOCH,
    }
    log = ok(run_module(project, "build.site", "readthedocs", **env))
    assert log.count(f"recorded output used ({url}; commit") == EXAMPLES
    page = tmp_path / "out" / "html" / TUTORIAL
    assert (
        "錄製" in BeautifulSoup(page.read_text("utf-8"), "html.parser").select_one("p.provenance").get_text()
    )


def test_a_signing_key_is_made_once_and_never_overwritten(tmp_path, capsys):
    private = tmp_path / "key.pem"
    assert outputs.main(["keygen", str(private)]) == 0 and oct(private.stat().st_mode & 0o777) == "0o600"
    public = capsys.readouterr().out.split()[0]
    assert len(base64.b64decode(public)) == 32
    assert outputs.main(["keygen", str(private)]) == 2
    assert "exists; not overwritten" in capsys.readouterr().err
