"""The exercises checked against the hardware: see tcgemm.practice.gpu.hardware."""
