import triton
import triton.language as tl


@triton.jit
def color_inversion_kernel(
    image_ptr,  # address of the RGBA image, read and written in place
    n_bytes,  # width * height * 4
    BLOCK_SIZE: tl.constexpr,  # bytes handled by one program
):
    image_ptr = image_ptr.to(tl.pointer_type(tl.uint8))
    # Your code: find this program's block of bytes, build its offsets and mask, load,
    # replace v by 255 - v where the channel (offset % 4) is R, G or B, store.


# image_ptr is a device address (Python int); width and height are in pixels.
def solve(image_ptr: int, width: int, height: int):
    n_bytes = width * height * 4
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(n_bytes, BLOCK_SIZE),)
    color_inversion_kernel[grid](image_ptr, n_bytes, BLOCK_SIZE=BLOCK_SIZE)
