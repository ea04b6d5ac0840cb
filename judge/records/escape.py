"""Text from students (names, file names, what a submission printed, messages that quote them)
made safe for each output format: terminal escapes and control characters removed everywhere,
then each format's own metacharacters escaped.

Pure: strings in, strings out.
"""

from __future__ import annotations

import re

# ESC [ ... final (CSI), ESC ] ... BEL or ESC \ (OSC), ESC P/X/^/_ ... ESC \ (strings), and the
# two-character escapes; then the C0 and C1 controls but tab and newline, DEL, and the Unicode
# characters that reorder or hide text (bidirectional overrides and isolates, zero-width ones).
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[ -/]*[0-~]?"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
_XML_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_FORMULA = ("=", "+", "-", "@", "\t", "\r", "|", "%")


def plain(text: str) -> str:
    """Text without terminal escape sequences or control characters (tab and newline kept;
    carriage returns become newlines)."""
    text = str(text).replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", _ANSI.sub("", text))


def one_line(text: str) -> str:
    """Plain text on one line, runs of white space made one space."""
    return " ".join(plain(text).split())


def csv_text(text: str) -> str:
    """A CSV cell of text that a spreadsheet will not run: a cell that would start a formula
    (= + - @, and | % that some spreadsheets read as commands) is prefixed with '. The csv
    module quotes commas, quotes and newlines."""
    text = plain(text)
    return "'" + text if text.startswith(_FORMULA) else text


def xml_text(text: str) -> str:
    """Text XML 1.0 can hold (ElementTree escapes & < > and quotes)."""
    return _XML_FORBIDDEN.sub("", plain(text))


def markdown_cell(text: str) -> str:
    """Text safe inside a Markdown table cell: one line, no bare '|', no HTML tags or entities,
    no emphasis, strikethrough, code or link syntax taken from the text."""
    text = one_line(text).replace("\\", "\\\\").replace("|", "\\|")
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([`*_~\[\]])", r"\\\1", text)
