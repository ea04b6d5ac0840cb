import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"

# One pass over the data ("decoupled look-back"). Each program scans one tile and publishes the
# tile's total at once; then it adds up its predecessors' published totals, walking back until it
# meets a tile whose inclusive prefix is already known, and publishes its own inclusive prefix.
# A tile's state is one int64 word, written atomically: the flag in the high 32 bits and a
# float32 (its raw bits) in the low 32 bits, so a reader never sees a flag without its value.
#
# The look-back reads WINDOW state words at once, one a thread: a program is one warp and the
# window 32 words. With more threads than words, several threads would each read the same word,
# at slightly different times, and see different states; the look-back's three reductions could
# then each take a different thread's view and combine them into a wrong prefix. One warp a
# program also means 1024-element tiles (32 elements a thread): this is the plain version, and
# lookback_wide.py the fast one.
NOT_READY = tl.constexpr(0)  # nothing published yet
AGGREGATE = tl.constexpr(1)  # the low bits hold the sum of the tile alone
INCLUSIVE = tl.constexpr(2)  # the low bits hold the sum of every element up to the tile's last


@triton.jit
def scan_kernel(
    input_ptr,  # address of the input vector
    output_ptr,  # address of the output vector
    state_ptr,  # address of one int64 state word per tile, zero before the launch
    ticket_ptr,  # address of an int32 counter, zero before the launch
    N,  # number of elements
    BLOCK_SIZE: tl.constexpr,  # elements per tile
    WINDOW: tl.constexpr,  # predecessors inspected at once during the look-back
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    state_ptr = state_ptr.to(tl.pointer_type(tl.int64))
    ticket_ptr = ticket_ptr.to(tl.pointer_type(tl.int32))

    # Tiles are numbered in the order programs start, not by tl.program_id: every tile before
    # this one then belongs to a program that is already running, so waiting for it cannot hang.
    tile = tl.atomic_add(ticket_ptr, 1)
    offsets = tile * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(input_ptr + offsets, mask=mask, other=0.0)

    # Publish the tile's total first, so that later tiles can use it before our prefix is known.
    total = tl.sum(x, axis=0)
    bits = total.to(tl.int32, bitcast=True).to(tl.int64) & 0xFFFFFFFF
    if tile == 0:
        tl.atomic_xchg(state_ptr + tile, bits | (INCLUSIVE << 32))
    else:
        tl.atomic_xchg(state_ptr + tile, bits | (AGGREGATE << 32))

    # Look back over the predecessors, WINDOW at a time, until a tile with an inclusive prefix.
    exclusive = 0.0
    end = tile  # the window is the tiles [end - WINDOW, end)
    lanes = tl.arange(0, WINDOW)
    while end > 0:
        previous = end - WINDOW + lanes
        state = tl.load(
            state_ptr + previous, mask=previous >= 0, other=INCLUSIVE << 32, volatile=True
        )
        flag = state >> 32
        value = (state & 0xFFFFFFFF).to(tl.int32).to(tl.float32, bitcast=True)
        # the last tile of the window whose inclusive prefix is known (before tile 0 counts)
        start = tl.max(tl.where(flag == INCLUSIVE, lanes, -1), axis=0)
        waiting = tl.sum(((lanes >= start) & (flag == NOT_READY)).to(tl.int32), axis=0)
        if waiting == 0:  # else some tile after `start` has published nothing yet: read again
            exclusive += tl.sum(tl.where(lanes >= start, value, 0.0), axis=0)
            if start >= 0:
                end = 0
            else:
                end -= WINDOW

    if tile > 0:
        bits = (exclusive + total).to(tl.int32, bitcast=True).to(tl.int64) & 0xFFFFFFFF
        tl.atomic_xchg(state_ptr + tile, bits | (INCLUSIVE << 32))
    tl.store(output_ptr + offsets, tl.cumsum(x, axis=0) + exclusive, mask=mask)


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 1024
    num_tiles = triton.cdiv(N, BLOCK_SIZE)
    # Scratch: one state word per tile, then the ticket counter (allocation only).
    scratch = torch.zeros(num_tiles + 1, dtype=torch.int64, device=DEVICE)
    state_ptr = scratch.data_ptr()
    ticket_ptr = state_ptr + num_tiles * 8
    scan_kernel[(num_tiles,)](
        input_ptr,
        output_ptr,
        state_ptr,
        ticket_ptr,
        N,
        BLOCK_SIZE=BLOCK_SIZE,
        WINDOW=32,  # one state word a thread of the warp
        num_warps=1,
    )
