"""Benchmark harness: datasets (catalogs and query sets), metrics, and runners."""
