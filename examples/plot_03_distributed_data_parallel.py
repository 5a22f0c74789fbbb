"""
.. _ddp-tutorial:

Train with ``DistributedDataParallel``
======================================

``nn.DataParallel`` drives every GPU from one Python process. PyTorch
recommends ``DistributedDataParallel`` (DDP) instead: one process per device,
each with its own copy of the model and its own share of the data, kept in
step by averaging their gradients in every backward pass. This page trains
the model and the data of the :ref:`DataParallel tutorial
<dataparallel-tutorial>` with DDP and shows what each process does with 1, 2,
3 and 8 processes.

The outputs below are real: the script started that many processes on the
machine that ran it, the one that built this site unless the line above a
result says it was recorded on another. However it is started, each
process trains on a GPU of its own, with the ``nccl`` backend, when the
machine has at least one GPU per process; otherwise all of them train on the
CPU, with the ``gloo`` backend, and say so. The line above each result says
which it was. The page is written for PyTorch 2.13; the first output shows
the version that ran it.
"""


# %%
# Imports and parameters
# ----------------------
#
# The numbers are those of the DataParallel tutorial: vectors of 5 numbers in,
# 2 out, 100 samples, batches of 30.

import math
import os
import socket
import sys

import torch
import torch._dynamo  # before any process group exists: see the last section
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

if __name__ == "__main__":  # not again in each process the page starts
    print("PyTorch", torch.__version__)

input_size = 5
output_size = 2

batch_size = 30
data_size = 100

# %%
# The same data and the same model
# --------------------------------
#
# The dataset holds ``data_size`` random vectors. Every process must build
# exactly the same dataset, because each one will pick its share of it by
# index; the fixed seed makes sure of that.


class RandomDataset(Dataset):
    """``length`` random vectors of ``size`` numbers each."""

    def __init__(self, size, length):
        self.len = length
        self.data = torch.randn(length, size)

    def __getitem__(self, index):
        return self.data[index]

    def __len__(self):
        return self.len


_ = torch.manual_seed(0)  # the same data in every process and on every build
dataset = RandomDataset(input_size, data_size)

# %%
# The model is one linear layer that prints the sizes it sees. The dataset has
# no labels, so the training below uses a stand-in loss, the mean square of
# the outputs, and plain SGD.


class Model(nn.Module):
    """One linear layer that prints the sizes it sees."""

    def __init__(self, input_size, output_size):
        super().__init__()
        self.fc = nn.Linear(input_size, output_size)

    def forward(self, input):
        output = self.fc(input)
        print("\tIn Model: input size", input.size(), "output size", output.size())
        return output


def loss_fn(output):
    """Stand-in loss: the mean square of the outputs."""
    return output.pow(2).mean()


learning_rate = 0.1

# %%
# What every process runs
# -----------------------
#
# With DDP, the *same* function runs in every process, and the processes
# differ only by their **rank**, a number from 0 to ``WORLD_SIZE - 1``. A
# launcher starts the processes and tells each one who it is through
# environment variables. These are the ones this script and
# ``init_process_group`` read:
#
# ``RANK``
#     This process's number among all processes, on all machines.
# ``LOCAL_RANK``
#     Its number on this machine; it picks the GPU: ``cuda:LOCAL_RANK``.
# ``LOCAL_WORLD_SIZE``
#     How many processes run on this machine.
# ``WORLD_SIZE``
#     How many processes there are in all.
# ``MASTER_ADDR`` and ``MASTER_PORT``
#     Where the processes meet: the address and port of a small key-value
#     store through which they find each other (the *rendezvous*).
#
# ``dist.init_process_group(backend)`` reads ``RANK``, ``WORLD_SIZE``,
# ``MASTER_ADDR`` and ``MASTER_PORT`` and joins the group. It does not read
# ``LOCAL_RANK``: your code uses it to pick the GPU, and so does
# ``init_device_mesh`` (the device mesh of FSDP2 and tensor parallelism),
# which makes ``cuda:LOCAL_RANK`` the current device when CUDA has not yet
# been initialised in the process. The backend carries the gradients
# between processes: ``nccl`` between GPUs, ``gloo`` between CPU processes.
# ``dist.destroy_process_group()`` leaves the group at the end. The training
# itself is in a separate function, so the DDP model it builds is freed
# *before* the group is destroyed: in our runs with PyTorch 2.13 and 8
# ``gloo`` processes on 2 CPU cores, freeing the model after the group was
# gone hung about one run in four, and never in the order used here. What
# ``init_process_group`` waits for, and why the script imports
# ``torch._dynamo`` first, are explained at the end of the page
# (:ref:`ddp-details`).
#
# NCCL cannot put two processes on one GPU, so ``device_for_this_process``
# gives each process the GPU of its ``LOCAL_RANK`` only when the machine has
# a GPU for each of its ``LOCAL_WORLD_SIZE`` processes. Otherwise every
# process uses the CPU and ``gloo``, and rank 0 says why; each of them also
# hides the machine's GPUs from itself, by setting ``CUDA_VISIBLE_DEVICES``
# to an empty string before anything in it starts CUDA, so that no library
# that uses CUDA whenever it is available opens a context on the first GPU
# in it (Distributed Checkpoint's save would, in the :ref:`FSDP2 tutorial
# <fsdp2-tutorial>`). It counts the GPUs
# with ``torch.cuda.device_count()``, which asks NVIDIA's management library
# (NVML) when it can and then leaves CUDA uninitialised;
# ``torch.cuda.is_available()`` initialises the CUDA driver, and a process
# forked after that cannot use CUDA (PyTorch calls this "poison fork"). The
# device is chosen, and made current, before the group is created;
# ``device_id`` gives NCCL the process's GPU at once.


