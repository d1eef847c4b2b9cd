"""Mixtures of experts: their parameters and FLOPs, their layers as the planner sees
them, expert parallelism and its alltoall, and the planner with expert parallelism
built on the dense planner."""
