"""Failures and checkpoints over weeks: how often a long synchronous job stops, what a
checkpoint costs to write, the interval between them, and the goodput left."""
