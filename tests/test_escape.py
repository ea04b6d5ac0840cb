"""Text from students made safe: terminal escapes and control characters removed, spreadsheet
formulas defused, XML-forbidden characters dropped, Markdown table cells escaped."""

import csv
import io
import xml.etree.ElementTree as ET

import pytest

from judge.records.escape import csv_text, markdown_cell, one_line, plain, xml_text

# ------------------------------------------------------------------------------- plain


@pytest.mark.parametrize(
    ("hostile", "shown"),
    [
        ("\x1b[31mred\x1b[0m text", "red text"),  # CSI colours
        ("\x1b[1;38;5;196mbold\x1b[m", "bold"),  # 256-colour CSI with parameters
        ("\x1b[2J\x1b[Hcleared", "cleared"),  # clear screen, cursor home
        ("\x1b[?25lhidden cursor\x1b[?25h", "hidden cursor"),  # private-mode CSI
        # OSC 8 hyperlinks, terminated by ST (ESC \) and by BEL
        ("\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\ me", "click me"),
        ("\x1b]8;;http://evil.example\x07click\x1b]8;;\x07", "click"),
        ("\x1b]0;pwned title\x07after", "after"),  # window title by OSC 0
        ("\x1b]2;pwned title\x1b\\after", "after"),  # window title by OSC 2
        ("\x1bPdevice control\x1b\\after", "after"),  # DCS string
        ("a\x1bb", "a"),  # ESC b: a two-character escape, both characters go
        ("a\x1b", "a"),  # a lone ESC at the end
        ("end\x1b", "end"),  # ESC at the very end
        ("\x1bMup\x1bDdown", "updown"),  # two-character escapes (reverse index, index)
        ("\x9b31mC1 CSI\x9b0m", "C1 CSI"),  # the one-byte CSI
        ("bell\x07", "bell"),
        ("nul\x00byte", "nulbyte"),
        ("back\x08space", "backspace"),
        ("del\x7fete", "delete"),
        ("c1\x85\x9d\x9c", "c1"),  # NEL, OSC and ST as C1 controls
        ("\u202eevil\u202c.py", "evil.py"),  # right-to-left override and pop
        ("\u2066isolate\u2069", "isolate"),  # bidi isolates
        ("\u200fmark\u200e", "mark"),  # right-to-left and left-to-right marks
        ("zero\u200bwidth\u200c\u200djoin\u2060\ufeff", "zerowidthjoin"),
    ],
)
def test_plain_removes_escapes_and_controls(hostile, shown):
    assert plain(hostile) == shown


@pytest.mark.parametrize(
    ("hostile", "shown"),
    [("\x1b7saved\x1b8", "saved"), ("\x1bcreset", "reset"), ("\x1b=keypad\x1b>", "keypad")],
)
def test_plain_removes_every_two_character_escape(hostile, shown):
    assert plain(hostile) == shown


def test_plain_keeps_tab_and_newline_and_makes_carriage_returns_newlines():
    assert plain("a\tb\nc") == "a\tb\nc"
    assert plain("one\r\ntwo\rthree") == "one\ntwo\nthree"
    assert plain("over\rwrite") == "over\nwrite"  # a \r cannot hide what came before it


def test_plain_keeps_ordinary_text_and_unicode():
    text = "Ærøskøbing: 温度 = 3 °C [ok] <b> & 'quotes' \"double\" 🙂"
    assert plain(text) == text


def test_plain_accepts_a_non_string():
    assert plain(42) == "42"


def test_plain_leaves_no_escape_or_control_character_in_a_mixed_attack():
    hostile = "\x1b[31m\x1b]0;t\x07\x9b2J\u202e\x00x\x1b\x00[y\x1b"
    out = plain(hostile)
    assert out == "x[y"
    assert not any(ord(ch) < 0x20 and ch not in "\t\n" for ch in out)
    assert not any(0x7F <= ord(ch) <= 0x9F for ch in out)


