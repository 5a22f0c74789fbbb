"""The header line an example prints above each result, saying where it ran, and what
the execution facts must back: ``# 8 × NVIDIA H200 (real nn.DataParallel)``,
``# 8 GPUs emulated on CPU``, ``# 2 processes on 2 × NVIDIA H200 (nccl)``,
``# 2 processes on the CPU (gloo)``."""

import re

HEADERS = {
    "real": re.compile(r"^# (?P<count>\d+) × (?P<model>.+) \(real nn\.DataParallel\)$"),
    "emulated": re.compile(r"^# (?P<count>\d+) GPUs? emulated on CPU$"),
    "gpu_processes": re.compile(r"^# (?P<count>\d+) process(?:es)? on (?P=count) × (?P<model>.+) \(nccl\)$"),
    "processes": re.compile(r"^# (?P<count>\d+) process(?:es)? on the CPU \((?P<backend>\w+)\)$"),
}
# The kinds whose header names GPUs that must have been there.
ON_GPUS = {"real", "gpu_processes"}


def parse(header):
    """Return (kind, the header's fields) for a result's first line, or None."""
    for kind, pattern in HEADERS.items():
        match = pattern.match(header)
        if match:
            return kind, match.groupdict()
    return None


def unbacked(kind, fields, facts):
    """Why a header of *kind* claims GPUs that *facts* do not list, or None."""
    if kind not in ON_GPUS:
        return None
    gpus = facts.get("gpus") or []
    count = int(fields["count"])
    if count > len(gpus):
        return f"it claims {count} GPU(s), its facts list {len(gpus)}"
    if not set(fields["model"].split(", ")) <= set(gpus):
        return f"it claims {fields['model']!r:.60}, its facts list {sorted(set(gpus))!r:.80}"
    return None
