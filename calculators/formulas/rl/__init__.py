"""Reinforcement-learning post-training: generation (rollout) on the decode roofline, the
RL step's phases, the weight sync from trainer to generators, and where each phase runs
(colocated, disaggregated, asynchronous). The calculators ``rollout`` and ``rl_step``
compose these; the chapter "Post-training at scale" explains them.
"""
