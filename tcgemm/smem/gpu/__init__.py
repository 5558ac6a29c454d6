"""The bank-conflict chapter on the GPU: its predictions beside Nsight Compute's counters."""
