# expect: failed wrong-answer
# mistake: padding_in_variance
# Centres without re-masking: each padded column adds (0 - mean)^2 to the variance.
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(
    input_ptr, weight_ptr, bias_ptr, output_ptr, C, eps, BLOCK_SIZE: tl.constexpr
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    weight_ptr = weight_ptr.to(tl.pointer_type(tl.float32))
    bias_ptr = bias_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    row_start = tl.program_id(axis=0) * C
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < C
    x = tl.load(input_ptr + row_start + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / C
    centred = x - mean  # padding lanes hold 0 - mean, not 0
    var = tl.sum(centred * centred, axis=0) / C
    w = tl.load(weight_ptr + cols, mask=mask)
    b = tl.load(bias_ptr + cols, mask=mask)
    y = centred / tl.sqrt(var + eps) * w + b
    tl.store(output_ptr + row_start + cols, y, mask=mask)


def solve(
    input_ptr: int, weight_ptr: int, bias_ptr: int, output_ptr: int, N: int, C: int, eps: float
):
    layer_norm_kernel[(N,)](
        input_ptr,
        weight_ptr,
        bias_ptr,
        output_ptr,
        C,
        eps,
        BLOCK_SIZE=triton.next_power_of_2(C),
    )
