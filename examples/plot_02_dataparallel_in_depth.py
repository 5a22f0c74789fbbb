"""
.. _dataparallel-in-depth:

``nn.DataParallel`` in depth
============================

The :ref:`first tutorial <dataparallel-tutorial>` wrapped a model and watched
the batches split. This page looks at what the wrapper does on every forward
and backward pass: its parameters, how to choose GPUs, which batches leave
GPUs idle, and when the gradients come out the same as on one GPU and when
they do not. It ends with when to move on to ``DistributedDataParallel``.
It is written for PyTorch 2.13.
"""

# %%
# What happens on every forward pass
# ----------------------------------
#
# ``nn.DataParallel(module, device_ids=None, output_device=None, dim=0)``
# keeps the original module on the first GPU and, on each call:
#
# 1. **scatters** the inputs: every tensor is cut along ``dim`` into chunks of
#    ``ceil(B / N)`` rows and each chunk is copied to one GPU;
# 2. **replicates** the module onto as many GPUs as there are chunks, afresh
#    on every call;
# 3. **applies** each replica to its chunk, one Python thread per GPU;
# 4. **gathers** the outputs onto ``output_device`` and concatenates them
#    along ``dim``.
#
# With a single GPU in ``device_ids`` it still scatters, which copies the
# inputs to that GPU, and then calls the module itself: it skips the other
# three steps.
#
# The three parameters:
#
# ``device_ids``
#     The GPUs to use, by index. The default is every visible GPU. The
#     module's parameters must already be on ``device_ids[0]``.
# ``output_device``
#     Where the gathered output ends up. The default is ``device_ids[0]``,
#     which is why that GPU usually needs more memory than the others.
# ``dim``
#     The dimension to split along. Use it when the batch is not the first
#     dimension, for example for sequence-first tensors.
#
# The splitting rule is ``torch.chunk``'s. Here it is applied to a batch of
# 10 rows along ``dim=0`` and to a tensor with the batch in ``dim=1``:

import torch

batch = torch.arange(10)
print("10 rows over 3 GPUs:", [len(chunk) for chunk in torch.chunk(batch, 3)])

sequence_first = torch.zeros(7, 10, 4)  # (time, batch, features)
print(
    "dim=1 over 3 GPUs:",
    [tuple(chunk.shape) for chunk in torch.chunk(sequence_first, 3, dim=1)],
)

# %%
# ``torch.tensor_split`` would cut the same batch differently (4, 3 and 3),
# so it is not a model of what ``nn.DataParallel`` does:

print("tensor_split instead:", [len(chunk) for chunk in torch.tensor_split(batch, 3)])

# %%
# Choosing GPUs: ``CUDA_VISIBLE_DEVICES`` or ``device_ids``
# ---------------------------------------------------------
#
# There are two ways to use only some of a machine's GPUs, and they are not
# the same.
#
# ``CUDA_VISIBLE_DEVICES`` is an environment variable read when CUDA starts.
# GPUs not listed are hidden from the process, and the visible ones are
# numbered again from 0. It must be set before CUDA is initialised, so set it
# on the command line rather than inside the script. By default CUDA numbers
# the GPUs fastest first, which need not be the order ``nvidia-smi`` shows;
# ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` makes both use the order of the PCI bus,
# so that 2 and 3 are the GPUs ``nvidia-smi`` lists as 2 and 3:
#
# .. code-block:: bash
#
#    export CUDA_DEVICE_ORDER=PCI_BUS_ID
#    CUDA_VISIBLE_DEVICES=2,3 python train.py   # inside, cuda:0 is GPU 2
#
# ``device_ids`` leaves every GPU visible and tells ``nn.DataParallel`` which
# of them to replicate onto. The indices are those the process sees:
#
# .. code-block:: python
#
#    model = nn.DataParallel(model.to("cuda:2"), device_ids=[2, 3])
#
# Without CUDA at all, ``nn.DataParallel`` calls the module directly and
# ignores ``device_ids``. The machine that ran this code printed the lines
# below; when it was not the machine that built this site, a line above them
# says so:

import torch.nn as nn

print("CUDA available:", torch.cuda.is_available())
if not torch.cuda.is_available():
    wrapped = nn.DataParallel(nn.Linear(5, 2), device_ids=[0, 1])
    print("device_ids in use:", wrapped.device_ids)

