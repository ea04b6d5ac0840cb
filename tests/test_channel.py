from judge.workers.channel import OUTPUT_HEAD, OUTPUT_TAIL, CappedOutput


def test_capped_output_keeps_head_and_tail():
    out = CappedOutput()
    out.add(b"A" * OUTPUT_HEAD)
    for _ in range(100):
        out.add(b"B" * 10_000)
    out.add(b"END")
    text = out.text()
    assert text.startswith("A" * OUTPUT_HEAD) and text.endswith("B" * 100 + "END")
    assert f"[... {out.total - OUTPUT_HEAD - OUTPUT_TAIL} bytes of output omitted ...]" in text


def test_short_output_is_kept_whole():
    out = CappedOutput()
    out.add(b"hello\n")
    out.add(b"world\n")
    assert out.text() == "hello\nworld\n"
