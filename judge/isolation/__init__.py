"""Isolated execution: the worker process (forked from a pre-imported zygote), the channel
to it, the trusted parent that judges one submission, and batches over GPUs.
"""
