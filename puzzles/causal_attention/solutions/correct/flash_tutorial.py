import math

import triton
import triton.language as tl


@triton.jit
def _attend_block(
    acc,  # [BLOCK_M, BLOCK_D] float32 running sum of p @ V, scaled to the running maximum
    l_i,  # [BLOCK_M] running sum of p
    m_i,  # [BLOCK_M] running maximum of the scores (base-2 units)
    q,  # [BLOCK_M, BLOCK_D] this program's queries (float16)
    k_ptr,  # address of K
    v_ptr,  # address of V
    start_n,  # first key of this block
    offs_m,  # the query rows of this program
    N,  # sequence length
    d,  # head dimension
    qk_scale,  # log2(e) / sqrt(d)
    offs_n,  # tl.arange(0, BLOCK_N)
    offs_d,  # tl.arange(0, BLOCK_D)
    ON_DIAGONAL: tl.constexpr,  # True where some keys lie after some queries (causal mask)
):
    keys = start_n + offs_n
    kv_offsets = keys[:, None] * d + offs_d[None, :]
    kv_mask = offs_d[None, :] < d
    if ON_DIAGONAL:
        kv_mask = kv_mask & (keys[:, None] < N)
    k = tl.load(k_ptr + kv_offsets, mask=kv_mask, other=0.0)
    v = tl.load(v_ptr + kv_offsets, mask=kv_mask, other=0.0)
    s = tl.dot(q, tl.trans(k)) * qk_scale  # float32 scores, times log2(e) for exp2
    if ON_DIAGONAL:
        # query i sees keys j <= i; keys past N always lie after every real query
        s = tl.where(offs_m[:, None] >= keys[None, :], s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, axis=1))
    p = tl.math.exp2(s - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)  # rescales what was summed under the old maximum
    l_i = l_i * alpha + tl.sum(p, axis=1)
    acc = acc * alpha[:, None]
    acc = tl.dot(p.to(tl.float16), v, acc)  # float16 operands, float32 accumulation
    return acc, l_i, m_new


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128}, num_warps=8, num_stages=2),
    ],
    key=["N", "BLOCK_D"],
)
@triton.jit(do_not_specialize=["N"])
def causal_attention_kernel(
    q_ptr,  # address of Q, N x d, row-major, float16
    k_ptr,  # address of K, N x d, row-major, float16
    v_ptr,  # address of V, N x d, row-major, float16
    o_ptr,  # address of the output, N x d, row-major, float16
    N,  # sequence length
    d,  # head dimension
    qk_scale,  # log2(e) / sqrt(d)
    BLOCK_M: tl.constexpr,  # queries per program (a multiple of BLOCK_N)
    BLOCK_N: tl.constexpr,  # keys per loop step
    BLOCK_D: tl.constexpr,  # d rounded up to a power of two, at least 16
):
    q_ptr = q_ptr.to(tl.pointer_type(tl.float16))
    k_ptr = k_ptr.to(tl.pointer_type(tl.float16))
    v_ptr = v_ptr.to(tl.pointer_type(tl.float16))
    o_ptr = o_ptr.to(tl.pointer_type(tl.float16))

    # The last query blocks have the most keys to visit: hand them out first.
    start_m = tl.num_programs(axis=0) - 1 - tl.program_id(axis=0)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    q_offsets = offs_m[:, None] * d + offs_d[None, :]
    q_mask = (offs_m[:, None] < N) & (offs_d[None, :] < d)
    q = tl.load(q_ptr + q_offsets, mask=q_mask, other=0.0)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    # Keys before this query block are visible to every query in it: no mask.
    lo = start_m * BLOCK_M
    for start_n in range(0, lo, BLOCK_N):
        acc, l_i, m_i = _attend_block(
            acc,
            l_i,
            m_i,
            q,
            k_ptr,
            v_ptr,
            start_n,
            offs_m,
            N,
            d,
            qk_scale,
            offs_n,
            offs_d,
            ON_DIAGONAL=False,
        )
    # The diagonal block: keys lo .. lo + BLOCK_M - 1, masked; the loop stops there.
    hi = tl.minimum(lo + BLOCK_M, N)
    for start_n in range(lo, hi, BLOCK_N):
        acc, l_i, m_i = _attend_block(
            acc,
            l_i,
            m_i,
            q,
            k_ptr,
            v_ptr,
            start_n,
            offs_m,
            N,
            d,
            qk_scale,
            offs_n,
            offs_d,
            ON_DIAGONAL=True,
        )
    acc = acc / l_i[:, None]
    tl.store(o_ptr + q_offsets, acc.to(tl.float16), mask=q_mask)


# q_ptr, k_ptr, v_ptr, output_ptr are device addresses (Python ints) of N x d float16 matrices,
# row-major.
def solve(q_ptr: int, k_ptr: int, v_ptr: int, output_ptr: int, N: int, d: int):
    BLOCK_D = max(16, triton.next_power_of_2(d))  # tl.dot needs at least 16 along K
    qk_scale = math.log2(math.e) / math.sqrt(d)
    grid = lambda meta: (triton.cdiv(N, meta["BLOCK_M"]),)  # noqa: E731
    causal_attention_kernel[grid](q_ptr, k_ptr, v_ptr, output_ptr, N, d, qk_scale, BLOCK_D=BLOCK_D)
