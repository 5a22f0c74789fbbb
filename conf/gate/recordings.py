"""recordings: every committed GPU recording (conf/recordings/) still fits its example.

The build uses a committed recording only where it may (extensions/recordings.py,
:func:`~extensions.recordings.usable`: signed by a trusted key, well formed, made
from the example's current code cells), and CI fails on one it cannot use
(tests/test_outputs.py: "a committed recording went stale"). This check asks the
same question before any build: a prose edit keeps a recording, a code edit
makes it stale, reported at the example's first line of code that differs from
what was recorded (where that code is known: the kept file of a format-2
recording, else the recording's commit in git's history).
"""

import subprocess
import tempfile
from pathlib import Path

from sphinx_gallery.py_source_parser import split_code_and_text_blocks
from sphinx_gallery.utils import get_md5sum

from catalogs.po import shown
from extensions.recordings import (
    RecordingRefused,
    code_digest,
    recorded_source,
    trusted_keys,
    usable,
    verified,
)
from gate.findings import Problem, brief

CHECK = "recordings"
REFUSED = "the build will not use this committed recording, and CI fails (tests/test_outputs.py)"


def fixes(recording, name=None):
    """What to do about a committed *recording* the build no longer uses."""
    rec = shown(recording)
    page = f"{name}'s page" if name else "each page it recorded"
    return (
        "Record it again on a GPU with a key of conf/recording-keys.txt (make outputs KEY=key.pem;"
        f' docs/gpu.md, "Recordings") and commit that recording in its place, or remove it (git rm {rec}):'
        f" {page} then shows the output the build prints on its own machine (without GPUs, the CPU"
        " emulation's), with no recorded-on line"
    )


def _code_cells(path):
    """[(first line, [lines])] of the code cells of the example at *path*."""
    blocks = split_code_and_text_blocks(str(path))[1]
    return [(b.lineno, b.content.split("\n")) for b in blocks if b.type == "code"]


def _recorded_text(root, name, example, fmt):
    """The example file the recording's entry *example* was made from, where it is known for sure."""
    check = example.get("md5" if fmt == 2 else "code")
    kept = recorded_source(check) if fmt == 2 and isinstance(check, str) else None
    candidates = []
    if kept is not None and kept.is_file():
        candidates.append(kept.read_text("utf-8"))
    commit = (example.get("executed") or {}).get("commit")
    if isinstance(commit, str) and commit.isalnum():
        shown_file = subprocess.run(
            ["git", "show", f"{commit}:examples/{name}"], cwd=root, capture_output=True, text=True
        )
        if shown_file.returncode == 0:
            candidates.append(shown_file.stdout)
    for text in candidates:
        with tempfile.NamedTemporaryFile("w", suffix=".py", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            same = get_md5sum(file.name, mode="t") == check if fmt == 2 else code_digest(file.name) == check
            if same:
                return text
    return None


def first_difference(source, recorded_text):
    """(line of *source*, the recorded line there or None): where its code first differs from
    the code of *recorded_text*; None if the code cells are the same."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", encoding="utf-8") as file:
        file.write(recorded_text)
        file.flush()
        old = _code_cells(file.name)
    new = _code_cells(source)
    trimmed = [[(line, _trimmed(cell)) for line, cell in cells] for cells in (new, old)]
    return _first(*trimmed) or _first(new, old)  # (the digest counts blank lines too)


def _trimmed(lines):
    """*lines* without the blank lines at their end."""
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def _first(new, old):
    """(line, recorded line or None) where the code cells *new* first differ from *old*, or None."""
    for (line, now), (_, then) in zip(new, old):
        for i in range(max(len(now), len(then))):
            recorded = then[i] if i < len(then) else None
            if (now[i] if i < len(now) else None) != recorded:
                return line + min(i, len(now) - 1), recorded
    if len(new) > len(old):  # a new code cell: its first line of code
        line, cell = new[len(old)]
        return line + next((i for i, text in enumerate(cell) if text.strip()), 0), None
    if len(new) < len(old):  # a code cell removed: after the last one left
        return (new[-1][0] + len(new[-1][1]) - 1 if new else 1), None
    return None


def stale(root):
    """Yield a Problem for each committed recording of the project at *root* the build would not use."""
    root = Path(root)
    folder, examples = root / "conf" / "recordings", root / "examples"
    paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
    keys = trusted_keys(root / "conf" / "recording-keys.txt") if paths else []
    for path in paths:
        try:
            recording = verified(path, keys)
        except RecordingRefused as why:
            yield Problem(shown(path), 1, CHECK, f"{REFUSED}: {why}. {fixes(path)}.")
            continue
        for name, example in sorted(recording["examples"].items()):
            try:
                usable(name, example, recording["format"], examples)
            except RecordingRefused as why:
                yield _stale_example(root, path, recording, name, example, why)


def _stale_example(root, path, recording, name, example, why):
    """The Problem of a recording's entry for *name* that the build refuses *why*."""
    source = root / "examples" / name
    if not source.is_file() or Path(name).name != name:
        return Problem(shown(path), 1, CHECK, f"{REFUSED}: {why}. {fixes(path, name)}.")
    recorded = _recorded_text(root, name, example, recording["format"])
    difference = first_difference(source, recorded) if recorded is not None else None
    where, said = 1, f"{shown(path)} no longer fits this example ({why})"
    if difference is not None:
        where, then = difference
        was = f" (it recorded {brief(then)} here)" if then and then.strip() else ""
        said = f"the code differs from what {shown(path)} recorded{was}"
    fix = fixes(path, name)
    return Problem(
        shown(source), where, CHECK, f"{said}: {REFUSED}. Undo the change, or {fix[0].lower()}{fix[1:]}."
    )
