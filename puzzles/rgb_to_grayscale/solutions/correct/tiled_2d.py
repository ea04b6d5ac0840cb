import triton
import triton.language as tl


@triton.jit
def rgb_to_grayscale_kernel(
    input_ptr,  # address of the planar image: the R plane, then G, then B (each height x width)
    output_ptr,  # address of the grayscale image (height x width)
    width,  # pixels per row
    height,  # rows
    BLOCK_H: tl.constexpr,  # rows of the tile handled by one program
    BLOCK_W: tl.constexpr,  # columns of the tile handled by one program
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    pid_h = tl.program_id(axis=0)  # which block of rows
    pid_w = tl.program_id(axis=1)  # which block of columns
    ys = pid_h * BLOCK_H + tl.arange(0, BLOCK_H)
    xs = pid_w * BLOCK_W + tl.arange(0, BLOCK_W)
    mask = (ys[:, None] < height) & (xs[None, :] < width)
    pixel = ys[:, None] * width + xs[None, :]  # offset inside one plane
    plane = height * width  # distance from one channel's plane to the next
    r = tl.load(input_ptr + pixel, mask=mask)
    g = tl.load(input_ptr + plane + pixel, mask=mask)
    b = tl.load(input_ptr + 2 * plane + pixel, mask=mask)
    tl.store(output_ptr + pixel, 0.299 * r + 0.587 * g + 0.114 * b, mask=mask)


def solve(input_ptr: int, output_ptr: int, width: int, height: int):
    BLOCK_H = 8
    BLOCK_W = 256
    grid = (triton.cdiv(height, BLOCK_H), triton.cdiv(width, BLOCK_W))
    rgb_to_grayscale_kernel[grid](
        input_ptr, output_ptr, width, height, BLOCK_H=BLOCK_H, BLOCK_W=BLOCK_W, num_warps=8
    )
