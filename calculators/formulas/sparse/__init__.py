"""Recommendation models: embedding tables and their bytes, placing them on GPUs,
one training step with a parameter server against collective training, and the data
pipeline that feeds it."""
