import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"

# One pass over the data ("decoupled look-back"). Each program scans one tile and publishes the
# tile's total at once; then it adds up its predecessors' published totals, walking back until it
# meets a tile whose inclusive prefix is already known, and publishes its own inclusive prefix.
# A tile's state is one int64 word, written atomically: a tag in the high 32 bits and a float32
# (its raw bits) in the low 32 bits, so a reader never sees a tag without its value.
#
# The state words and the ticket counter are kept from call to call, so that a call is a single
# launch with nothing to clear first: the tag is 4 * generation + status, where the generation
# counts the calls, and a word left by an earlier call reads as "nothing published yet".
NOT_READY = tl.constexpr(0)  # nothing published yet (in this generation)
AGGREGATE = tl.constexpr(1)  # the low bits hold the sum of the tile alone
INCLUSIVE = tl.constexpr(2)  # the low bits hold the sum of every element up to the tile's last


@triton.jit(do_not_specialize=["generation"])  # a new value every call: no recompiles
def scan_kernel(
    input_ptr,  # address of the input vector
    output_ptr,  # address of the output vector
    state_ptr,  # address of one int64 state word per tile, kept from earlier calls
    ticket_ptr,  # address of an int64 counter of the tiles started, kept from earlier calls
    N,  # number of elements
    num_tiles,  # tiles in this call
    generation,  # this call's number, 1, 2, ... (at most 2**29)
    BLOCK_SIZE: tl.constexpr,  # elements per tile
    WINDOW: tl.constexpr,  # predecessors inspected at once during the look-back
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    state_ptr = state_ptr.to(tl.pointer_type(tl.int64))
    ticket_ptr = ticket_ptr.to(tl.pointer_type(tl.int64))

    # Tiles are numbered in the order programs start, not by tl.program_id: every tile before
    # this one then belongs to a program that is already running, so waiting for it cannot hang.
    # Every call takes exactly num_tiles tickets, so the counter modulo num_tiles is the tile.
    tile = (tl.atomic_add(ticket_ptr, 1) % num_tiles).to(tl.int32)
    offsets = tile * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(input_ptr + offsets, mask=mask, other=0.0)

    # Publish the tile's total first, so that later tiles can use it before our prefix is known.
    tag = generation.to(tl.int64) * 4
    total = tl.sum(x, axis=0)
    bits = total.to(tl.int32, bitcast=True).to(tl.int64) & 0xFFFFFFFF
    if tile == 0:
        tl.atomic_xchg(state_ptr + tile, bits | ((tag + INCLUSIVE) << 32))
    else:
        tl.atomic_xchg(state_ptr + tile, bits | ((tag + AGGREGATE) << 32))

    # Look back over the predecessors, WINDOW at a time, until a tile with an inclusive prefix.
    exclusive = 0.0
    end = tile  # the window is the tiles [end - WINDOW, end)
    lanes = tl.arange(0, WINDOW)
    while end > 0:
        previous = end - WINDOW + lanes
        state = tl.load(
            state_ptr + previous,
            mask=previous >= 0,
            other=(tag + INCLUSIVE) << 32,  # before tile 0: an inclusive prefix of 0
            volatile=True,
        )
        word = state >> 32
        flag = tl.where(word - tag == AGGREGATE, AGGREGATE, NOT_READY)
        flag = tl.where(word - tag == INCLUSIVE, INCLUSIVE, flag)  # other generations: not ready
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
        tl.atomic_xchg(state_ptr + tile, bits | ((tag + INCLUSIVE) << 32))
    tl.store(output_ptr + offsets, tl.cumsum(x, axis=0) + exclusive, mask=mask)


# Per device and tile count: [state words then the ticket counter, the last generation used].
_SCRATCH: dict[tuple, list] = {}


def solve(input_ptr: int, output_ptr: int, N: int):
    BLOCK_SIZE = 4096
    num_tiles = triton.cdiv(N, BLOCK_SIZE)
    device = torch.cuda.current_device() if DEVICE == "cuda" else DEVICE
    entry = _SCRATCH.get((device, num_tiles))
    if entry is None or entry[1] >= 2**29:  # new, or its tags about to overflow: start again
        # Scratch (allocation only): one state word per tile, then the ticket counter.
        entry = [torch.zeros(num_tiles + 1, dtype=torch.int64, device=DEVICE), 0]
        _SCRATCH[(device, num_tiles)] = entry
    entry[1] += 1
    state_ptr = entry[0].data_ptr()
    scan_kernel[(num_tiles,)](
        input_ptr,
        output_ptr,
        state_ptr,
        state_ptr + num_tiles * 8,
        N,
        num_tiles,
        entry[1],
        BLOCK_SIZE=BLOCK_SIZE,
        WINDOW=32,
        num_warps=4,
    )