def test_one_line_joins_lines_and_runs_of_white_space():
    assert one_line("  first\n\tsecond\r\nthird  \x1b[1m fourth\x1b[0m ") == (
        "first second third fourth"
    )
    assert one_line("") == ""


# ------------------------------------------------------------------------------- CSV


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "|", "%", "\t"])
def test_csv_text_prefixes_a_formula_start(start):
    cell = f'{start}HYPERLINK("http://evil","x")'
    assert csv_text(cell) == "'" + cell


@pytest.mark.parametrize(
    "text",
    ["alice", "1+1", "a=b", " x", "'quoted", "(1)", "#tag", "", "3.14", "x-1"],
)
def test_csv_text_leaves_other_cells(text):
    assert csv_text(text) == text


def test_csv_text_sees_the_formula_behind_an_escape():
    assert csv_text("\x1b[31m=1+2\x1b[0m") == "'=1+2"
    assert csv_text("\u200b\u202e@SUM(A1)") == "'@SUM(A1)"
    assert csv_text("\ufeff-2+3") == "'-2+3"
    assert csv_text("\x00=cmd") == "'=cmd"


def test_csv_text_carriage_return_start_becomes_a_newline_start():
    # \r becomes \n, which starts no formula; the csv module quotes it.
    assert csv_text("\r=1") == "\n=1"


def test_csv_text_round_trips_through_the_csv_module():
    cells = [csv_text("=cmd|' /C calc'!A0"), csv_text('a,"b"\nc')]
    buffer = io.StringIO()
    csv.writer(buffer).writerow(cells)
    assert next(csv.reader(io.StringIO(buffer.getvalue()))) == [
        "'=cmd|' /C calc'!A0",
        'a,"b"\nc',
    ]


# ------------------------------------------------------------------------------- XML


def test_xml_text_removes_xml_forbidden_characters():
    assert xml_text("a\x0bb\x0cc") == "abc"
    assert xml_text("x\ufffey\uffffz") == "xyz"
    assert xml_text("lone \udc80 surrogate") == "lone  surrogate"
    assert xml_text("\x1b[31mred\x1b[0m\x00") == "red"


def test_xml_text_keeps_markup_characters_for_elementtree_to_escape():
    text = "a < b && c > d ]]> \"q\" 'q'\tend\nnext 🙂 \ue000"
    assert xml_text(text) == text
    element = ET.Element("failure", message=xml_text("<x>&"))
    element.text = xml_text("]]> <tag> & \x0b\ufffe")
    back = ET.fromstring(ET.tostring(element, encoding="unicode"))
    assert back.get("message") == "<x>&"
    assert back.text == "]]> <tag> & "


# ------------------------------------------------------------------------------- Markdown


def test_markdown_cell_escapes_table_html_and_inline_syntax():
    assert markdown_cell("a|b") == "a\\|b"
    assert markdown_cell("<script>x</script>") == "&lt;script&gt;x&lt;/script&gt;"
    assert markdown_cell("&amp; &#x41;") == "&amp;amp; &amp;#x41;"
    assert markdown_cell("`code`") == "\\`code\\`"
    assert markdown_cell("*bold* _it_") == "\\*bold\\* \\_it\\_"
    assert markdown_cell("[link](http://evil)") == "\\[link\\](http://evil)"
    assert markdown_cell("![img](x.png)") == "!\\[img\\](x.png)"
    assert markdown_cell("back\\slash") == "back\\\\slash"
    assert markdown_cell("\\|") == "\\\\\\|"  # an escaped bar stays a literal bar


def test_markdown_cell_joins_lines_and_strips_escapes():
    assert markdown_cell("first\nsecond\r\n\x1b[31mthird\x1b[0m") == "first second third"
    assert markdown_cell("\u202eevil | row\n| --- |") == "evil \\| row \\| --- \\|"


def test_markdown_cell_keeps_plain_text():
    assert markdown_cell("alice 3.5 us, 80% sol") == "alice 3.5 us, 80% sol"


def test_markdown_cell_escapes_strikethrough():
    assert markdown_cell("~~struck~~") == "\\~\\~struck\\~\\~"
