"""Chapter 3: shared-memory banks, layouts and swizzles, and each kernel's predicted shared-memory traffic."""
