"""Recorded example output is data: verified, matched to its source, and shown as text.

A build given recordings (``-D recordings=FILE,...``, from build/site.py: the
committed ``conf/recordings/``, then ``make html OUTPUTS=...`` or
``DP_OUTPUTS_URL``) still executes every example itself: from a recording it
takes only the text the cells printed, as text nodes, and only for an example
whose recording is signed by a key of ``conf/recording-keys.txt``, is well
formed and within the limits below, was made from the example's current code
(:func:`changed_since_recorded`), has one entry per code cell of the page, and
claims in its results' headers no GPU its signed facts do not list
(result_headers.py). Otherwise the build says why in one line.
"""

import base64
import binascii
import hashlib
import json
import re
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from docutils import nodes
from sphinx.util import logging
from sphinx_gallery.py_source_parser import split_code_and_text_blocks
from sphinx_gallery.utils import get_md5sum

from extensions.example_guard import example_of
from extensions.result_headers import parse, unbacked
from site_layout import CONF
from gate.words import controls

logger = logging.getLogger(__name__)

FORMAT = 3  # what make outputs writes; 2 is still read (whole-file checksum)
SOURCE_CHECKS = {2: "md5", 3: "code"}  # format -> the entry's key that ties it to the source
MAX_FILE = 8 * 2**20  # bytes of a recording file
MAX_CELL = 2**20  # characters one cell may have printed
MAX_CELLS = 500  # code cells of one example
MAX_FACT = 200  # characters of one provenance fact
FACTS = {"date", "commit", "torch", "python", "cuda", "driver", "gpus"}
KEYS_FILE = CONF / "recording-keys.txt"
COMMITTED = CONF / "recordings"  # reviewed recordings every build uses (docs/gpu.md, "Recordings")
RECORDED_SOURCES = COMMITTED / "sources"  # the files format-2 recordings were made from


class RecordingRefused(Exception):
    """A recording, or its entry for one example, that this build does not use."""


def committed():
    """The recordings committed in ``conf/recordings/``, in name order."""
    return sorted(str(path) for path in COMMITTED.glob("*.json"))


def code_digest(source):
    """SHA-256 of an example's code cells, in order: what its output depends on, not its prose."""
    _, blocks = split_code_and_text_blocks(str(source))[:2]
    digest = hashlib.sha256()
    for block in blocks:
        if block.type == "code":
            digest.update(block.content.encode() + b"\0")
    return digest.hexdigest()


def recorded_source(md5):
    """Where the file a format-2 recording was made from is kept: named by its signed checksum."""
    return RECORDED_SOURCES / f"{md5}.txt" if re.fullmatch(r"[0-9a-f]{32}", md5) else None


def changed_since_recorded(fmt, check, source, kept):
    """Why the example *source* is not the code a recording signed as *check*, or None.

    Format 3 signs :func:`code_digest`, so a prose edit keeps it valid. Format 2
    signed Sphinx-Gallery's checksum of the whole file: after an edit, the file
    it recorded must be *kept* (``conf/recordings/sources/<md5>.txt``, holding
    that checksum) to compare their code cells. Nothing unsigned is trusted.
    """
    if fmt != 2:
        return None if check == code_digest(source) else "its code changed since it was recorded"
    if check == get_md5sum(source, mode="t"):
        return None
    where = f"conf/recordings/sources/{check}.txt"
    if kept is None or not kept.is_file() or kept.is_symlink():
        return (
            "its source changed since it was recorded, and the file it recorded is not kept"
            f" in {where} to compare their code"
        )
    if kept.stat().st_size > MAX_FILE or get_md5sum(kept, mode="t") != check:
        return f"{where} is not the file it recorded (another checksum)"
    if code_digest(kept) != code_digest(source):
        return "its code changed since it was recorded"
    return None


def trusted_keys(path=KEYS_FILE):
    """The Ed25519 public keys of *path*: one base64 line each, ``#`` comments."""
    keys = []
    for line in Path(path).read_text("utf-8").splitlines() if Path(path).is_file() else []:
        line = line.split("#", 1)[0].strip()
        if line:
            keys.append(Ed25519PublicKey.from_public_bytes(base64.b64decode(line)))
    return keys


