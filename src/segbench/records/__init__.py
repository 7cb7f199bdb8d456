"""The harness's own documents, read and written: the dataset manifest and checkpoint hashes, the
frame index, a model's identity record, per-frame counts as Parquet, predictions from strangers."""
