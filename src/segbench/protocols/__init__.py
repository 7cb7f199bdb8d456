"""Protocols as data: benchmark definitions read from config/, and each protocol's specifics that
are not tables alone (IDD: its label table, level hierarchy, folder layout and polygon rasteriser)."""
