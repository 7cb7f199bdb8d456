"""segbench: a reproducible benchmark harness for semantic segmentation."""

__version__ = "0.1.0"
