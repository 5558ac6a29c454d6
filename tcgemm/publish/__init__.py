"""Making the book: recording notebooks on a GPU (make record), their stamps, and fixes to the built HTML."""
