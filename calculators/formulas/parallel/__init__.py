"""Parallel layouts of one model: how layers are cut into pipeline stages and
scheduled, where each group sits in the scale-up domain, what context parallelism
sends, and what each GPU holds in memory under a layout."""
