"""Say, above each result, where it came from: real GPUs or emulation, recorded or run here.

When Sphinx-Gallery executes an example, :func:`record` (a ``reset_modules``
hook) writes ``<gallery>/<name>.provenance.json`` beside its page: when, from
which commit, with which PyTorch, Python, CUDA and driver, on which GPUs. A
recording made by ``make outputs`` carries those facts; a page that shows
recorded output (recordings.py) takes them from it.

Each result block of a tutorial starts with a header line the example prints
(result_headers.py): ``# 8 × NVIDIA H200 (real nn.DataParallel)``, ``# 8 GPUs
emulated on CPU``, ``# 2 processes on 2 × NVIDIA H200 (nccl)`` or ``# 8
processes on the CPU (gloo)``. Above such a block, and above every block of
a page that shows recorded output, this extension puts one line in the
reader's language: what ran and whether this build ran it, in words, then
the facts of the execution record, for example "Real nn.DataParallel,
recorded, not run by this build: machine with 1 × NVIDIA H200 ·
PyTorch 2.11.0+cu130 · CUDA 13.0 · driver 580.159.04 · recorded on
2026-12-04 · commit e2a3648".

The words are interface strings (extracted into sphinx.pot, translated in
locale/<lang>/LC_MESSAGES/sphinx.po) and hold no fact: no placeholder, no
number, no name. The facts are composed here from the record, after the
words, and pass through no translation, so no translation can change the
GPUs, versions, date or commit a line shows; what the words may say is the
interface rule's (gate/words.py).
"""

import json
import os
import platform
import subprocess
import sys
import time
import unicodedata
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from docutils import nodes

from extensions.interface_strings import _, offer
from extensions.recordings import recorded_facts
from extensions.result_headers import parse, unbacked
from site_layout import ROOT

# (kind of result, recorded) -> what the line says before the facts; kind None: a block
# without a header line, labelled only on a page that shows recorded output.
WORDS = {
    ("real", False): "Real nn.DataParallel, run while this page was built:",
    ("real", True): "Real nn.DataParallel, recorded, not run by this build:",
    ("emulated", False): "GPUs emulated on the CPU, run while this page was built:",
    ("emulated", True): "GPUs emulated on the CPU, recorded, not run by this build:",
    ("gpu_processes", False): "A process per GPU, with nccl, run while this page was built:",
    ("gpu_processes", True): "A process per GPU, with nccl, recorded, not run by this build:",
    ("processes", False): "Processes on the CPU, run while this page was built:",
    ("processes", True): "Processes on the CPU, recorded, not run by this build:",
    (None, True): "Recorded, not run by this build:",
}
# The words before some of the facts (the others: PyTorch, CUDA, names).
GPUS, DRIVER, RECORDED_ON, COMMIT = "machine with", "driver", "recorded on", "commit"
LABELS = (GPUS, DRIVER, RECORDED_ON, COMMIT)
SEPARATOR = " · "


def _git_commit():
    """The checkout's commit (short), with "+changes" if the tree differs from it."""
    if os.environ.get("DP_SOURCE_COMMIT"):
        return os.environ["DP_SOURCE_COMMIT"]  # set by make outputs for its scratch copy
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=7", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "examples", "conf"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


