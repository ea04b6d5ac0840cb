def formula(x, sizes):
    pixels = x["image_ptr"].reshape(-1, 4).copy()
    pixels[:, 0:3] = 255.0 - pixels[:, 0:3]
    return {"image_ptr": pixels.reshape(-1)}
