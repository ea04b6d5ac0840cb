# expect: failed wrong-answer
# mistake: no_causal_mask
# Every query attends to every key: the loop runs to N and masks only the padding past N.
import math

import triton
import triton.language as tl


@triton.jit
def causal_attention_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    N,
    d,
    qk_scale,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    q_ptr = q_ptr.to(tl.pointer_type(tl.float16))
    k_ptr = k_ptr.to(tl.pointer_type(tl.float16))
    v_ptr = v_ptr.to(tl.pointer_type(tl.float16))
    o_ptr = o_ptr.to(tl.pointer_type(tl.float16))
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    q_offsets = offs_m[:, None] * d + offs_d[None, :]
    q_mask = (offs_m[:, None] < N) & (offs_d[None, :] < d)
    q = tl.load(q_ptr + q_offsets, mask=q_mask, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    hi = N
    for start_n in range(0, hi, BLOCK_N):
        keys = start_n + offs_n
        kv_offsets = keys[:, None] * d + offs_d[None, :]
        kv_mask = (keys[:, None] < N) & (offs_d[None, :] < d)
        k = tl.load(k_ptr + kv_offsets, mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + kv_offsets, mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        s = tl.where(keys[None, :] < N, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    tl.store(o_ptr + q_offsets, (acc / l_i[:, None]).to(tl.float16), mask=q_mask)


def solve(q_ptr: int, k_ptr: int, v_ptr: int, output_ptr: int, N: int, d: int):
    BLOCK_M, BLOCK_N = 16, 16
    BLOCK_D = max(16, triton.next_power_of_2(d))
    causal_attention_kernel[(triton.cdiv(N, BLOCK_M),)](
        q_ptr,
        k_ptr,
        v_ptr,
        output_ptr,
        N,
        d,
        1.0 / math.sqrt(d),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_D=BLOCK_D,
    )
