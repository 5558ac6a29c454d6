"""Everything that touches the GPU. The only place in tcgemm that imports CuPy."""