# %%
# Small batches leave GPUs idle
# -----------------------------
#
# Every chunk but the last has ``ceil(B / N)`` rows, so a batch of ``B`` rows
# makes ``ceil(B / ceil(B / N))`` chunks, and ``nn.DataParallel`` starts one
# replica per chunk. That can be fewer than ``N``. The function below counts
# the busy GPUs with ``torch.chunk`` itself, so the table cannot disagree with
# it. On 8 GPUs:


def busy_gpus(rows, gpus):
    """How many of ``gpus`` GPUs get a chunk of a batch of ``rows`` rows."""
    return len(torch.chunk(torch.empty(rows), gpus))


gpus = 8
for rows in (5, 9, 10, 16, 17, 24, 25, 32, 33, 48, 49, 50):
    busy = busy_gpus(rows, gpus)
    print(f"batch of {rows:>2}: {busy} GPUs busy, {gpus - busy} idle")

# %%
# 17 rows, for example, make chunks of 3, and six of them hold the batch. A
# GPU stays idle exactly when ``N - 1`` chunks of ``ceil(B / N)`` rows can
# hold all ``B`` rows, and that happens only for small batches: with
# ``c = ceil(B / N)``, ``(N - 1) * c >= B`` and ``c <= (B + N - 1) / N``
# together give ``B <= (N - 1) ** 2``. A batch of ``(N - 1) ** 2`` rows
# makes chunks of ``N - 1`` rows, and ``N - 1`` of them hold it, so
# ``(N - 1) ** 2`` is the largest batch that leaves a GPU idle: 49 on 8 GPUs.
# A search over every batch below ``N * N`` finds the same numbers:


def largest_batch_leaving_a_gpu_idle(gpus):
    """The largest batch size for which some of ``gpus`` GPUs get no chunk."""
    return max((rows for rows in range(1, gpus * gpus) if busy_gpus(rows, gpus) < gpus), default=0)


for n in range(2, 9):
    print(f"{n} GPUs: largest batch that leaves a GPU idle: {largest_batch_leaving_a_gpu_idle(n)}")
bound = all(largest_batch_leaving_a_gpu_idle(n) == (n - 1) ** 2 for n in range(2, 9))
print("each one is (N - 1) ** 2:", bound)

# %%
# The same split as a picture, for some batch sizes on 8 GPUs: each row is
# one batch, each square one GPU with the number of rows it gets, and a grey
# square a GPU left idle.

try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
    print("matplotlib is not installed, so the figure is skipped.")

if plt is not None:
    sizes = (10, 17, 24, 25, 30, 33, 49, 50)
    fig, ax = plt.subplots(figsize=(6.4, 3.4), layout="constrained")
    for row, rows in enumerate(sizes):
        chunks = [len(chunk) for chunk in torch.chunk(torch.empty(rows), gpus)]
        for gpu in range(gpus):
            busy = gpu < len(chunks)
            ax.add_patch(plt.Rectangle((gpu, row), 0.9, 0.8, color="tab:blue" if busy else "0.85"))
            if busy:
                ax.text(gpu + 0.45, row + 0.4, chunks[gpu], ha="center", va="center",
                        color="white", fontsize=8)  # fmt: skip
    ax.set_xlim(-0.1, gpus)
    ax.set_ylim(len(sizes), -0.2)
    ax.set_xticks([gpu + 0.45 for gpu in range(gpus)], [f"GPU {gpu}" for gpu in range(gpus)])
    ax.set_yticks([row + 0.4 for row in range(len(sizes))], [f"{rows} rows" for rows in sizes])
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_title("Rows each of 8 GPUs gets from one batch (grey: idle)")
    plt.show()

# %%
# A batch size that is a multiple of the number of GPUs gives every GPU the
# same number of rows. Watch the last, shorter batch of an epoch: it can
# leave GPUs idle, and, as the next section shows, it can give a GPU a
# single row. ``DataLoader(..., drop_last=True)`` drops it:

from torch.utils.data import DataLoader

print("100 rows in batches of 30:", [len(b) for b in DataLoader(torch.zeros(100, 5), batch_size=30)])
print(
    "with drop_last=True:       ",
    [len(b) for b in DataLoader(torch.zeros(100, 5), batch_size=30, drop_last=True)],
)

