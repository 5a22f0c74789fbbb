"""Execute the examples once, anywhere; publish their output everywhere (make outputs).

Usage:
    python conf/build/outputs.py record [--shard K/N] [--out FILE]    make outputs
    (make html OUTPUTS="FILE-OR-URL ..." installs recordings; see install())

``record`` executes the examples (every one, or shard K of N) in a scratch copy
of this checkout, on this machine, and packs into one ``.tar.gz`` what
Sphinx-Gallery keeps of each (its page with the outputs, figures, downloads
and the checksum of the source it ran) plus the execution record written by
conf/sphinxext/provenance.py (real or emulated GPUs, device names, driver,
CUDA, PyTorch and Python versions, commit, date), and a ``manifest.json``.

``install`` puts recorded examples into ``docs/auto_examples/`` before a
build, so Sphinx-Gallery does not execute them: only an example whose
recorded checksum equals that of its current source; one whose source
changed since is executed by the build, as without a recording, and the log
says so. Shards merge. An unreadable file or a URL that cannot be fetched is
an error naming it, raised before anything is built.

Exit codes (record): 0 written, 1 an example failed, 2 bad usage.
"""

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conf/: languages and the packages
from build.project_copy import ROOT, copy_project  # noqa: E402

FORMAT = 1
GALLERY = Path("docs", "auto_examples")


class OutputsError(Exception):
    """A recording that cannot be used: unreadable, not ours, or not downloadable."""


class NotPublished(OutputsError):
    """A URL that answers, but has no recording (HTTP 404)."""


def md5(source):
    """Sphinx-Gallery's checksum of an example, the one it compares before executing."""
    from sphinx_gallery.utils import get_md5sum

    return get_md5sum(source, mode="t")


def example_files(gallery, stem):
    """The files Sphinx-Gallery (and provenance.py) keep for the example *stem*."""
    kept = [p for p in gallery.glob(f"{stem}.*") if p.is_file()]
    kept += gallery.glob(f"images/sphx_glr_{stem}_[0-9]*.*")
    kept += gallery.glob(f"images/thumb/sphx_glr_{stem}_thumb.*")
    return sorted(p.relative_to(gallery).as_posix() for p in kept)


def shard_of(examples, shard):
    """The examples of shard "K/N": every N-th, starting with the K-th."""
    match = re.fullmatch(r"(\d+)/(\d+)", shard or "1/1")
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise ValueError(f"SHARD={shard!r} is not K/N with 1 <= K <= N")
    k, n = int(match[1]), int(match[2])
    return [name for i, name in enumerate(sorted(examples)) if i % n == k - 1]


