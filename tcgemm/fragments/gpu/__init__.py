"""The fragments chapters on the GPU (WMMA)."""
