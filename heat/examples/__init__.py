"""Runnable examples: ``python -m heat.examples.train``."""
