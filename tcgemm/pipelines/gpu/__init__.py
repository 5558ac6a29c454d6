"""The pipelines chapter on the GPU: the ablation's runs, occupancy from the driver."""
