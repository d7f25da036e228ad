"""Validation of the model against published measurements: the serving-cases harness, the
serving-engine fit, the step-model calibration checks and the kernel microbenchmark check."""
