def formula(x, sizes):
    return {"input_ptr": x["input_ptr"][::-1].copy()}