def sign(recording, private_key_file):
    """Return the signed file for the *recording* dict, with the PEM key at *private_key_file*."""
    key = load_pem_private_key(Path(private_key_file).read_bytes(), password=None)
    text = json.dumps(recording, indent=1, sort_keys=True, ensure_ascii=False)
    signature = base64.b64encode(key.sign(text.encode())).decode()
    return json.dumps({"recording": text, "signature": signature}, indent=1) + "\n"


def verified(path, keys):
    """Return the recording of the signed file *path*; raise RecordingRefused saying why."""
    path = Path(path)
    if not path.is_file():
        raise RecordingRefused("no such file")
    if path.stat().st_size > MAX_FILE:
        raise RecordingRefused(f"larger than {MAX_FILE // 2**20} MiB")
    if not keys:
        raise RecordingRefused(f"no trusted key in {KEYS_FILE.name} (docs/gpu.md, 'Recordings')")
    try:
        signed = json.loads(path.read_bytes())
        text, signature = signed["recording"], base64.b64decode(signed["signature"], validate=True)
        message = text.encode()
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error, RecursionError):
        raise RecordingRefused("not a signed recording made by make outputs") from None
    for key in keys:
        try:
            key.verify(signature, message)
            break
        except InvalidSignature:
            continue
    else:
        raise RecordingRefused("its signature is not from a trusted key")
    try:
        recording = json.loads(text)
    except (ValueError, RecursionError):
        raise RecordingRefused("not a signed recording made by make outputs") from None
    if not isinstance(recording, dict) or recording.get("format") not in SOURCE_CHECKS:
        raise RecordingRefused(f"not a recording of format {' or '.join(map(str, SOURCE_CHECKS))}")
    if not isinstance(recording.get("examples"), dict):
        raise RecordingRefused("it lists no examples")
    return recording


def _checked(name, example, fmt):
    """Return (source check, cells, facts) of a recording's *example* entry if well formed."""
    check, cells = example.get(SOURCE_CHECKS[fmt]), example.get("cells")
    facts = example.get("executed")
    if not isinstance(check, str) or not isinstance(cells, list) or not isinstance(facts, dict):
        raise RecordingRefused(f"{name}: its entry is not well formed")
    if len(cells) > MAX_CELLS or any(
        cell is not None and (not isinstance(cell, str) or len(cell) > MAX_CELL) for cell in cells
    ):
        raise RecordingRefused(f"{name}: its cells are not text within {MAX_CELL} characters")
    hidden = [c for cell in cells if cell for c in controls(cell)]
    if hidden:
        raise RecordingRefused(
            f"{name}: its cells hold invisible or direction-changing"
            f" characters ({', '.join(dict.fromkeys(hidden))[:80]})"
        )
    kept = {}
    for key, value in facts.items():
        values = value if key == "gpus" and isinstance(value, list) else [value]
        if key not in FACTS or not all(
            v is None or (isinstance(v, str) and len(v) <= MAX_FACT and v.isprintable()) for v in values
        ):
            raise RecordingRefused(f"{name}: its provenance holds {key!r} as {value!r:.40}")
        kept[key] = value
    for cell in cells:
        found = parse(cell.split("\n", 1)[0]) if cell else None
        why = found and unbacked(*found, kept)
        if why:
            raise RecordingRefused(f"{name}: a result's header claims GPUs its facts deny ({why})")
    return check, cells, kept


def usable(name, example, fmt, examples_dir):
    """Return (cells, facts) of a recording's entry *example* for the example *name* in
    *examples_dir*; raise RecordingRefused if this build may not use it (make check's
    recordings check asks the same: gate/recordings.py)."""
    source = Path(examples_dir, name)
    if Path(name).name != name or not source.is_file():
        raise RecordingRefused(f"{name}: no such example here")
    check, cells, facts = _checked(name, example, fmt)
    kept = recorded_source(check) if fmt == 2 else None
    why = changed_since_recorded(fmt, check, source, kept)
    if why:
        raise RecordingRefused(f"{name}: {why} (commit {facts.get('commit', '?')})")
    return cells, facts


