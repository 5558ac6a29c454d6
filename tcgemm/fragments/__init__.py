"""Chapters 1 and 2: which lane holds which element of an mma.sync or ldmatrix fragment, and the pictures of it."""
