"""The limits on what a file from a stranger may ask the harness to allocate: one frozen setting.

Every size that drives an allocation (an archive's members, a mask's side, a model's parameters,
its stride, the inference size, a text file read whole) is checked against a field of `LIMITS`
before anything is allocated, and refused naming the file, frame or field (docs/security.md,
where the table of these settings is). Change them here, nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """What a file from a stranger may hold or ask for (see docs/security.md)."""

    max_entries: int = 200_000  # entries in an archive (files and folders)
    max_mask_bytes: int = 64 << 20  # one mask file, as stored (uncompressed)
    max_total_bytes: int = 16 << 30  # all of a predictions archive's entries, uncompressed
    max_model_bytes: int = 8 << 30  # all of a .pt or TorchScript archive's members, uncompressed
    max_ratio: int = 200  # uncompressed / compressed size of a zip entry, or of a whole tar.gz
    max_rescale: int = 4  # a prediction's side at most this many times the ground truth's, at least 1/this
    max_mask_side: int = 16384  # a mask's side where nothing else bounds it (an upload without data, IDD's imgWidth)
    max_parameters: int = 1 << 31  # parameters and buffers of a network built from a file's arguments (8 GiB float32)
    max_stride: int = 1024  # a model's stride (inputs are padded to a multiple of it)
    max_inference_size: int = 8192  # the long side a frame is resized to for the model
    max_text_bytes: int = 64 << 20  # a text file read whole: frames.csv, a meta CSV (zipped or not), a polygon JSON


LIMITS = Limits()
