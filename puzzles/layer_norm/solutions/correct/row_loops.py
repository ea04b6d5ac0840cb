import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(
    input_ptr,  # address of the input matrix, N x C, row-major
    weight_ptr,  # address of the weight vector, C elements
    bias_ptr,  # address of the bias vector, C elements
    output_ptr,  # address of the output matrix, N x C, row-major
    C,  # number of columns (elements per row)
    eps,  # added to the variance inside the square root
    BLOCK_SIZE: tl.constexpr,  # columns per loop step
):
    # Every buffer starts 16-byte aligned: saying so lets Triton use 16-byte vector accesses.
    input_ptr = tl.multiple_of(input_ptr.to(tl.pointer_type(tl.float32)), 16)
    weight_ptr = tl.multiple_of(weight_ptr.to(tl.pointer_type(tl.float32)), 16)
    bias_ptr = tl.multiple_of(bias_ptr.to(tl.pointer_type(tl.float32)), 16)
    output_ptr = tl.multiple_of(output_ptr.to(tl.pointer_type(tl.float32)), 16)
    row = tl.program_id(axis=0)  # one program per row: the grid has exactly N programs
    row_start = row.to(tl.int64) * C

    # Loop 1: the mean. Each lane keeps its own partial sum; one reduction at the end.
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, C, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(input_ptr + row_start + cols, mask=cols < C, other=0.0)
    mean = tl.sum(acc, axis=0) / C

    # Loop 2: the biased variance of the centred values (padding masked out again).
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, C, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < C
        x = tl.load(input_ptr + row_start + cols, mask=mask, other=0.0)
        d = tl.where(mask, x - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / C + eps)

    # Loop 3: normalize, scale, shift. The row was just read: these reads mostly hit the cache.
    for start in range(0, C, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < C
        x = tl.load(input_ptr + row_start + cols, mask=mask)
        w = tl.load(weight_ptr + cols, mask=mask)
        b = tl.load(bias_ptr + cols, mask=mask)
        tl.store(output_ptr + row_start + cols, (x - mean) * rstd * w + b, mask=mask)


def solve(
    input_ptr: int, weight_ptr: int, bias_ptr: int, output_ptr: int, N: int, C: int, eps: float
):
    BLOCK_SIZE = min(triton.next_power_of_2(C), 4096)
    num_warps = 4 if BLOCK_SIZE <= 1024 else 8
    layer_norm_kernel[(N,)](
        input_ptr,
        weight_ptr,
        bias_ptr,
        output_ptr,
        C,
        eps,
        BLOCK_SIZE=BLOCK_SIZE,
        num_warps=num_warps,
    )