# %%
# Gradients: summed over the replicas
# -----------------------------------
#
# Each replica's parameters are copies of the original ones, made by a
# differentiable broadcast. In the backward pass, the gradients that flow into
# the copies are **summed** into the original parameters. Because the loss is
# computed on the gathered output, as if the whole batch had gone through one
# model, the sum is exactly the gradient a single device would compute, as
# long as the model treats every row on its own.
#
# The code below checks this by doing the replication by hand: it cuts a batch
# of 10 into ``torch.chunk`` pieces for 3 replicas, runs each piece through its
# own differentiable copy of the parameters, concatenates the outputs, and
# compares the gradients with those of one model on the whole batch.

from torch.func import functional_call

_ = torch.manual_seed(0)
inputs, targets = torch.randn(10, 5), torch.randn(10, 2)
loss_fn = nn.MSELoss()


def replica_gradients(model, replicas):
    """Gradients of the loss when ``inputs`` is split over ``replicas`` copies of ``model``."""
    model.zero_grad()
    outputs = []
    for chunk in torch.chunk(inputs, replicas):
        copy = {name: p.clone() for name, p in model.named_parameters()}
        outputs.append(functional_call(model, copy, (chunk,)))
    loss_fn(torch.cat(outputs), targets).backward()
    return {name: p.grad.clone() for name, p in model.named_parameters()}


model = nn.Linear(5, 2)
single = replica_gradients(model, 1)  # one device, whole batch
summed = replica_gradients(model, 3)
for name in single:
    same = torch.allclose(summed[name], single[name], atol=1e-6)
    print(f"{name:<6} summed replica gradients equal the single-device gradient: {same}")

# %%
# When the machine has two or more GPUs, the same check runs with the real
# ``nn.DataParallel``:

if torch.cuda.device_count() >= 2:
    model.zero_grad()
    parallel = nn.DataParallel(model.to("cuda:0"))
    loss_fn(parallel(inputs.cuda()), targets.cuda()).backward()
    for name, p in model.named_parameters():
        same = torch.allclose(p.grad.cpu(), single[name], atol=1e-5)
        print(f"{name:<6} real nn.DataParallel on {torch.cuda.device_count()} GPUs: {same}")
    model.cpu()
else:
    print(f"Skipped: this machine has {torch.cuda.device_count()} GPUs, the check needs 2.")

# %%
# Models with BatchNorm
# ---------------------
#
# ``BatchNorm`` in training mode normalises with the mean and variance of the
# rows it is given. Inside ``nn.DataParallel`` each replica is given only its
# chunk, so every chunk is normalised with its own statistics, and the
# gradients are no longer those of one device with the whole batch. The same
# check with a Linear, BatchNorm, Linear model:

bn_model = nn.Sequential(nn.Linear(5, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))
bn_single = replica_gradients(bn_model, 1)
bn_summed = replica_gradients(bn_model, 3)
gap = max((bn_summed[name] - bn_single[name]).abs().max().item() for name in bn_single)
print(f"largest difference between 3-replica and single-device gradients: {gap:.3f}")

# %%
# A chunk of a single row is worse. In training mode BatchNorm needs more
# than one value per channel to compute a variance, and ``BatchNorm1d`` given
# one row of features has exactly one, so it raises an error. A batch of 25
# rows on 8 GPUs ends with such a chunk, and so does a last batch of 9 rows:

for rows in (25, 9):
    sizes = [len(chunk) for chunk in torch.chunk(torch.empty(rows), 8)]
    print(f"{rows} rows on 8 GPUs: chunks of {sizes}")
try:
    bn_model(torch.chunk(torch.randn(25, 5), 8)[-1])  # the last replica's chunk
except ValueError as error:
    print("BatchNorm on the last chunk:", error)

# %%
# One image, on the other hand, holds many values per channel:
# ``BatchNorm2d`` normalises each channel over the batch, the height and the
# width, so a chunk of a single 8 × 8 image trains. Only an image of one
# pixel would fail:

image_norm = nn.BatchNorm2d(3)
print("BatchNorm2d on one 3 × 8 × 8 image: output", tuple(image_norm(torch.randn(1, 3, 8, 8)).shape))
try:
    image_norm(torch.randn(1, 3, 1, 1))
except ValueError as error:
    print("BatchNorm2d on one 3 × 1 × 1 image:", error)

