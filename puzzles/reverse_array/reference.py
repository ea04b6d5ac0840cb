"""PyTorch reference for reverse_array: the same arguments as solve(), as tensors."""

import torch


def reference(input, N):
    input.copy_(torch.flip(input, dims=[0]))


# The mistakes of the wrong solutions, each computing what such a kernel writes (mistake_<name>,
# named in puzzle.yaml's mistakes): a failing call that matches one gets its hint. Where a
# kernel's programs race, they are taken one after another in the order of their ids, as
# Triton's interpreter runs them.

# The float32 whose four bytes are 0xA5, the pattern of the guard band the judge puts after an
# in-place buffer: what a load one element past the end reads.
PAST_THE_END = torch.tensor([0xA5A5A5A5 - (1 << 32)], dtype=torch.int32).view(torch.float32).item()


def mistake_mirror_off_by_one(input, N):
    """Index i swapped with N - i, for i below N // 2: element 0 gets the value past the end,
    and the pairs (i, N - i) for i >= 1 are swapped."""
    old = input.clone()
    front = torch.arange(1, max(1, N // 2))
    input[front] = old[N - front]
    input[N - front] = old[front]
    if N // 2:
        input[0] = PAST_THE_END


def mistake_overwrites_unread(input, N, block=256):
    """Blocks of 256 in order, each loaded and stored reversed at its mirror, with no swap."""
    for start in range(0, N, block):
        idx = torch.arange(start, min(N, start + block))
        input[N - 1 - idx] = input[idx].clone()


def mistake_swaps_twice(input, N, block=1024):
    """Blocks of 1024 in order, each index of every block swapped with its mirror."""
    for start in range(0, N, block):
        front = torch.arange(start, min(N, start + block))
        back = N - 1 - front
        x, y = input[front].clone(), input[back].clone()
        input[front] = y
        input[back] = x
