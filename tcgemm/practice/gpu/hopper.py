"""The hopper exercises checked on the GPU (see tcgemm.practice.gpu)."""
from __future__ import annotations

TRUTHS = {}