def device_for_this_process():
    """``cuda:LOCAL_RANK`` if this machine has a GPU for each of its processes, else the CPU."""
    if torch.cuda.device_count() >= int(os.environ["LOCAL_WORLD_SIZE"]):
        return torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    return torch.device("cpu")


def run_rank(per_process_batch_size):
    """Be one process of the group: join it, train for one epoch, leave it."""
    device = device_for_this_process()
    gpus = torch.cuda.device_count()
    if device.type == "cpu" and gpus:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # no GPU for this process, before CUDA starts
        if os.environ["RANK"] == "0":
            print(f"{os.environ['LOCAL_WORLD_SIZE']} processes on this machine and {gpus} GPU"
                  f"{'s' if gpus > 1 else ''}: NCCL needs a GPU per process, so all of them"
                  " use the CPU and gloo")
    if device.type == "cuda":
        torch.cuda.set_device(device)
        dist.init_process_group("nccl", device_id=device)
    else:
        dist.init_process_group("gloo")
    try:
        return train(per_process_batch_size, device)
    finally:
        dist.destroy_process_group()


# %%
# Inside ``train``, three things differ from single-device training:
#
# * The model is wrapped in ``DDP``. When it wraps the model, DDP copies rank
#   0's parameters and buffers to every process. Afterwards, each backward
#   pass averages the gradients over all processes, so every process takes
#   the same step, and by default rank 0's buffers (such as BatchNorm's
#   running statistics) are copied to every process again at the start of a
#   forward pass when the forward before it ran with gradients enabled:
#   :ref:`ddp-buffers` shows the rule and the arguments that change it.
# * A ``DistributedSampler`` gives each process its own share of the
#   samples, about ``data_size / WORLD_SIZE`` of them, shuffled the same way
#   everywhere. ``sampler.set_epoch(epoch)`` changes that shuffle from one
#   epoch to the next.
# * ``batch_size`` in the ``DataLoader`` is now **per process**. All processes
#   together consume ``WORLD_SIZE`` times as many samples per step: the
#   *global* batch. To keep the global batch near the 30 of the DataParallel
#   tutorial, each process loads ``ceil(30 / WORLD_SIZE)`` samples per step.
#
# The function also returns what it did (its GPU, if it had one, its samples,
# its batch sizes and its parameters after the first step), so that this
# page can say where each result came from and check it.


def train(per_process_batch_size, device, epochs=1):
    """Train a DDP-wrapped ``Model`` on this process's share of ``dataset``, on ``device``."""
    world_size = dist.get_world_size()
    _ = torch.manual_seed(0)  # DDP would copy rank 0's parameters anyway
    model = Model(input_size, output_size).to(device)
    model = DDP(model, device_ids=[device] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
    sampler = DistributedSampler(dataset)  # asks the group for rank and size
    loader = DataLoader(
        dataset, batch_size=per_process_batch_size, sampler=sampler
    )
    print(
        f"{dist.get_backend()} on {device}:"
        f" {len(sampler)} of {len(dataset)} samples;"
        f" batch size {per_process_batch_size} here,"
        f" global batch {per_process_batch_size * world_size}"
    )

    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else None
    done = {"gpu": gpu, "samples": [], "batch_sizes": [], "after_first_step": None}
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        done["samples"] = list(sampler)  # the loader's order this epoch
        for data in loader:
            input = data.to(device)
            output = model(input)
            print("Outside: input size", input.size(), "output_size", output.size())
            optimizer.zero_grad()
            loss_fn(output).backward()  # DDP averages the gradients here
            optimizer.step()
            done["batch_sizes"].append(len(input))
            if done["after_first_step"] is None:
                done["after_first_step"] = {
                    name: p.tolist() for name, p in model.module.named_parameters()
                }
    return done


def per_process_batch_size(world_size):
    """Samples per process and step, so that together they load ``batch_size``."""
    return math.ceil(batch_size / world_size)


# %%
# Starting the processes with ``torchrun``
# ----------------------------------------
#
# On a machine with N GPUs, start N copies of this script with ``torchrun``,
# which comes with PyTorch:
#
# .. code-block:: bash
#
#    torchrun --standalone --nproc-per-node=N plot_03_distributed_data_parallel.py
#
# ``torchrun`` starts the N processes, sets ``RANK``, ``LOCAL_RANK``,
# ``WORLD_SIZE``, ``MASTER_ADDR`` and ``MASTER_PORT`` in each (and more, such
# as ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``ROLE_RANK`` and
# ``TORCHELASTIC_RUN_ID``), runs the rendezvous store in its own process, and
# stops all of them if one fails.
# ``--standalone`` makes it run the store on a free port of this machine,
# which the operating system picks, so two jobs on one machine do not
# collide. In PyTorch 2.13 a single-machine ``torchrun`` does the same
# without ``--standalone`` unless you give it a port (``--master-port``) or a
# rendezvous endpoint; older releases
# used port 29500 by default, and a second job on the same machine failed.
# When it starts more than one process and you have not set
# ``OMP_NUM_THREADS``, ``torchrun`` sets it to 1 (with a warning), so that N
# processes do not each start one thread per CPU core.
#
# ``torchrun`` runs the whole file in every process. The cell below notices
# it was started that way (``LOCAL_RANK`` is set), trains as one process,
# on its own GPU when the machine has one for each process, and stops before
# the rest of the page. On a machine with fewer GPUs than ``--nproc-per-node``,
# or none, every process trains on the CPU with ``gloo``.
#
# Under ``torchrun`` each process prints to the terminal itself, so the
# processes' lines arrive in the order they are printed and can interleave;
# this page's outputs were collected process by process and are shown in rank
# order. ``torchrun --tee 3`` starts each line with the number of the process
# that printed it (``[default0]:``) and also writes each process's output to
# files of its own under ``--log-dir``; ``--local-ranks-filter 0`` shows only
# the lines of the process whose ``LOCAL_RANK`` is 0.

if __name__ == "__main__" and "LOCAL_RANK" in os.environ:
    world_size = int(os.environ["WORLD_SIZE"])
    run_rank(per_process_batch_size(world_size))
    sys.exit()

# %%
# Starting the processes from Python
# ----------------------------------
#
# Without ``torchrun``, PyTorch's way is ``torch.multiprocessing.spawn``
# (``mp.spawn``): it starts ``nprocs`` processes, calls a function in each
# with the process's index as its first argument, waits for all of them, and
# raises the error of one that fails. That function then does what
# ``torchrun`` would have done: it sets the variables ``init_process_group``
# reads. No launcher runs a rendezvous store here, so rank 0 hosts it, on
# ``MASTER_PORT``; ``spawn`` asks the operating system for a port that is
# free at that moment.


def spawn(world_size):
    """Train in ``world_size`` processes started by ``mp.spawn``, without ``torchrun``."""
    with socket.socket() as probe:  # bind to port 0: the system picks a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    args = (world_size, per_process_batch_size(world_size))
    mp.spawn(spawned_rank, args=args, nprocs=world_size)


def spawned_rank(rank, world_size, per_process_batch_size):
    """One process started by ``mp.spawn``: number it as ``torchrun`` would, then train."""
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size),
                      LOCAL_WORLD_SIZE=str(world_size))
    run_rank(per_process_batch_size)


