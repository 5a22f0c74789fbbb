"""Say, above each result, where it came from: real GPUs or emulation, recorded or run here.

When Sphinx-Gallery executes an example, :func:`record` (a ``reset_modules``
hook) writes ``<gallery>/<name>.provenance.json`` beside its page: when, from
which commit, with which PyTorch, Python, CUDA and driver, on which GPUs; a
page that shows recorded output (recordings.py) takes those facts from the
recording. Above each result block whose first line is a header the example
printed (result_headers.py), and above every block of a page of recorded
output, goes one line: words chosen by the header's kind, translated in
sphinx.po and holding no fact, then the facts, composed here from the record
and passed through no translation, so no catalog can change what they say.
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

from extensions.interface_strings import _, extract
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


def git_commit():
    """The checkout's commit (short), with "+changes" where examples/ or conf/ differ from it."""
    if os.environ.get("DP_SOURCE_COMMIT"):
        return os.environ["DP_SOURCE_COMMIT"]  # set by make outputs for its scratch copy
    try:
        git = ["git", "-C", str(ROOT)]
        head = subprocess.run(
            [*git, "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True, check=True
        )
        dirty = subprocess.run(
            [*git, "status", "--porcelain", "--", "examples", "conf"], capture_output=True, text=True
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def execution_facts():
    """What produced an example's output on this machine, now.

    CUDA and the GPUs are asked of the torch the examples imported; an example
    that never imported it (importing it only to ask would cost seconds) used
    neither, and its record names the installed release.
    """
    torch = sys.modules.get("torch")
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    try:
        installed = version("torch")
    except PackageNotFoundError:
        installed = None
    facts = {
        "date": time.strftime("%Y-%m-%d", time.gmtime(int(epoch) if epoch else None)),
        "commit": git_commit(),
        "torch": torch.__version__ if torch else installed,
        "python": platform.python_version(),
        "cuda": torch.version.cuda if torch else None,
        "driver": None,
        "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if torch else [],
    }
    if facts["gpus"]:
        query = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
        try:
            facts["driver"] = subprocess.run(
                query, capture_output=True, text=True, check=True
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
    """[(label, value)] of an execution record, as a line shows them (only LABELS are translated)."""
    gpus = facts.get("gpus") or []
    shown = [(GPUS, f"{len(gpus)} × {', '.join(sorted(set(gpus)))}")] if gpus else []
    shown.append(("PyTorch", facts.get("torch") or "?"))
    if gpus:
        shown += [("CUDA", facts.get("cuda") or "?"), (DRIVER, facts.get("driver") or "?")]
    if recorded:
        shown += [(RECORDED_ON, facts.get("date") or "?"), (COMMIT, facts.get("commit") or "?")]
    return shown


def note(header, facts, recorded):
    """The line above a result whose first line is *header*, or None.

    A header that claims GPUs *facts* do not list gets none (recordings.py
    refuses such a recording; this machine's own facts list its GPUs).
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


def record_file(app, docname):
    """The execution record of a gallery page, or None for other pages."""
    if docname.startswith(app.config.gallery_folder + "/"):
        return Path(app.srcdir, docname + ".provenance.json")
    return None


def note_record(app, doctree):
    """Read a gallery page again when its execution record changes (a new recording)."""
    found = record_file(app, app.env.current_document.docname)
    if found is not None and found.is_file():
        app.env.note_dependency(str(found))


def add_notes(app, doctree, docname):
    """Put a provenance line above each result block of a gallery page."""
    facts = recorded_facts(app, docname)  # a verified recording's (recordings.py)
    recorded = facts is not None
    if not recorded:
        found = record_file(app, docname)
        if found is None or not found.is_file():
            return
        facts = json.loads(found.read_text("utf-8"))
    for block in list(doctree.findall(nodes.literal_block)):
        if "sphx-glr-script-out" in block.get("classes", []):
            line = note(block.astext().split("\n", 1)[0].strip(), facts, recorded)
            if line is not None:
                block.parent.insert(block.parent.index(block), line)


def setup(app):
    """Add the lines to gallery pages; extract their words for translators."""
    app.connect("doctree-read", note_record)
    app.connect("doctree-resolved", add_notes)
    extract(app, [*WORDS.values(), *LABELS], __file__)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
