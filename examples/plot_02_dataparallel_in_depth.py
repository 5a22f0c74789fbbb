"""
.. _dataparallel-in-depth:

``nn.DataParallel`` in depth
============================

The :ref:`first tutorial <dataparallel-tutorial>` wrapped a model and watched
the batches split. This page looks at what the wrapper does on every forward
and backward pass: its parameters, how to choose GPUs, why small batches leave
GPUs idle, and why the gradients come out the same as on one GPU. It ends with
when to move on to ``DistributedDataParallel``.
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
# 2. **replicates** the module onto those GPUs, afresh on every call;
# 3. **applies** each replica to its chunk, one Python thread per GPU;
# 4. **gathers** the outputs onto ``output_device`` and concatenates them
#    along ``dim``.
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
# on the command line rather than inside the script:
#
# .. code-block:: bash
#
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
# ignores ``device_ids``. The machine that built this page printed:

import torch.nn as nn

print("CUDA available:", torch.cuda.is_available())
if not torch.cuda.is_available():
    wrapped = nn.DataParallel(nn.Linear(5, 2), device_ids=[0, 1])
    print("device_ids in use:", wrapped.device_ids)

# %%
# Small batches leave GPUs idle
# -----------------------------
#
# Because every chunk but the last has ``ceil(B / N)`` rows, a batch is cut
# into ``ceil(B / ceil(B / N))`` chunks, which is often fewer than ``N``: not
# only for small batches, but for any batch that is not close to a multiple of
# ``N``. ``nn.DataParallel`` only starts as many replicas as there are chunks.
# On 8 GPUs:

gpus = 8
for rows in (1, 5, 10, 16, 17, 25, 30, 32):
    busy = len(torch.chunk(torch.arange(rows), gpus))
    print(f"batch of {rows:>2}: {busy} GPUs busy, {gpus - busy} idle")

# %%
# Choose a batch size that is a multiple of the number of GPUs, and watch the
# last, shorter batch of an epoch (or drop it with
# ``DataLoader(..., drop_last=True)``).
#
# Gradients: summed over the replicas
# -----------------------------------
#
# Each replica's parameters are copies of the original ones, made by a
# differentiable broadcast. In the backward pass, the gradients that flow into
# the copies are **summed** into the original parameters. Because the loss is
# computed on the gathered output, as if the whole batch had gone through one
# model, the sum is exactly the gradient a single device would compute.
#
# The code below checks this by doing the replication by hand: it cuts a batch
# of 10 into ``torch.chunk`` pieces for 3 replicas, runs each piece through its
# own differentiable copy of the parameters, concatenates the outputs, and
# compares the gradients with those of one model on the whole batch.

from torch.func import functional_call

_ = torch.manual_seed(0)
model = nn.Linear(5, 2)
inputs, targets = torch.randn(10, 5), torch.randn(10, 2)
loss_fn = nn.MSELoss()

# One device, whole batch.
loss_fn(model(inputs), targets).backward()
single = {name: p.grad.clone() for name, p in model.named_parameters()}
model.zero_grad()

# Three replicas, one chunk each, outputs gathered before the loss.
outputs = []
for chunk in torch.chunk(inputs, 3):
    replica = {name: p.clone() for name, p in model.named_parameters()}
    outputs.append(functional_call(model, replica, (chunk,)))
loss_fn(torch.cat(outputs), targets).backward()

for name, p in model.named_parameters():
    same = torch.allclose(p.grad, single[name], atol=1e-6)
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
# ``DistributedDataParallel`` reaches the same gradient differently: every
# process computes the loss on its own part of the batch, and the gradients
# are **averaged** across processes. With equal parts, the average of the
# per-part mean losses' gradients is the whole batch's mean-loss gradient:

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
# GIL, the model is copied to every GPU on every forward pass, and the
# outputs and the loss all land on the first GPU. It also cannot go beyond
# one machine.
#
# ``DistributedDataParallel`` starts one process per GPU (usually with
# ``torchrun``), copies the model once at the start, and overlaps averaging
# the gradients with the backward pass. PyTorch recommends it over
# ``nn.DataParallel`` even on a single machine. Move to it as soon as
# training speed matters, when the first GPU runs out of memory before the
# others, or when you need more than one machine. :ref:`ddp-tutorial` trains
# this tutorial's model with it, one process per device, and compares the two.
