"""The dense planner: the record of a costed layout, what one layout costs per step,
the search over TP x CP x PP x DP layouts, the floors that prune it, and the ranking
that recommends one."""
