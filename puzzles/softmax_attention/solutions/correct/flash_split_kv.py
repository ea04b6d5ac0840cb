import functools
import math
import os

import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


@triton.jit
def _attend_block(
    acc,  # [BLOCK_M, BLOCK_D] running sum of p @ V, scaled to the running maximum
    l_i,  # [BLOCK_M] running sum of p
    m_i,  # [BLOCK_M] running maximum of the scores (base-2 units)
    q,  # [BLOCK_M, BLOCK_D] this program's queries
    k_ptr,  # address of K
    v_ptr,  # address of V
    start_n,  # first key of this block
    N,  # number of keys
    d,  # head dimension (row length of Q, K, V)
    qk_scale,  # log2(e) / sqrt(d)
    offs_n,  # tl.arange(0, BLOCK_N)
    offs_d,  # tl.arange(0, BLOCK_D)
    MASK_KEYS: tl.constexpr,  # True for the last, partial block of keys
    EVEN_D: tl.constexpr,  # d == BLOCK_D: no column mask needed
):
    keys = start_n + offs_n
    kv_offsets = keys[:, None] * d + offs_d[None, :]
    if MASK_KEYS:
        kv_mask = (keys[:, None] < N) & (offs_d[None, :] < d)
        k = tl.load(k_ptr + kv_offsets, mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + kv_offsets, mask=kv_mask, other=0.0)
    elif EVEN_D:
        k = tl.load(k_ptr + kv_offsets)
        v = tl.load(v_ptr + kv_offsets)
    else:
        k = tl.load(k_ptr + kv_offsets, mask=offs_d[None, :] < d, other=0.0)
        v = tl.load(v_ptr + kv_offsets, mask=offs_d[None, :] < d, other=0.0)
    s = tl.dot(q, tl.trans(k)) * qk_scale  # scores, times log2(e) so that exp2 gives exp
    if MASK_KEYS:
        s = tl.where(keys[None, :] < N, s, float("-inf"))  # keys past N get no weight
    m_new = tl.maximum(m_i, tl.max(s, axis=1))
    p = tl.math.exp2(s - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)  # rescales what was summed under the old maximum
    l_i = l_i * alpha + tl.sum(p, axis=1)
    acc = acc * alpha[:, None]
    acc = tl.dot(p, v, acc)
    return acc, l_i, m_new


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 32}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=2),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=2),
    ],
    key=["M", "N", "BLOCK_D", "SPLITS"],
)
@triton.jit(do_not_specialize=["M", "N"])
def attention_kernel(
    q_ptr,  # address of Q, M x d, row-major
    k_ptr,  # address of K, N x d, row-major
    v_ptr,  # address of V, N x d, row-major
    o_ptr,  # address of the output, M x d, row-major
    part_ptr,  # scratch: SPLITS x M x d partial sums (unused when SPLITS == 1)
    stats_ptr,  # scratch: SPLITS x 2 x M running maxima and sums (unused when SPLITS == 1)
    M,  # number of queries
    N,  # number of keys and values
    d,  # head dimension
    qk_scale,  # log2(e) / sqrt(d)
    SPLITS,  # the keys are cut into this many ranges, one per program along axis 1
    BLOCK_M: tl.constexpr,  # queries per program (chosen by the autotuner)
    BLOCK_N: tl.constexpr,  # keys per loop step (chosen by the autotuner)
    BLOCK_D: tl.constexpr,  # d rounded up to a power of two, at least 16
    EVEN_D: tl.constexpr,  # d == BLOCK_D
    FINAL: tl.constexpr,  # SPLITS == 1: write the normalised output directly
):
    q_ptr = q_ptr.to(tl.pointer_type(tl.float32))
    k_ptr = k_ptr.to(tl.pointer_type(tl.float32))
    v_ptr = v_ptr.to(tl.pointer_type(tl.float32))
    o_ptr = o_ptr.to(tl.pointer_type(tl.float32))

    pid_m = tl.program_id(axis=0)  # which block of queries
    split = tl.program_id(axis=1)  # which range of keys
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    q_offsets = offs_m[:, None] * d + offs_d[None, :]
    q_mask = (offs_m[:, None] < M) & (offs_d[None, :] < d)
    q = tl.load(q_ptr + q_offsets, mask=q_mask, other=0.0)

    # This program's keys: a whole number of blocks, lo .. hi - 1 (empty for a trailing split).
    per_split = tl.cdiv(tl.cdiv(N, BLOCK_N), SPLITS) * BLOCK_N
    lo = split * per_split
    hi = tl.minimum(lo + per_split, N)

    # Online softmax over the range: per query row the running maximum m_i, the running sum
    # l_i of exp(score - m_i) and the running weighted sum acc of V rows.
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    n_full = lo + tl.maximum(hi - lo, 0) // BLOCK_N * BLOCK_N  # whole blocks need no key mask
    for start_n in range(lo, n_full, BLOCK_N):
        acc, l_i, m_i = _attend_block(
            acc,
            l_i,
            m_i,
            q,
            k_ptr,
            v_ptr,
            start_n,
            N,
            d,
            qk_scale,
            offs_n,
            offs_d,
            MASK_KEYS=False,
            EVEN_D=EVEN_D,
        )
    if n_full < hi:  # the partial last block of keys
        acc, l_i, m_i = _attend_block(
            acc,
            l_i,
            m_i,
            q,
            k_ptr,
            v_ptr,
            n_full,
            N,
            d,
            qk_scale,
            offs_n,
            offs_d,
            MASK_KEYS=True,
            EVEN_D=EVEN_D,
        )

    if FINAL:
        tl.store(o_ptr + q_offsets, acc / l_i[:, None], mask=q_mask)
    else:
        # Leave this range's unnormalised result; combine_kernel merges the ranges.
        part_ptr = part_ptr.to(tl.pointer_type(tl.float32))
        stats_ptr = stats_ptr.to(tl.pointer_type(tl.float32))
        tl.store(part_ptr + split * M * d + q_offsets, acc, mask=q_mask)
        row_mask = offs_m < M
        tl.store(stats_ptr + (2 * split) * M + offs_m, m_i, mask=row_mask)
        tl.store(stats_ptr + (2 * split + 1) * M + offs_m, l_i, mask=row_mask)