def choose(paths, examples_dir, keys=None, labels=None):
    """Return ({example file name: (cells, facts)}, report lines) for the recordings *paths*.

    Later recordings win for the same example (shards merge). An example whose
    code changed since it was recorded is not chosen. The report names each
    recording by ``labels[path]`` (where it came from) if given.
    """
    keys = trusted_keys() if keys is None else keys
    chosen, report = {}, []
    for path in paths:
        label = (labels or {}).get(path, path)
        try:
            recording = verified(path, keys)
        except RecordingRefused as why:
            report.append(f"recording {label} not used: {why}; the examples show this build's output")
            continue
        for name, example in sorted(recording["examples"].items()):
            try:
                cells, facts = usable(name, example, recording["format"], examples_dir)
            except RecordingRefused as why:
                report.append(f"recording {label} not used for {why}; this build's output is shown")
                continue
            chosen[name] = (cells, facts)
            gpus = facts.get("gpus") or []
            where = f"{len(gpus)} × {gpus[0]}" if gpus else "no GPU"
            report.append(
                f"{name}: recorded output used ({label}; commit "
                f"{facts.get('commit', '?')}, {facts.get('date', '?')}, {where})"
            )
    return chosen, report


# -- In the build ----------------------------------------------------------------


def cells_of(doctree):
    """[[code block, its output block or None], ...] of a gallery page, in order."""
    cells = []
    for block in doctree.findall(nodes.literal_block):
        if "sphx-glr-script-out" in block["classes"]:
            if cells and cells[-1][1] is None:
                cells[-1][1] = block
        elif block.get("language") == "Python":  # Sphinx-Gallery's code cells
            cells.append([block, None])
    return cells


def recorded_facts(app, docname):
    """The provenance of the recorded output a page shows, or None."""
    source = example_of(app, docname)
    chosen = getattr(app, "dp_recorded", {})
    return chosen[source.name][1] if source is not None and source.name in chosen else None


def load(app):
    """Verify and choose the build's recordings, once, before any page is read."""
    app.dp_recorded, app.dp_cells = {}, {}
    paths = [p for p in app.config.recordings if p]
    if paths:
        app.dp_recorded, report = choose(paths, Path(app.srcdir, app.config.examples_folder))
        for line in report:
            logger.info(line)


def use_or_record(app, doctree):
    """Show a page's recorded output, or note what its cells printed (make outputs)."""
    docname = app.env.current_document.docname
    source = example_of(app, docname)
    if source is None:
        return
    cells = cells_of(doctree)
    if app.config.record_outputs_to:
        app.dp_cells[source.name] = [out.astext() if out is not None else None for _, out in cells]
        return
    if source.name not in app.dp_recorded:
        return
    recorded, _ = app.dp_recorded[source.name]
    if len(recorded) != len(cells):
        logger.info(
            f"recording not used for {source.name}: {len(recorded)} cells recorded, {len(cells)} on this page"
        )
        del app.dp_recorded[source.name]
        return
    for (code, output), text in zip(cells, recorded, strict=True):
        if output is not None:
            output.parent.remove(output)
        if text is not None:
            block = nodes.literal_block(text, text, classes=["sphx-glr-script-out"], language="none")
            code.parent.insert(code.parent.index(code) + 1, block)


def write_cells(app, exception):
    """In make outputs, write what every executed example's cells printed."""
    if exception is None and app.config.record_outputs_to:
        Path(app.config.record_outputs_to).write_text(json.dumps(app.dp_cells), "utf-8")


def setup(app):
    """Register the config values and the handlers."""
    app.add_config_value("recordings", [], "env", types=[list])
    app.add_config_value("record_outputs_to", "", "env", types=[str])
    app.connect("builder-inited", load)
    app.connect("doctree-read", use_or_record)
    app.connect("build-finished", write_cells)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
