"""The pure core: label spaces, benchmark definitions as data, confusion counts, metrics, their
registry, evaluation, bootstrap, boundary bands, a model's spec. No I/O: every function here is
computed from its arguments; nothing reads or writes a file."""
