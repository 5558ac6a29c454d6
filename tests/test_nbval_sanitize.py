"""The nbval sanitisation masks what changes from run to run and keeps what the book means."""
import re
from pathlib import Path

import pytest
from nbval.plugin import get_sanitize_patterns

CFG = Path(__file__).with_name("nbval_sanitize.cfg")


def sanitize(text: str) -> str:
    # What nbval's IPyNbCell.sanitize does with the file's patterns.
    for regex, replace in get_sanitize_patterns(CFG.read_text()):
        text = re.sub(regex, replace, text)
    return text


def test_config_has_patterns():
    assert len(get_sanitize_patterns(CFG.read_text())) >= 4


@pytest.mark.parametrize("text, expected", [
    ("mma_v1: 12.5 us, 312.4 TFLOP/s", "mma_v1: <TIME>, <FLOPS>"),
    ("best 0.41 ms", "best <TIME>"),
    ("took 2 s", "took <TIME>"),
    ("800ns per launch", "<TIME> per launch"),
    ("3 µs", "<TIME>"),
    ("1.2e3 GFLOP/s", "<FLOPS>"),
    ("2.9 TB/s", "<BANDWIDTH>"),
    ("<Figure object at 0x7f3a2c1d5e50>", "<Figure object at <ADDR>>"),
    ("ptr=0x7f0000123400", "ptr=<ADDR>"),
])
def test_masks_what_varies(text, expected):
    assert sanitize(text) == expected


@pytest.mark.parametrize("text", [
    "fp16 one is 0x3c00, fp32 one is 0x3f800000",
    "<Figure size 640x480 with 1 Axes>",
    "132 SMs, sm_90, 16 steps, 4 stages",
    "tile 128x128x32, 8 warps",
    "max abs error 0.0",
])
def test_keeps_what_the_book_means(text):
    assert sanitize(text) == text