# %%
# ``mp.spawn`` starts every process as a fresh Python interpreter that imports
# this file again, which is why the cells that do work sit under
# ``if __name__ == "__main__":``. A notebook has no file to import, so run it
# as a script, with the number of processes:
#
# .. code-block:: bash
#
#    python plot_03_distributed_data_parallel.py 2
#
# Given that number, the cell below starts the processes with ``spawn``, on
# a GPU each when the machine has that many and on the CPU otherwise, and
# stops before the rest of the page.

if __name__ == "__main__" and len(sys.argv) == 2 and sys.argv[1].isdigit():
    spawn(int(sys.argv[1]))
    sys.exit()

# %%
# .. _ddp-launcher:
#
# .. rst-class:: collapsed
#
# How this page starts its processes
# ----------------------------------
#
# The build of this page does not use ``mp.spawn``: each process it starts
# is a new interpreter that imports ``torch`` again, about three seconds on
# the build machine's two cores, and in a notebook there is no file for it
# to import. Its launcher, ``launch`` below, starts the processes with
# ``torch.multiprocessing.start_processes`` instead, sets in each the
# variables that ``spawn`` and ``spawned_rank`` set (``torchrun`` sets more),
# stops every process if one fails, and returns what each one printed and
# returned. So that a process that never arrives cannot hang the build, it
# also gives up after ``timeout`` seconds. A few details make it fast, and
# safe on a machine with GPUs:
#
# * **Start method.** Run as a file (``python
#   plot_03_distributed_data_parallel.py``, or the build, which runs it the
#   same way), the processes come from a *fork server*: a fresh Python
#   process, started once, that imports ``torch`` and the other large
#   modules this file uses, and then forks a copy of itself for each
#   process. Each copy starts in milliseconds, runs this file's definitions
#   (the cells that do work are under ``if __name__ == "__main__":``) and
#   then its share of the job. The process that
#   calls ``launch`` is never copied, and that matters on a machine with
#   GPUs. A process forked from one that had initialised CUDA cannot use
#   CUDA ("Cannot re-initialize CUDA in forked subprocess"). One forked from
#   a process that had run a backward pass fails at its own backward pass
#   ("Unable to handle autograd's threading in combination with fork-based
#   multiprocessing"): with GPUs present, the first backward pass starts a
#   thread per GPU for autograd, which a copy would not have. The fork
#   server has done neither. A notebook has no file to import, so there the
#   processes are copies of the notebook's own process, which works on a
#   machine without GPUs. On a machine with GPUs, a copy could use no GPU
#   once the notebook has called ``torch.cuda.is_available()``, the usual
#   first cell (it starts the CUDA driver, and
#   ``torch.cuda.is_initialized()`` still says ``False``), nor run a
#   backward pass, even on the CPU, once the notebook has run one; neither
#   can be seen from the notebook, so there ``launch`` refuses and says to
#   run the tutorial as a script or with ``torchrun``. Where Python has no
#   fork server (Windows), it *spawns* a fresh interpreter that imports this
#   file, as ``mp.spawn`` does; from a notebook there, ``launch`` says to run
#   the tutorial as a script.
# * **One thread per process.** Eight processes on a machine with a few cores
#   would each use a thread per core and get in each other's way, so each
#   child calls ``torch.set_num_threads(1)``. That limits ``torch``'s own
#   operations in that process to one thread. It is not the same as
#   ``torchrun``'s ``OMP_NUM_THREADS=1``, which every OpenMP library in a
#   process reads when it is loaded, and which every program the process
#   starts inherits; a child started by ``launch`` cannot use it, since its
#   OpenMP was loaded, with ``torch``, before the child existed.
# * **A port nobody else has.** The store is opened on port 0, so the
#   operating system picks a free port and holds it from then on: two runs on
#   one machine never meet. The store answers the children from a thread of
#   its own. In a notebook, where the children are copies of this process, a
#   child forked while that thread holds a lock can hang, so the children
#   are started *before* the store and learn its port through a queue. ``TORCHELASTIC_USE_AGENT_STORE=True``, which ``torchrun``
#   sets in the same situation (it is an internal variable, not a documented
#   API), makes ``init_process_group`` connect to this store instead of
#   opening one in rank 0. Releases from before late 2024 read it
#   differently: they also need ``TORCHELASTIC_RESTART_COUNT``, which
#   ``torchrun`` sets and so does this launcher.
# * **Output in rank order.** Each child collects what it prints and sends it
#   to the parent, which prints it line by line, tagged with the rank. Real
#   processes print at the same time, so their lines would otherwise
#   interleave in any order.

