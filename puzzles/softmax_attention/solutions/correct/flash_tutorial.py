import math

import triton
import triton.language as tl


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
):
    keys = start_n + offs_n
    kv_offsets = keys[:, None] * d + offs_d[None, :]
    kv_mask = offs_d[None, :] < d
    if MASK_KEYS:
        kv_mask = kv_mask & (keys[:, None] < N)
    k = tl.load(k_ptr + kv_offsets, mask=kv_mask, other=0.0)
    v = tl.load(v_ptr + kv_offsets, mask=kv_mask, other=0.0)
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
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 32}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=2),
    ],
    key=["M", "N", "BLOCK_D"],
)
@triton.jit(do_not_specialize=["M", "N"])
def attention_kernel(
    q_ptr,  # address of Q, M x d, row-major
    k_ptr,  # address of K, N x d, row-major
    v_ptr,  # address of V, N x d, row-major
    o_ptr,  # address of the output, M x d, row-major
    M,  # number of queries
    N,  # number of keys and values
    d,  # head dimension
    qk_scale,  # log2(e) / sqrt(d)
    BLOCK_M: tl.constexpr,  # queries per program (chosen by the autotuner)
    BLOCK_N: tl.constexpr,  # keys per loop step (chosen by the autotuner)
    BLOCK_D: tl.constexpr,  # d rounded up to a power of two, at least 16
):
    q_ptr = q_ptr.to(tl.pointer_type(tl.float32))
    k_ptr = k_ptr.to(tl.pointer_type(tl.float32))
    v_ptr = v_ptr.to(tl.pointer_type(tl.float32))
    o_ptr = o_ptr.to(tl.pointer_type(tl.float32))

    pid = tl.program_id(axis=0)  # which block of queries
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    q_offsets = offs_m[:, None] * d + offs_d[None, :]
    q_mask = (offs_m[:, None] < M) & (offs_d[None, :] < d)
    q = tl.load(q_ptr + q_offsets, mask=q_mask, other=0.0)

    # Online softmax: one pass over the keys, keeping per query row the running maximum m_i,
    # the running sum l_i of exp(score - m_i) and the running weighted sum acc of V rows.
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    n_full = (N // BLOCK_N) * BLOCK_N  # keys in whole blocks: no key mask needed
    for start_n in range(0, n_full, BLOCK_N):
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
        )
    if n_full < N:  # the partial last block
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
        )
    acc = acc / l_i[:, None]
    tl.store(o_ptr + q_offsets, acc, mask=q_mask)


# q_ptr, k_ptr, v_ptr, output_ptr are device addresses (Python ints); Q is M x d, K and V are
# N x d, the output is M x d, all float32 and row-major.
def solve(q_ptr: int, k_ptr: int, v_ptr: int, output_ptr: int, M: int, N: int, d: int):
    BLOCK_D = max(16, triton.next_power_of_2(d))  # tl.dot needs at least 16 along K
    qk_scale = math.log2(math.e) / math.sqrt(d)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]),)  # noqa: E731
    attention_kernel[grid](q_ptr, k_ptr, v_ptr, output_ptr, M, N, d, qk_scale, BLOCK_D=BLOCK_D)
