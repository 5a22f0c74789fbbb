"""Say, under each result, where it came from: real GPUs or emulation, recorded or run here.

When Sphinx-Gallery executes an example, :func:`record` (a ``reset_modules``
hook) writes ``<gallery>/<name>.provenance.json`` beside its page: when, from
which commit, with which PyTorch, Python, CUDA and driver, on which GPUs. A
recording made by ``make outputs`` carries those facts; a page that shows
recorded output (recordings.py) takes them from it.

Each result block of a tutorial starts with a header line the example prints
(result_headers.py): ``# 8 × NVIDIA H200 (real nn.DataParallel)``, ``# 8 GPUs
emulated on CPU``, ``# 2 processes on 2 × NVIDIA H200 (nccl)`` or ``# 8
processes on the CPU (gloo)``. Above every such block this extension puts one
sentence in the reader's language, made from the header's kind and count and
the execution record, for example "8 × NVIDIA H200, real nn.DataParallel;
recorded 2026-12-01 from commit abc1234 with PyTorch 2.13.0". The GPUs it
names are those of the record, never the header's words.
The sentences are interface strings: they are extracted into sphinx.pot and
translated in locale/<lang>/LC_MESSAGES/sphinx.po.
"""

import json
import os
import platform
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from docutils import nodes
from sphinx.util import logging

from site_extensions.interface_strings import _, offer
from site_extensions.recordings import recorded_facts
from site_extensions.result_headers import parse, unbacked
from site_layout import ROOT

logger = logging.getLogger(__name__)

# (kind, recorded) -> the sentence; placeholders are filled from the header and the record.
SENTENCES = {
    ("real", True): "%(count)s × %(model)s, real nn.DataParallel; recorded %(date)s from "
                    "commit %(commit)s with PyTorch %(torch)s, CUDA %(cuda)s, driver %(driver)s.",
    ("real", False): "%(count)s × %(model)s, real nn.DataParallel, run while this page was "
                     "built, with PyTorch %(torch)s, CUDA %(cuda)s, driver %(driver)s.",
    ("emulated", True): "%(count)s × GPU emulated on the CPU; recorded %(date)s from commit "
                        "%(commit)s with PyTorch %(torch)s.",
    ("emulated", False): "%(count)s × GPU emulated on the CPU, run while this page was built, "
                         "with PyTorch %(torch)s.",
    ("gpu_processes", True): "%(count)s × process, each on its own %(model)s, with nccl; "
                             "recorded %(date)s from commit %(commit)s with PyTorch %(torch)s, "
                             "CUDA %(cuda)s, driver %(driver)s.",
    ("gpu_processes", False): "%(count)s × process, each on its own %(model)s, with nccl, run "
                              "while this page was built, with PyTorch %(torch)s, CUDA %(cuda)s, "
                              "driver %(driver)s.",
    ("processes", True): "%(count)s × process on the CPU with %(backend)s; recorded %(date)s "
                         "from commit %(commit)s with PyTorch %(torch)s.",
    ("processes", False): "%(count)s × process on the CPU with %(backend)s, run while this "
                          "page was built, with PyTorch %(torch)s.",
}  # fmt: skip


def _git_commit():
    """The checkout's commit (short), with "+changes" if the tree differs from it."""
    if os.environ.get("DP_SOURCE_COMMIT"):
        return os.environ["DP_SOURCE_COMMIT"]  # set by make outputs for its scratch copy
    try:
        head = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "examples", "conf"],
                               cwd=ROOT, capture_output=True, text=True).stdout.strip()  # fmt: skip
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
                capture_output=True, text=True, check=True,
            ).stdout.split()[0]  # fmt: skip
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


def sentence(header, facts, recorded):
    """The provenance sentence for a result whose first line is *header*, or None.

    None too for a header that claims GPUs *facts* do not list: recordings.py
    refuses such a recording, and this machine's own facts list its GPUs.
    """
    found = parse(header)
    if found is None or unbacked(*found, facts):
        return None
    kind, fields = found
    if "model" in fields:  # the GPUs the record lists, not the header's words
        gpus = facts["gpus"][: int(fields["count"])]
        fields["model"] = ", ".join(sorted(set(gpus)))
    values = {**{key: value or "?" for key, value in facts.items()}, **fields}
    english = SENTENCES[kind, recorded]
    try:
        return _(english) % values
    except (KeyError, ValueError, TypeError) as err:
        logger.warning(f"the translation of {english!r} in sphinx.po has other placeholders"
                       f" than the English ({err}); the English is shown")  # fmt: skip
        return english % values


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
    """Put a provenance sentence above each result block of a gallery page."""
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
        text = sentence(block.astext().split("\n", 1)[0].strip(), facts, recorded)
        if text:
            note = nodes.paragraph("", text, classes=["provenance"])
            block.parent.insert(block.parent.index(block), note)


def add_strings_for_translators(app, env):
    """In a gettext build, put the sentences into sphinx.pot like template strings."""
    offer(app, SENTENCES.values(), __file__)


def setup(app):
    """Add the notes to gallery pages; offer their sentences to translators."""
    app.connect("doctree-read", note_record)
    app.connect("doctree-resolved", add_notes)
    app.connect("env-updated", add_strings_for_translators)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
