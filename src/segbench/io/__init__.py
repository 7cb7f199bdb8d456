"""Files: where the project's data files are, JSON Schemas, atomic writes and hashes, mask and
image decoding, archive limits, a download's top folder, CPU count. Nothing here knows a benchmark."""
