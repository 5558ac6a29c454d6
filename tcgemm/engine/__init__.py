"""The engine every chapter uses: the catalog, the plan, operand and output checks, reports, timing.
Pure (no CuPy); its GPU part is tcgemm.engine.gpu. It imports no chapter folder (.importlinter)."""
