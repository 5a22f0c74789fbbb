"""Execute the examples once, anywhere, and record what they printed, signed (make outputs).

``record`` executes the examples (all, or shard K of N) in a scratch copy of
this checkout and writes, for each, the digest of its code cells, the text each
cell printed and how it was produced (extensions/provenance.py), signed with the
Ed25519 key ``--key`` or unsigned for ``sign`` to sign elsewhere. What a build
accepts of a recording is extensions/recordings.py's; :func:`fetch` reads one
for it from a file or a URL. ``keygen`` writes a new private key and prints the
public line for ``conf/recording-keys.txt``.
"""

import argparse
import base64
import hashlib
import json
import os
import re
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from checkout_lock import outside_env
from site_layout import BUILD, ROOT, copy_project, write_if_changed
from extensions.provenance import git_commit
from extensions.recordings import FORMAT, MAX_FILE, code_digest, sign


class OutputsError(Exception):
    """A recording that cannot be fetched."""


class NotPublished(OutputsError):
    """A URL that answers, but has no recording (HTTP 404)."""


def shard_of(examples, shard):
    """The examples of shard "K/N": every N-th, starting with the K-th."""
    match = re.fullmatch(r"(\d+)/(\d+)", shard or "1/1")
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise ValueError(f"SHARD={shard!r} is not K/N with 1 <= K <= N")
    k, n = int(match[1]), int(match[2])
    return [name for i, name in enumerate(sorted(examples)) if i % n == k - 1]


def record(out, key=None, shard=None):
    """Execute the examples of *shard* in a scratch copy; write the recording to *out*.

    Signed with the private key *key*, or unsigned (plain JSON) without one.
    """
    if key is not None and not Path(key).is_file():
        raise ValueError(f"{key}: no signing key (make outputs KEY=path; docs/gpu.md, 'Recordings')")
    names = shard_of([p.name for p in (ROOT / "examples").glob("*.py")], shard)
    commit = git_commit()
    with tempfile.TemporaryDirectory(prefix="dp-outputs-") as tmp:
        project = copy_project(Path(tmp) / "project", with_gallery=False)
        for example in (project / "examples").glob("*.py"):
            if example.name not in names:
                example.unlink()  # this shard executes only its own examples
        env = outside_env(DP_SOURCE_COMMIT=commit, PYTHONPATH=str(project / "conf"))
        cells = Path(tmp) / "cells.json"
        # Only executing matters here: the other shards' pages are missing, so
        # their cross-references would warn; examples that fail still fail.
        cmd = [
            sys.executable,
            "-m",
            "sphinx",
            "-b",
            "dummy",
            "-q",
            "-c",
            "conf",
            "-D",
            f"record_outputs_to={cells}",
        ]
        cmd += ["-d", str(Path(tmp) / "doctrees"), "docs", str(Path(tmp) / "out")]
        print(f"executing {len(names)} example(s): {', '.join(names)}", flush=True)
        start = time.monotonic()
        result = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True)
        if result.returncode != 0:  # an example failed, hung, or did not run
            print(result.stderr[-6000:], file=sys.stderr)
            return 1
        printed = json.loads(cells.read_text("utf-8"))
        gallery = project / "docs" / "auto_examples"
        recording = {
            "format": FORMAT,
            "commit": commit,
            "shard": shard or "1/1",
            "created": time.strftime(
                "%Y-%m-%d", time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH") or time.time()))
            ),
            "examples": {},
        }
        for name in names:
            facts_file = gallery / f"{name[:-3]}.provenance.json"
            if name not in printed or not facts_file.is_file():
                print(f"error: {name} did not run", file=sys.stderr)
                return 1
            recording["examples"][name] = {
                "code": code_digest(project / "examples" / name),
                "cells": printed[name],
                "executed": json.loads(facts_file.read_text("utf-8")),
            }
    text = sign(recording, key) if key else json.dumps(recording, indent=1, ensure_ascii=False)
    write_if_changed(out, text.encode("utf-8"))
    seconds = time.monotonic() - start
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB) in {seconds:.0f} s", flush=True)
    return 0