@triton.jit
def combine_kernel(
    part_ptr,  # SPLITS x M x d partial sums of p @ V
    stats_ptr,  # SPLITS x 2 x M: each range's maximum, then its sum of p
    o_ptr,  # address of the output, M x d
    M,  # number of queries
    d,  # head dimension
    SPLITS,  # number of key ranges
    BLOCK_R: tl.constexpr,  # output rows per program
    BLOCK_D: tl.constexpr,  # d rounded up to a power of two
):
    part_ptr = part_ptr.to(tl.pointer_type(tl.float32))
    stats_ptr = stats_ptr.to(tl.pointer_type(tl.float32))
    o_ptr = o_ptr.to(tl.pointer_type(tl.float32))
    rows = tl.program_id(axis=0) * BLOCK_R + tl.arange(0, BLOCK_R)
    offs_d = tl.arange(0, BLOCK_D)
    row_mask = rows < M
    offsets = rows[:, None] * d + offs_d[None, :]
    mask = row_mask[:, None] & (offs_d[None, :] < d)
    # The overall maximum of each row, then every range rescaled to it (an empty range has
    # maximum -inf and weight 0).
    m = tl.full([BLOCK_R], float("-inf"), dtype=tl.float32)
    for s in range(SPLITS):
        m = tl.maximum(m, tl.load(stats_ptr + 2 * s * M + rows, mask=row_mask, other=0.0))
    l_sum = tl.zeros([BLOCK_R], dtype=tl.float32)
    acc = tl.zeros([BLOCK_R, BLOCK_D], dtype=tl.float32)
    for s in range(SPLITS):
        w = tl.math.exp2(tl.load(stats_ptr + 2 * s * M + rows, mask=row_mask, other=0.0) - m)
        l_sum += w * tl.load(stats_ptr + (2 * s + 1) * M + rows, mask=row_mask, other=0.0)
        acc += w[:, None] * tl.load(part_ptr + s * M * d + offsets, mask=mask, other=0.0)
    tl.store(o_ptr + offsets, acc / l_sum[:, None], mask=mask)


@functools.cache
def _num_sms() -> int:
    if DEVICE == "cpu":
        return 4  # the interpreter: a few key ranges, so that combine_kernel runs there too
    from triton.runtime import driver

    props = driver.active.utils.get_device_properties(driver.active.get_current_device())
    return props["multiprocessor_count"]


# q_ptr, k_ptr, v_ptr, output_ptr are device addresses (Python ints); Q is M x d, K and V are
# N x d, the output is M x d, all float32 and row-major.
def solve(q_ptr: int, k_ptr: int, v_ptr: int, output_ptr: int, M: int, N: int, d: int):
    import torch  # scratch memory only: torch.empty allocates, it computes nothing

    BLOCK_D = max(16, triton.next_power_of_2(d))  # tl.dot needs at least 16 along K
    qk_scale = math.log2(math.e) / math.sqrt(d)
    # One program per block of 128 queries leaves most of the GPU idle when M is small: cut
    # the keys into ranges too, about one program per multiprocessor, and combine after.
    # (The interpreter's cases are tiny: shorter ranges there, so that they get split too.)
    min_range = 256 if DEVICE == "cuda" else 16
    splits = max(1, min(_num_sms() // triton.cdiv(M, 128), triton.cdiv(N, min_range)))
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), splits)  # noqa: E731
    if splits == 1:
        attention_kernel[grid](
            q_ptr,
            k_ptr,
            v_ptr,
            output_ptr,
            0,
            0,
            M,
            N,
            d,
            qk_scale,
            1,
            BLOCK_D=BLOCK_D,
            EVEN_D=d == BLOCK_D,
            FINAL=True,
        )
        return
    part = torch.empty(splits * M * d, dtype=torch.float32, device=DEVICE)
    stats = torch.empty(splits * 2 * M, dtype=torch.float32, device=DEVICE)
    attention_kernel[grid](
        q_ptr,
        k_ptr,
        v_ptr,
        output_ptr,
        part.data_ptr(),
        stats.data_ptr(),
        M,
        N,
        d,
        qk_scale,
        splits,
        BLOCK_D=BLOCK_D,
        EVEN_D=d == BLOCK_D,
        FINAL=False,
    )
    BLOCK_R = 32
    combine_kernel[(triton.cdiv(M, BLOCK_R),)](
        part.data_ptr(),
        stats.data_ptr(),
        output_ptr,
        M,
        d,
        splits,
        BLOCK_R=BLOCK_R,
        BLOCK_D=BLOCK_D,
    )
