"""The numerics chapters on the GPU: the rounding probe, error against K, Kernel D1's types."""
