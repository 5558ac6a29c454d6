"""The numerics chapters: rounding of each mma type, emulated reduced-precision inputs, Kernel D1's input types."""
