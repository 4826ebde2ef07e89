"""Benchmark datasets and metrics."""
