"""Chapter 4: the cp.async ring buffer simulated and drawn, occupancy from a kernel's resources, time fitted over K."""
