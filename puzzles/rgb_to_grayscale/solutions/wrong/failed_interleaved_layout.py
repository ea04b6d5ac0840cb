# expect: failed wrong-answer
# mistake: interleaved
# Reads the image as interleaved RGBRGB... (HWC, pixel p at 3p, 3p + 1, 3p + 2) although the input
# is planar (CHW): channel c of pixel p is at c * height * width + p.
import triton
import triton.language as tl


@triton.jit
def rgb_to_grayscale_kernel(
    input_ptr,  # address of the planar image: the R plane, then G, then B (each height x width)
    output_ptr,  # address of the grayscale image (height x width)
    num_pixels,  # width * height: pixels per plane
    BLOCK_SIZE: tl.constexpr,  # pixels handled by one program
):
    input_ptr = input_ptr.to(tl.pointer_type(tl.float32))
    output_ptr = output_ptr.to(tl.pointer_type(tl.float32))
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < num_pixels
    r = tl.load(input_ptr + 3 * offsets, mask=mask)
    g = tl.load(input_ptr + 3 * offsets + 1, mask=mask)
    b = tl.load(input_ptr + 3 * offsets + 2, mask=mask)
    tl.store(output_ptr + offsets, 0.299 * r + 0.587 * g + 0.114 * b, mask=mask)


def solve(input_ptr: int, output_ptr: int, width: int, height: int):
    num_pixels = width * height
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(num_pixels, BLOCK_SIZE),)
    rgb_to_grayscale_kernel[grid](input_ptr, output_ptr, num_pixels, BLOCK_SIZE=BLOCK_SIZE)