def source_commit():
    """The checkout's commit, with "+changes" when the examples or conf/ differ from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "examples", "conf"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()  # fmt: skip
    return head + ("+changes" if dirty else "")


def record(out, shard=None):
    """Execute the examples of *shard* in a scratch copy; write the recording to *out*."""
    names = shard_of([p.name for p in (ROOT / "examples").glob("*.py")], shard)
    commit = source_commit()
    with tempfile.TemporaryDirectory(prefix="dp-outputs-") as tmp:
        project = copy_project(Path(tmp) / "project", with_gallery=False)
        for example in (project / "examples").glob("*.py"):
            if example.name not in names:
                example.unlink()  # this shard executes only its own examples
        env = {k: v for k, v in os.environ.items() if k not in ("DP_BUILD_LOCK", "DP_COMMAND")}
        env["DP_SOURCE_COMMIT"] = commit
        # Only executing matters here: the other shards' pages are missing, so
        # their cross-references would warn; examples that fail still fail.
        cmd = [sys.executable, "-m", "sphinx", "-b", "dummy", "-q", "-c", "conf",
               "-d", str(Path(tmp) / "doctrees"), "docs", str(Path(tmp) / "out")]  # fmt: skip
        print(f"executing {len(names)} example(s): {', '.join(names)}", flush=True)
        start = time.monotonic()
        result = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True)
        if result.returncode != 0:  # an example failed, hung, or did not run
            print(result.stderr[-6000:], file=sys.stderr)
            return 1
        gallery = project / GALLERY
        manifest = {"format": FORMAT, "commit": commit, "shard": shard or "1/1",
                    "created": time.strftime("%Y-%m-%d", _now()), "examples": {}}  # fmt: skip
        for name in names:
            stem = name[:-3]
            record_file = gallery / f"{stem}.provenance.json"
            if not record_file.is_file():
                print(f"error: {name} did not run", file=sys.stderr)
                return 1
            facts = json.loads(record_file.read_text("utf-8"))
            facts["recorded"] = True
            record_file.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n", "utf-8")
            manifest["examples"][name] = {
                "md5": md5(project / "examples" / name),
                "files": example_files(gallery, stem),
                "executed": facts,
                "results": results((gallery / f"{stem}.rst").read_text("utf-8")),
            }
        write_archive(out, manifest, gallery)
    seconds = time.monotonic() - start
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB) in {seconds:.0f} s", flush=True)
    return 0


def results(page):
    """How each result block of a generated page was produced, from its header line."""
    from sphinxext.provenance import HEADERS

    found = []
    for line in page.splitlines():
        for kind, pattern in HEADERS.items():
            match = pattern.match(line.strip())
            if match:
                found.append({"kind": kind, **match.groupdict()})
    return found


def _now():
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    return time.gmtime(int(epoch) if epoch else None)


def write_archive(out, manifest, gallery):
    """Write *manifest* and the files it lists (under *gallery*) to the tar.gz *out*."""
    out.parent.mkdir(parents=True, exist_ok=True)
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    partial = out.with_name(out.name + ".partial")
    with tarfile.open(partial, "w:gz") as archive:

        def add(name, data):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), mtime, 0o644
            archive.addfile(info, io.BytesIO(data))

        add("manifest.json", json.dumps(manifest, indent=1, sort_keys=True).encode())
        for example in manifest["examples"].values():
            for name in example["files"]:
                add(f"gallery/{name}", (gallery / name).read_bytes())
    partial.replace(out)


def fetch(source, cache):
    """Return a local path for *source*: the file itself, or a URL downloaded into *cache*."""
    if not re.match(r"^https?://", source):
        path = Path(source)
        if not path.is_file():
            raise OutputsError(f"{source}: no such recording")
        return path
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / re.sub(r"[^\w.-]", "_", source)[-120:]
    try:
        with urllib.request.urlopen(source, timeout=60) as response:
            target.write_bytes(response.read())
    except urllib.error.HTTPError as err:
        kind = NotPublished if err.code == 404 else OutputsError
        raise kind(f"{source}: cannot download the recording (HTTP {err.code})") from err
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", None) or err
        raise OutputsError(f"{source}: cannot download the recording ({reason})") from err
    return target


def read(path, label):
    """Return (manifest, {member name: bytes}) of the recording at *path*."""
    try:
        with tarfile.open(path, "r:gz") as archive:
            members = {m.name: archive.extractfile(m).read() for m in archive if m.isfile()}
        manifest = json.loads(members.pop("manifest.json"))
    except (tarfile.TarError, EOFError, OSError, KeyError, ValueError) as err:
        raise OutputsError(f"{label}: not a readable recording ({err or type(err).__name__})") from err
    if manifest.get("format") != FORMAT or not isinstance(manifest.get("examples"), dict):
        raise OutputsError(f"{label}: not a recording made by make outputs (format {FORMAT})")
    for name, example in manifest["examples"].items():
        for file in example.get("files", []):
            if f"gallery/{file}" not in members or ".." in Path(file).parts or file.startswith("/"):
                raise OutputsError(f"{label}: {name}'s file {file} is missing or outside the gallery")
    return manifest, members


def install(sources, root=ROOT):
    """Install the recorded examples of *sources* that match their sources; return the report.

    Raises OutputsError before changing anything if any source cannot be used.
    """
    recordings = []
    for source in sources:
        path = fetch(source, root / "_build" / "outputs-cache")
        recordings.append((source, *read(path, source)))
    chosen = {}  # example -> (source, manifest, members): shards merge, later ones win
    for source, manifest, members in recordings:
        for name in manifest["examples"]:
            chosen[name] = (source, manifest, members)
    gallery = root / GALLERY
    report, changed = [], False
    for name in sorted(chosen):
        source, manifest, members = chosen[name]
        example = manifest["examples"][name]
        current = root / "examples" / name
        if not current.is_file():
            report.append(f"{name}: recorded in {source}, but no such example here: ignored")
            continue
        facts = example.get("executed", {})
        if example.get("md5") != md5(current):
            report.append(f"{name}: its source changed since it was recorded (commit "
                          f"{facts.get('commit', '?')}): executed by this build instead")  # fmt: skip
            continue
        for file in example["files"]:
            target = gallery / file
            data = members[f"gallery/{file}"]
            if not target.is_file() or target.read_bytes() != data:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                changed = True
        gpus = facts.get("gpus") or []
        where = f"{len(gpus)} × {gpus[0]}" if gpus else "no GPU"
        report.append(f"{name}: recorded output used (commit {facts.get('commit', '?')},"
                      f" {facts.get('date', '?')}, {where})")  # fmt: skip
    return report, changed


def published(templates, commit):
    """The first of the URL *templates* ({commit} filled in) that has a recording, or None."""
    cache = ROOT / "_build" / "outputs-cache"
    for template in templates.split():
        url = template.replace("{commit}", commit)
        try:
            fetch(url, cache)
        except NotPublished:
            print(f"--- no recording at {url} ---", flush=True)
            continue
        return url
    return None


def main(argv=None):
    """Parse the command line; record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["record"])
    parser.add_argument("--shard", default=None, help="K/N: execute every N-th example from K")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "outputs.tar.gz")
    args = parser.parse_args(argv)
    try:
        return record(args.out.resolve(), args.shard or None)
    except ValueError as err:
        parser.error(str(err))


if __name__ == "__main__":
    sys.exit(main())
