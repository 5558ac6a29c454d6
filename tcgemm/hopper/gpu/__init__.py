"""The Hopper chapter on the GPU: wgmma probes, TRACE timelines, NVML power, Kernel 5.7's operand orders."""
