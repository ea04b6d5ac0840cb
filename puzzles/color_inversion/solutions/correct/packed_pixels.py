import triton
import triton.language as tl


@triton.jit
def color_inversion_kernel(
    image_ptr,  # address of the RGBA image, read and written in place
    n_pixels,  # width * height
    BLOCK_SIZE: tl.constexpr,  # pixels handled by one program
):
    # One pixel is 4 bytes: read it as one 32-bit word. On a little-endian GPU, R is the lowest
    # byte and A the highest, so XOR with 0x00FFFFFF flips R, G and B (255 - v = ~v for a byte)
    # and leaves A alone. The buffer is 16-byte aligned, so the 4-byte loads are aligned.
    image_ptr = image_ptr.to(tl.pointer_type(tl.int32))
    pid = tl.program_id(axis=0)  # which block of pixels this program handles
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_pixels
    pixel = tl.load(image_ptr + offsets, mask=mask)
    tl.store(image_ptr + offsets, pixel ^ 0x00FFFFFF, mask=mask)


def solve(image_ptr: int, width: int, height: int):
    n_pixels = width * height
    # A fixed block size: @triton.autotune would run the kernel once per trial, and every run
    # inverts the image again.
    BLOCK_SIZE = 4096
    grid = (triton.cdiv(n_pixels, BLOCK_SIZE),)
    color_inversion_kernel[grid](image_ptr, n_pixels, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
