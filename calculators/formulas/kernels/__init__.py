"""How fast one operation runs on one accelerator: the roofline (arithmetic against
memory bandwidth) that prices every operation of a training step."""
