"""Data with sources: the hardware catalogue, published model and cluster presets, and
the embedding-table lists. Each entry cites where its figures come from."""