# %%
# ``nn.DataParallel`` has no cure for this. ``nn.SyncBatchNorm`` computes the
# statistics over all devices, but only in ``DistributedDataParallel`` with
# one GPU per process. Without a process group, and so inside
# ``nn.DataParallel``, it computes them per chunk like ``BatchNorm``:

synced = nn.SyncBatchNorm.convert_sync_batchnorm(bn_model)
print(synced[1])
synced_summed = replica_gradients(synced, 3)
same = all(torch.allclose(synced_summed[name], bn_summed[name]) for name in bn_summed)
print("SyncBatchNorm without a process group gives the per-chunk gradients:", same)

# %%
# With ``nn.DataParallel``, give every GPU enough rows, drop the short last
# batch with ``DataLoader(..., drop_last=True)``, or use a normalisation that
# does not depend on the batch, such as ``LayerNorm`` or ``GroupNorm``. With
# ``DistributedDataParallel`` on GPUs, convert the model with
# ``nn.SyncBatchNorm.convert_sync_batchnorm(model)`` before wrapping it.
#
# A loss computed inside ``forward``
# ----------------------------------
#
# Some models compute their loss inside ``forward``, so that only the loss
# leaves the GPUs. Then every replica returns the mean loss of its own chunk,
# and ``nn.DataParallel`` gathers these scalars into a vector with one value
# per replica (with a warning). Their plain mean gives every chunk the same
# weight; with chunks of 4, 4 and 2 rows that is not the loss of the whole
# batch. Weighting each value by its chunk's rows is:

chunks = list(zip(torch.chunk(inputs, 3), torch.chunk(targets, 3)))
per_replica = torch.stack([loss_fn(model(x), y) for x, y in chunks]).detach()
rows = torch.tensor([len(x) for x, _ in chunks])
print("rows per replica:   ", rows.tolist())
print("loss per replica:   ", [round(value, 4) for value in per_replica.tolist()])
print(f"their plain mean:    {per_replica.mean().item():.4f}")
print(f"weighted by rows:    {(per_replica * rows).sum().item() / rows.sum().item():.4f}")
print(f"whole-batch loss:    {loss_fn(model(inputs), targets).item():.4f}")

# %%
# ``DistributedDataParallel`` reaches the whole-batch gradient differently:
# every process computes the loss on its own part of the batch, and the
# gradients are **averaged** across processes. With equal parts, the average
# of the per-part mean losses' gradients is the whole batch's mean-loss
# gradient:

model.zero_grad()
parts = list(zip(torch.chunk(inputs, 2), torch.chunk(targets, 2)))
averaged = {name: torch.zeros_like(p) for name, p in model.named_parameters()}
for part_inputs, part_targets in parts:
    grads = torch.autograd.grad(loss_fn(model(part_inputs), part_targets), list(model.parameters()))
    for (name, _), grad in zip(model.named_parameters(), grads):
        averaged[name] += grad / len(parts)
for name in averaged:
    same = torch.allclose(averaged[name], single[name], atol=1e-6)
    print(f"{name:<6} averaged per-process gradients equal the single-device gradient: {same}")

# %%
# When to move to ``DistributedDataParallel``
# -------------------------------------------
#
# ``nn.DataParallel`` is one line of code, but it pays for that on every step:
# one Python process drives every GPU through threads that compete for the
# GIL, the model is copied to every GPU on every forward pass, and the inputs
# are scattered from and the outputs gathered onto the first GPU, which also
# computes the loss. It also cannot go beyond one machine.
#
# ``DistributedDataParallel`` runs one process per GPU, each with its own
# interpreter; a launcher such as ``torchrun`` starts the processes. It copies
# rank 0's parameters and buffers to every process once, when it wraps the
# model; after that each process updates its own copy, the gradients are
# averaged while the backward pass runs, and by default rank 0's buffers are
# copied again at the start of a forward pass when the one before it ran with
# gradients enabled (:ref:`ddp-buffers` shows the rule). PyTorch's documentation
# recommends it over ``nn.DataParallel`` for training on several GPUs, even
# on a single machine. Move to it as soon as training speed matters, when the
# first GPU runs out of memory before the others, or when you need more than
# one machine. :ref:`ddp-tutorial` trains this tutorial's model with it, one
# process per device, and compares the two.
