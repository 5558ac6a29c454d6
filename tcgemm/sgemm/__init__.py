"""Chapter 5: the Maxas SGEMM's thread layout and write-back, register banks and the operand reuse cache."""