def sign_file(path, key):
    """Sign the unsigned recording *path* (``record`` without a key) in place with *key*."""
    if not Path(key).is_file():
        raise ValueError(f"{key}: no signing key")
    try:
        recording = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"{path}: not a recording ({err})") from None
    if not isinstance(recording, dict) or recording.get("format") != FORMAT or "signature" in recording:
        raise ValueError(f"{path}: not an unsigned recording of format {FORMAT}")
    write_if_changed(path, sign(recording, key).encode("utf-8"))
    print(f"signed {path}", flush=True)
    return 0


def keygen(private):
    """Write a new Ed25519 private key to *private*; print its public line."""
    if private.exists():
        raise ValueError(f"{private} exists; not overwritten")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    private.touch(mode=0o600)
    private.write_bytes(pem)
    public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    print(f"{base64.b64encode(public).decode()}  # add this line to conf/recording-keys.txt")
    return 0


DEADLINE = 60.0  # seconds a download may take, however slowly the server sends


def _download(url, deadline=DEADLINE):
    """At most MAX_FILE + 1 bytes of *url*, within *deadline* seconds in all."""
    end = time.monotonic() + deadline
    data = bytearray()
    with urllib.request.urlopen(url, timeout=min(deadline, 15)) as response:
        while len(data) <= MAX_FILE:
            if time.monotonic() > end:
                raise OutputsError(f"{url}: took longer than {deadline:g} s; not used")
            chunk = response.read1(65536)
            if not chunk:
                break
            data += chunk
    return bytes(data)


def fetch(source, cache, deadline=DEADLINE):
    """Return a local copy of the recording *source* (a file or an http(s) URL) in *cache*.

    The copy is named by its checksum, so a build's inputs change exactly when
    a recording's content does. At most MAX_FILE bytes are read, and a
    download takes at most *deadline* seconds, however slowly a server sends.
    """
    try:
        if re.match(r"^https?://", source):
            data = _download(source, deadline)
        else:  # a plain file only: a pipe or a device would never end
            with open(os.open(source, os.O_RDONLY | os.O_NONBLOCK), "rb") as file:
                if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                    raise OutputsError(f"{source}: not a plain file; not used")
                data = file.read(MAX_FILE + 1)
    except urllib.error.HTTPError as err:
        kind = NotPublished if err.code == 404 else OutputsError
        raise kind(f"{source}: cannot download the recording (HTTP {err.code})") from err
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", None) or getattr(err, "strerror", None) or err
        raise OutputsError(f"{source}: cannot read the recording ({reason})") from err
    if len(data) > MAX_FILE:
        raise OutputsError(f"{source}: larger than {MAX_FILE // 2**20} MiB; not used")
    target = cache / f"{hashlib.sha256(data).hexdigest()[:32]}.json"
    write_if_changed(target, data)  # named by its digest: written once
    return target


def published(templates, commit, cache):
    """(URL, local copy) of the first of the URL *templates* ({commit} filled in) that has one."""
    for template in templates.split():
        url = template.replace("{commit}", commit)
        try:
            return url, fetch(url, cache)
        except NotPublished:
            print(f"--- no recording at {url} ---", flush=True)
    return None


def main(argv=None):
    """Parse the command line; record, or make a key."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="execute the examples and record their output")
    rec.add_argument(
        "--key",
        type=Path,
        default=None,
        help="the Ed25519 private key (PEM); without it, an unsigned recording",
    )
    rec.add_argument("--shard", default=None, help="K/N: execute every N-th example from K")
    rec.add_argument("--out", type=Path, default=BUILD / "outputs.json")
    signing = commands.add_parser("sign", help="sign an unsigned recording in place")
    signing.add_argument("--key", type=Path, required=True, help="the Ed25519 private key (PEM)")
    signing.add_argument("file", type=Path)
    gen = commands.add_parser("keygen", help="write a new signing key; print its public line")
    gen.add_argument("private", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "keygen":
            return keygen(args.private)
        if args.command == "sign":
            return sign_file(args.file, args.key)
        return record(args.out.resolve(), args.key, args.shard or None)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