def _installed(package):
    """The installed release of *package*, or None."""
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def execution_facts():
    """What produced an example's output on this machine, now.

    PyTorch's CUDA and GPUs are read from the torch the examples imported; an
    example that never imported it used neither (and importing it only to
    ask would cost this process seconds): its record names the installed
    release, without CUDA or GPUs.
    """
    torch = sys.modules.get("torch")
    devices = range(torch.cuda.device_count()) if torch else ()
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    facts = {
        "date": time.strftime("%Y-%m-%d", time.gmtime(int(epoch) if epoch else None)),
        "commit": _git_commit(),
        "torch": torch.__version__ if torch else _installed("torch"),
        "python": platform.python_version(),
        "cuda": torch.version.cuda if torch else None,
        "driver": None,
        "gpus": [torch.cuda.get_device_name(i) for i in devices],
    }
    if facts["gpus"]:
        try:
            facts["driver"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()[0]
        except (OSError, subprocess.CalledProcessError, IndexError):
            pass
    return facts


def record(gallery_conf, fname, when):
    """Sphinx-Gallery ``reset_modules`` hook: after an example ran, write its record."""
    if fname is None or when != "after":
        return
    folders = gallery_conf["gallery_dirs"]
    gallery = Path(gallery_conf["src_dir"], folders if isinstance(folders, str) else folders[0])
    target = gallery / (Path(fname).stem + ".provenance.json")
    target.write_text(json.dumps(execution_facts(), indent=1, sort_keys=True) + "\n", "utf-8")


def facts_shown(facts, recorded):
    """[(label, value)] of an execution record, as a line shows them; a label in LABELS is
    translated, a value never is."""
    gpus = facts.get("gpus") or []
    shown = []
    if gpus:
        shown.append((GPUS, f"{len(gpus)} × {', '.join(sorted(set(gpus)))}"))
    shown.append(("PyTorch", facts.get("torch") or "?"))
    if gpus:
        shown += [("CUDA", facts.get("cuda") or "?"), (DRIVER, facts.get("driver") or "?")]
    if recorded:
        shown += [(RECORDED_ON, facts.get("date") or "?"), (COMMIT, facts.get("commit") or "?")]
    return shown


def note(header, facts, recorded):
    """The line above a result whose first line is *header*, or None for none.

    A block without a known header gets a line only on a page of recorded
    output; a header that claims GPUs *facts* do not list gets none
    (recordings.py refuses such a recording, and this machine's own facts
    list its GPUs).
    """
    found = parse(header)
    if found is not None and unbacked(*found, facts):
        return None
    kind = found[0] if found else None
    if (kind, recorded) not in WORDS:
        return None
    words = _(WORDS[kind, recorded])
    line = nodes.paragraph("", "", classes=["provenance"])
    line += nodes.inline("", words, classes=["provenance-words"])
    wide = unicodedata.east_asian_width(words[-1:] or " ") in "FW"  # "：" needs no space after it
    for number, (label, value) in enumerate(facts_shown(facts, recorded)):
        line += nodes.Text(SEPARATOR if number else "" if wide else " ")
        line += nodes.Text(f"{_(label) if label in LABELS else label} ")
        line += nodes.inline("", value, classes=["provenance-fact"])  # the record's, as it is
    return line


def _record_file(app, docname):
    """The execution record of a gallery page, or None for other pages."""
    if not docname.startswith(app.config.gallery_folder + "/"):
        return None
    return Path(app.srcdir, docname + ".provenance.json")


def note_record(app, doctree):
    """Re-read a gallery page when its execution record changes (a new recording)."""
    record_file = _record_file(app, app.env.current_document.docname)
    if record_file is not None and record_file.is_file():
        app.env.note_dependency(str(record_file))


def add_notes(app, doctree, docname):
    """Put a provenance line above each result block of a gallery page."""
    facts = recorded_facts(app, docname)  # a verified recording's (recordings.py)
    recorded = facts is not None
    if not recorded:
        record_file = _record_file(app, docname)
        if record_file is None or not record_file.is_file():
            return
        facts = json.loads(record_file.read_text("utf-8"))
    for block in list(doctree.findall(nodes.literal_block)):
        if "sphx-glr-script-out" not in block.get("classes", []):
            continue  # code, not output
        line = note(block.astext().split("\n", 1)[0].strip(), facts, recorded)
        if line is not None:
            block.parent.insert(block.parent.index(block), line)


def add_strings_for_translators(app, env):
    """In a gettext build, put the words into sphinx.pot like template strings."""
    offer(app, [*WORDS.values(), *LABELS], __file__)


def setup(app):
    """Add the lines to gallery pages; offer their words to translators."""
    app.connect("doctree-read", note_record)
    app.connect("doctree-resolved", add_notes)
    app.connect("env-updated", add_strings_for_translators)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
