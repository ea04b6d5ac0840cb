"""The puzzle as data and the trusted core: specs, the catalogue, inputs, reference truths,
the comparison of bytes, timing statistics, result records. Imports nothing above it.
"""
