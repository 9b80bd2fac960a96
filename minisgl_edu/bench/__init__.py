"""Benchmarks (speed lives here, never in timed tests). See docs/benchmarks.md for results."""
