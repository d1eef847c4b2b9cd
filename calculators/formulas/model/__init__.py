"""The model and its arithmetic: what a transformer is (its shape and parameters) and
what it costs per token, in FLOPs, in the bytes of its model states and of its
activations, before any parallel layout."""
