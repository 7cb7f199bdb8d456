"""Procedural, offline generators of small synthetic datasets."""
