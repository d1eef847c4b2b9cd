"""The science: pure functions and small dataclasses, each formula with its citation.

Nothing here declares an input or an output (no ``Param``, ``Output`` or
``Calculator``) and nothing here imports a calculator module: calculators compose
these formulas, never each other.

The formulas live in subpackages by subject, in the order of ``SUBPACKAGES``: a
subpackage imports only itself and those before it (``tests/unit/test_layers.py``
holds the order, so there is no cycle). To find a formula, find its subject:

1. ``model``: the transformer and its arithmetic (parameters, FLOPs, state and
   activation bytes);
2. ``kernels``: how fast one operation runs on one accelerator;
3. ``collectives``: what a collective costs on given links;
4. ``fabric``: the scale-out network and what traffic sees of it;
5. ``parallel``: how a model is cut over GPUs, and what each GPU holds;
6. ``planner``: the dense planner's cost of a layout, its search and its ranking;
7. ``moe``: mixtures of experts and the planner with expert parallelism;
8. ``rl``: RL post-training: decoding rollouts, the RL step, the weight sync;
9. ``sparse``: recommendation models, embeddings, parameter servers;
10. ``failures``: failures, checkpoints and goodput of long runs;
11. ``site``: what a cluster draws from its site: IT and facility load, the swing.
"""

SUBPACKAGES = ("model", "kernels", "collectives", "fabric", "parallel", "planner", "moe",
               "rl", "sparse", "failures", "site")