import contextlib
import gc
import io
import signal
import time

def start_method():
    """How ``launch`` starts processes here: from a fork server, spawned, or as copies of this one."""
    methods = mp.get_all_start_methods()
    if getattr(sys.modules["__main__"], "__file__", None):  # a script: they can import it
        return "forkserver" if "forkserver" in methods else "spawn"
    if "fork" not in methods:
        raise RuntimeError(
            "on this system the processes must import the script, and a"
            " notebook has none: run this tutorial as a script (python"
            " plot_03_distributed_data_parallel.py) or with torchrun"
        )
    if torch.cuda.device_count() > 0:  # NVML: asking starts no CUDA
        raise RuntimeError(
            "this machine has GPUs, and a copy of this notebook's process could"
            " use none of them once the notebook has called"
            " torch.cuda.is_available(), nor run a backward pass once the"
            " notebook has run one: run this tutorial as a script (python"
            " plot_03_distributed_data_parallel.py) or with torchrun"
        )
    return "fork"


def launch(world_size, target, args=(), timeout=60.0):
    """Run ``target(*args)`` in ``world_size`` processes, as ``torchrun`` would.

    Return one ``(output, value)`` pair per rank, in rank order. If a process
    fails, stop the others and raise its error; after ``timeout`` seconds,
    stop them all and raise ``TimeoutError``.
    """
    method = start_method()
    queues = mp.get_context(method)
    if method == "forkserver":  # what the fork server imports once, for every copy
        queues.set_forkserver_preload(["torch", "torch._dynamo", "torch.distributed",
                                       "matplotlib.pyplot"])
    ports, results = queues.SimpleQueue(), queues.SimpleQueue()
    children = mp.start_processes(
        _as_rank,
        args=(world_size, ports, results, target, args),
        nprocs=world_size,
        join=False,
        daemon=True,
        start_method=method,
    )
    reports, store = {}, None
    try:
        # Port 0: the operating system picks a free port.
        store = dist.TCPStore(
            "127.0.0.1", 0, is_master=True, wait_for_workers=False
        )
        for _ in range(world_size):
            ports.put(store.port)
        deadline = time.monotonic() + timeout
        # join() is True once all exited; it raises the first failure.
        while not children.join(timeout=0.1, grace_period=1):
            _collect(results, reports)
            if time.monotonic() > deadline:
                alive = [
                    rank
                    for rank, child in enumerate(children.processes)
                    if child.is_alive()
                ]
                raise TimeoutError(
                    f"DDP with {world_size} processes: rank(s) {alive} still"
                    f" running after {timeout:g} s (rendezvous at"
                    f" 127.0.0.1:{store.port}); stopped them all"
                )
    finally:
        for child in children.processes:
            child.kill()  # does nothing to those that have exited
            child.join()
        store = None  # stops the store's thread before anything is forked again
    _collect(results, reports)
    missing = sorted(set(range(world_size)) - set(reports))
    if missing:
        raise RuntimeError(f"rank(s) {missing} exited without reporting")
    return [reports[rank] for rank in range(world_size)]


def _collect(results, reports):
    """Move what the children sent into ``reports``, so the pipe never fills."""
    while not results.empty():
        rank, output, value = results.get()
        reports[rank] = (output, value)


def _as_rank(rank, world_size, ports, results, target, args):
    """Become rank ``rank``, as ``spawned_rank`` does; run ``target`` and report."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # die with the parent
    gc.freeze()  # what this copy started with, its garbage collector skips
    torch.set_num_threads(1)
    os.environ.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world_size),
        LOCAL_WORLD_SIZE=str(world_size),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(ports.get()),
        TORCHELASTIC_USE_AGENT_STORE="True",
        TORCHELASTIC_RESTART_COUNT="0",
    )
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        value = target(*args)
    results.put((rank, output.getvalue(), value))


# %%
# The last helper runs the tutorial's training in ``world_size`` processes:
# on a GPU each when the machine has that many, otherwise on its CPU.
# It first says how many processes ran and where, then sums up what they
# reported (how many samples each one got, how many of those were repeats,
# and the global batch of each step), then prints every process's lines.

runs = {}


def run_with(world_size):
    """Train with ``world_size`` processes; say where, sum up, then print their lines."""
    reports = launch(world_size, run_rank, (per_process_batch_size(world_size),))
    done = [value for _, value in reports]
    gpus = sorted({d["gpu"] for d in done if d["gpu"]})
    where = f"{world_size} × {', '.join(gpus)} (nccl)" if gpus else "the CPU (gloo)"
    print(f"# {world_size} process{'es' if world_size > 1 else ''} on {where}")
    counts = [len(d["samples"]) for d in done]
    distinct = len({sample for d in done for sample in d["samples"]})
    steps = zip(*(d["batch_sizes"] for d in done))
    print(
        f"samples: {' + '.join(map(str, counts))} = {sum(counts)},"
        f" {distinct} distinct, {sum(counts) - distinct} repeated"
    )
    print("global batches:", ", ".join(str(sum(step)) for step in steps))
    for rank, (output, _) in enumerate(reports):
        for line in output.expandtabs(4).splitlines():
            print(f"[rank {rank}] {line}")
    runs[world_size] = done


# %%
# .. rst-class:: gpu-tabs
#
# Results
# -------
#
# Each tab shows one epoch with that many processes. The first two lines sum
# up the samples each process got and the global batch of each step. Then
# every process prints a line about its share, and the sizes seen inside and
# outside the model for each of its batches. Unlike DataParallel, DDP splits
# nothing inside the model: each process already loaded its own batch, so the
# sizes inside and outside are the same.
#
# 1 process
# ^^^^^^^^^
#
# One process gets all 100 samples, in batches of 30, 30, 30 and 10, as in
# the DataParallel tutorial.

if __name__ == "__main__":
    run_with(1)

# %%
# 2 processes
# ^^^^^^^^^^^
#
# Each process gets 50 samples and loads 15 per step, so the global batches
# are 30, 30, 30 and 10 again.

if __name__ == "__main__":
    run_with(2)

# %%
# 3 processes
# ^^^^^^^^^^^
#
# 100 samples over 3 processes gives ``ceil(100 / 3) = 34`` each: 102 in all,
# 2 of them repeats. Each process loads 10 per step, so its last batch
# has 4 and the last global batch 12.

if __name__ == "__main__":
    run_with(3)

# %%
# 8 processes
# ^^^^^^^^^^^
#
# ``ceil(100 / 8) = 13`` samples each, 104 in all, 4 of them repeats. Thirty
# does not divide by 8 either: each process loads ``ceil(30 / 8) = 4`` per
# step, so the global batch is 32, and the last batches have 1 sample each.
# This model does not mind, but a ``BatchNorm1d`` layer would fail on them in
# training: each process normalises its own batch, and one row gives it one
# value per channel. ``DataLoader(..., drop_last=True)`` drops them.

if __name__ == "__main__":
    run_with(8)

# %%
# The same parameters everywhere after one step
# ---------------------------------------------
#
# DDP **averages** the gradients over the processes, where DataParallel
# **sums** the gradients of its replicas (see :ref:`dataparallel-in-depth`).
# For a model that treats every sample on its own, like this one, both give
# the gradient of the whole batch: DataParallel because it computes one loss
# on the gathered output, DDP because each process's loss is a mean over an
# equal share, and the mean of equal shares' means is the mean of the whole.
#
# The check below takes, for each run above, the samples of every process's
# first batch, trains a fresh copy of the model on all of them at once in a
# single process on the CPU, without DDP, and compares its parameters after
# that step with those every process reported. The single process sees the
# whole global batch. (It is started by this page's launcher, so that this
# page's own process never runs a backward pass: see :ref:`ddp-launcher`.)


def train_one_step(samples):
    """Take one SGD step with a fresh ``Model`` on ``samples``; return its parameters."""
    _ = torch.manual_seed(0)  # the same initial parameters as every rank
    model = Model(input_size, output_size)
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
    loss_fn(model(dataset.data[samples])).backward()
    optimizer.step()
    return {name: p.tolist() for name, p in model.named_parameters()}


if __name__ == "__main__":
    for world_size, done in runs.items():
        first = [s for d in done for s in d["samples"][: d["batch_sizes"][0]]]
        [(_, single)] = launch(1, train_one_step, (first,))
        ranks = [
            {name: torch.tensor(v) for name, v in d["after_first_step"].items()}
            for d in done
        ]
        identical = all(torch.equal(r[n], ranks[0][n]) for r in ranks for n in r)
        same = all(torch.allclose(ranks[0][n], torch.tensor(p)) for n, p in single.items())
        print(
            f"{world_size} process{'es' if world_size > 1 else ''}:"
            f" ranks identical: {identical}, equal to one process: {same}"
        )

# %%
# How ``DistributedSampler`` shares out the samples
# -------------------------------------------------
#
# Each process gets ``ceil(100 / WORLD_SIZE)`` samples: every
# ``WORLD_SIZE``-th sample of one shuffled order, starting at its rank. When
# 100 does not divide evenly, the sampler repeats the first few samples of
# that order to fill the gap, so that every process runs the same number of
# steps, which DDP needs (see :ref:`ddp-uneven`). ``DistributedSampler(...,
# drop_last=True)`` drops the leftover samples instead of repeating some.
# That is the sampler's ``drop_last``; the ``DataLoader``'s ``drop_last``
# drops each process's last, shorter batch.
#
# The sampler does not need running processes to show this; given
# ``num_replicas`` and ``rank`` explicitly, it just computes. Here is rank 0
# of 3 over three epochs, first without and then with ``set_epoch``:

if __name__ == "__main__":
    sampler = DistributedSampler(dataset, num_replicas=3, rank=0)
    for epoch in range(3):
        print(f"epoch {epoch}, no set_epoch:   {list(sampler)[:8]} ...")
    for epoch in range(3):
        sampler.set_epoch(epoch)
        print(f"epoch {epoch}, set_epoch({epoch}): {list(sampler)[:8]} ...")

# %%
# The same rule as a picture: the position of each sample in the shuffled
# order, coloured by the process that gets it, for 2, 3 and 8 processes.
# The hatched positions after the 100th are the repeated samples that make
# the shares equal.

try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
    print("matplotlib is not installed, so the figure is skipped.")

if __name__ == "__main__" and plt is not None:
    fig, ax = plt.subplots(figsize=(6.4, 2.4), layout="constrained")
    colours = plt.get_cmap("tab10").colors
    sizes = (2, 3, 8)
    for row, world_size in enumerate(sizes):
        total = len(DistributedSampler(dataset, num_replicas=world_size, rank=0)) * world_size
        for position in range(total):
            repeated = position >= len(dataset)
            ax.barh(row, 1, left=position, color=colours[position % world_size],
                    hatch="////" if repeated else None, edgecolor="white", linewidth=0.3)
    ax.set_yticks(range(len(sizes)), [f"{n} processes" for n in sizes])
    ax.invert_yaxis()
    ax.set_xlabel("position in the shuffled order (hatched: repeated)")
    ax.set_title("Which process gets each sample")
    plt.show()

# %%
# Without ``set_epoch`` every epoch repeats the same order.
#
# Several machines
# ----------------
#
# Nothing in ``train`` changes when the processes live on several machines.
# Start ``torchrun`` once on every machine, with the same arguments, and let
# its rendezvous put them together. For 2 machines with 4 GPUs each, where
# the first machine is reachable as ``10.0.0.1``:
#
# .. code-block:: bash
#
#    # on each of the 2 machines
#    torchrun --nnodes=2 --nproc-per-node=4 \
#        --rdzv-id=job42 --rdzv-backend=c10d --rdzv-endpoint=10.0.0.1:29400 \
#        plot_03_distributed_data_parallel.py
#
# ``--rdzv-backend c10d`` runs the rendezvous store on the endpoint's
# machine; ``--rdzv-id`` names the job, so that two jobs sharing an endpoint
# do not mix. The rendezvous then numbers the machines, and each machine's 4
# processes get consecutive ranks: ``RANK`` 0 to 3 on one machine and 4 to 7
# on the other, ``LOCAL_RANK`` 0 to 3 on both, and ``WORLD_SIZE`` 8. Which
# machine gets ranks 0 to 3 is up to the rendezvous; it need not be the one
# named in ``--rdzv-endpoint``. Code that must run once per job should test
# ``RANK == 0``, and once per machine ``LOCAL_RANK == 0``. Use the ``nccl``
# backend on GPUs, as the script does; it picks the fastest link it finds:
# NVLink or PCIe inside a machine, InfiniBand or TCP between machines. Every
# machine needs the same script and access to the same data, the machines
# must reach each other (on the endpoint's port, and on the ports the backend
# opens), and ``NCCL_SOCKET_IFNAME`` (or ``GLOO_SOCKET_IFNAME`` for ``gloo``)
# chooses the network interface when the default one is wrong.
#
# DataParallel or DistributedDataParallel
# ---------------------------------------
#
# .. list-table::
#    :header-rows: 1
#    :stub-columns: 1
#    :widths: 22 39 39
#
#    * - Aspect
#      - ``nn.DataParallel``
#      - ``DistributedDataParallel``
#    * - Processes
#      - One process, one thread per GPU
#      - One process per GPU, started by ``torchrun`` or
#        ``torch.multiprocessing``
#    * - GIL
#      - The threads share one GIL
#      - Each process has its own interpreter and GIL
#    * - Replication per step
#      - The model is copied to every GPU on every forward pass
#      - Rank 0's parameters and buffers are copied once, when the model is
#        wrapped; each process then updates its own copy
#    * - Buffers (BatchNorm statistics)
#      - Replica 0's updates reach the model; the other replicas' are lost
#      - By default, rank 0's buffers are copied to every process at the
#        start of a forward pass that follows one with gradients enabled
#    * - Data per step
#      - One batch, split across the GPUs inside ``forward``
#      - Each process loads its own batch, from its ``DistributedSampler``
#        share
#    * - Gradient reduction
#      - Replica gradients are **summed** into the model on the first GPU
#      - Gradients are **averaged** with all-reduce, overlapped with the
#        backward pass
#    * - Several machines
#      - No
#      - Yes: ``torchrun --nnodes …``
#    * - Speed
#      - Slower: the threads compete for the GIL, the model is copied on every
#        step, and inputs and outputs pass through the first GPU
#      - Usually faster: no GIL to share, no copies of the model per step,
#        and the gradient averaging overlaps the backward pass
#    * - Recommended
#      - No
#      - Yes, by PyTorch's documentation, even on a single machine
#
# What to remember
# ----------------
#
# * One process per device, all running the same code; ``RANK``,
#   ``LOCAL_RANK`` and ``WORLD_SIZE`` tell them apart.
# * ``init_process_group`` with ``nccl`` on GPUs and ``gloo`` on CPUs, and
#   ``destroy_process_group`` at the end, after the DDP model is gone.
# * A ``DistributedSampler`` per process, with ``set_epoch`` every epoch; it
#   repeats a few samples when the data does not divide evenly, so that every
#   process runs the same number of steps. Where they cannot, use
#   ``model.join()``, which scales the others' last steps down.
# * ``batch_size`` is per process; the global batch is ``WORLD_SIZE`` times
#   larger.
# * With BatchNorm, each process normalises its own batch. On GPUs,
#   ``nn.SyncBatchNorm.convert_sync_batchnorm(model)`` before wrapping makes
#   the statistics cover the global batch (DDP refuses it on the CPU).
# * Start it with ``torchrun --nproc-per-node=N``, on one machine or several.


# %%
# .. _ddp-details:
#
# Details
# -------
#
# The sections below show the rules behind some sentences above, most of
# them with a run of their own: two processes on the CPU with ``gloo``,
# whatever GPUs the machine has.
#
# .. _ddp-buffers:
#
# When DDP copies the buffers
# ^^^^^^^^^^^^^^^^^^^^^^^^^^^
#
# DDP copies rank 0's buffers to the other processes when it wraps the model
# and then, by default, at the start of the first forward pass and of every
# forward pass that follows one run with gradients enabled and outside
# ``model.no_sync()``. A forward pass run under ``torch.no_grad()``, as in
# evaluation, is itself synced after a training pass, but the one after it
# is not. In the cell
# below, two processes give a buffer their own values before each of four
# forward passes (rank 0 gives 10, 20, 30, 40; rank 1 gives 11, 21, 31, 41);
# the third pass follows an evaluation pass, and rank 1 keeps its own value
# there.

import contextlib
import datetime
import re
import textwrap
import time
import warnings


def with_marked_layer(report, *args):
    """Join the group and return ``report(layer, *args)`` for a layer with a buffer."""
    dist.init_process_group("gloo")
    try:
        layer = nn.Linear(input_size, output_size)
        layer.register_buffer("mark", torch.full((1,), float(dist.get_rank())))
        return report(layer, *args)
    finally:
        dist.destroy_process_group()


def marks_after_forwards(layer):
    """The buffer after each of four forward passes: train, evaluate, train, train."""
    model, seen = DDP(layer), []
    for step, training in enumerate((True, False, True, True), start=1):
        layer.mark.fill_(10 * step + dist.get_rank())
        with torch.set_grad_enabled(training):
            output = model(dataset.data[:4])
        if training:
            loss_fn(output).backward()
        seen.append(int(layer.mark.item()))
    return seen


if __name__ == "__main__":
    passes = ("training", "evaluation", "training", "training")
    ranks = [value for _, value in launch(2, with_marked_layer, (marks_after_forwards,))]
    for step, (kind, mark_0, mark_1) in enumerate(zip(passes, *ranks), start=1):
        synced = "copied from rank 0" if mark_1 == mark_0 else "its own"
        print(f"forward {step} ({kind:<10}): rank 0 has {mark_0}, rank 1 has {mark_1}: {synced}")

# %%
# ``forward_sync_buffers=False`` turns the copies at forward passes off. In
# PyTorch 2.13 the older argument ``broadcast_buffers`` still exists and is
# deprecated, and the two differ when the model is wrapped:
# ``broadcast_buffers=False`` leaves the buffers out of the first copy as
# well, while ``forward_sync_buffers=False`` still copies them then. Here
# rank 1 sets the buffer to 1 before wrapping and to 11 before a forward
# pass, and the lines under the table show the ``FutureWarning`` that each
# way of wrapping gave, if any:


def marks_with(layer, options):
    """Wrap with ``options``; the buffer after wrapping and after one forward
    pass, and the deprecation warnings that wrapping gave."""
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always", FutureWarning)
        model = DDP(layer, **options)
    at_wrap = int(layer.mark.item())
    layer.mark.fill_(10 + dist.get_rank())
    loss_fn(model(dataset.data[:4])).backward()
    deprecated = [str(w.message) for w in warned if issubclass(w.category, FutureWarning)]
    return at_wrap, int(layer.mark.item()), deprecated


if __name__ == "__main__":
    print("rank 1's buffer             after wrapping   after a forward pass")
    warnings_given = {}
    for options in ({}, {"forward_sync_buffers": False}, {"broadcast_buffers": False}):
        _, (at_wrap, at_forward, deprecated) = launch(
            2, with_marked_layer, (marks_with, options)
        )[1]
        name = ", ".join(f"{key}={value}" for key, value in options.items()) or "(default)"
        print(f"{name:<27} {at_wrap:<16} {at_forward}")
        warnings_given[name] = deprecated
    for name, deprecated in warnings_given.items():
        for message in deprecated or ["no FutureWarning"]:
            print(textwrap.fill(f"{name}: {message}", width=79, subsequent_indent="    "))

# %%
# .. _ddp-uneven:
#
# When one process has an extra batch
# ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
#
# If the processes do not all run the same number of steps, the one with an
# extra batch waits in the gradient averaging for the others, which are not
# coming. It does not wait forever: after the group's timeout (by default 30
# minutes with ``gloo``, 10 with ``nccl``) the operation fails. With ``gloo``
# it raises an exception in the process that waited, which can catch it, as
# the cell below does. With ``nccl`` a watchdog thread aborts the operation
# and ends the whole process, because the GPUs' work runs asynchronously and
# going on could use corrupted data; by default no ``try`` can catch that. The cell
# shows it with 2 processes and a timeout of 3 seconds: rank 0 trains on 3
# batches, rank 1 on 2 and then waits for rank 0 before leaving. Inside
# ``with model.join():``, a process that has run out of batches keeps taking
# part in the others' averaging until all are done, and both finish.


def uneven_epoch(use_join):
    """Train rank 0 on one batch more than the others; say how it ended."""
    group = dist.new_group(timeout=datetime.timedelta(seconds=3))
    model = DDP(nn.Linear(input_size, output_size), process_group=group)
    alone = nn.Linear(input_size, output_size)  # the same layer, outside DDP
    alone.load_state_dict(model.module.state_dict())
    batches = 3 if dist.get_rank() == 0 else 2
    start, failure, scales = time.monotonic(), None, []
    try:
        with model.join() if use_join else contextlib.nullcontext():
            for _ in range(batches):
                model.zero_grad()
                loss_fn(model(dataset.data[:4])).backward()
                own = torch.autograd.grad(loss_fn(alone(dataset.data[:4])), alone.weight)[0]
                averaged = model.module.weight.grad
                scales.append((torch.sum(averaged * own) / torch.sum(own * own)).item())
    except RuntimeError as error:
        failure = str(error).split("] ")[-1]  # without gloo's source location
    ending = f"stopped after {time.monotonic() - start:.0f} s: {failure}" if failure else "finished"
    return f"{batches} batches, {ending}", scales


def run_uneven(use_join):
    """Be one process of a group that runs ``uneven_epoch``."""
    dist.init_process_group("gloo")
    try:
        ending = uneven_epoch(use_join)
        dist.barrier()  # the processes leave together
        return ending
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    for use_join in (False, True):
        print("with model.join():" if use_join else "without join:")
        reports = launch(2, run_uneven, (use_join,))
        for rank, (_, (ending, _)) in enumerate(reports):
            print(f"  rank {rank}: {ending}")
    scales = ", ".join(f"{scale:.2f}" for scale in reports[0][1][1])
    print("rank 0's gradient at each step, as a multiple of its own:", scales)

# %%
# A process that has joined takes part with zero gradients, and the average
# still divides by the number of processes. Both ranks train on the same
# samples here, so their average is rank 0's own gradient in the first two
# steps; in the third, rank 1 has joined, and rank 0's gradient is halved.
# ``model.join(divide_by_initial_world_size=False)`` divides by the number of
# processes still training instead.
#
# .. _ddp-init-waits:
#
# What ``init_process_group`` waits for
# ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
#
# ``init_process_group`` has no barrier of its own unless
# ``TORCH_DIST_INIT_BARRIER=1`` is set. It waits where the rendezvous and the
# backend make it wait. When rank 0 hosts the store, as with ``mp.spawn``
# above, the store waits for every process to connect to it, so rank 0
# returns from ``init_process_group`` only once all have arrived, whatever
# the backend. ``torchrun`` hosts the store in its own process, and every
# rank is only a client of it; there, ``gloo`` connects to every other
# process while it creates the group, so it returns once all have arrived,
# while ``nccl`` connects at the first collective operation unless it is
# given a ``device_id``. Rank 0's store, opened for 3 processes with a
# timeout of 1 second and left alone, shows the wait:

if __name__ == "__main__":
    one_second = datetime.timedelta(seconds=1)
    try:
        dist.TCPStore("127.0.0.1", 0, world_size=3, is_master=True, timeout=one_second)
    except dist.DistStoreError as gave_up:
        print("rank 0's store:", re.sub(r" after \d+ seconds", "", str(gave_up)))

# %%
# .. _ddp-dynamo-import:
#
# Why the script imports ``torch._dynamo`` first
# ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
#
# The script imports ``torch._dynamo`` at the top, before the group exists,
# so that ``destroy_process_group`` can free the group: DDP imports it the
# first time it wraps a model, and with it ``torch.distributed.nn.functional``,
# whose functions keep the default group of the moment they are imported as
# the default value of their ``group`` argument. Imported after
# ``init_process_group``, they keep the group and its ``gloo`` threads alive
# after ``destroy_process_group``, and a thread still cleaning up after the
# last gradient averaging when Python exits aborts the process with
# ``terminate called without an active exception`` (in our runs, 10 of 100
# ``torchrun`` jobs of 2 processes, run two at a time on 2 CPU cores that
# three other processes kept busy). Imported first, it also costs its two
# seconds or so once, not again in every process this page's launcher forks.
