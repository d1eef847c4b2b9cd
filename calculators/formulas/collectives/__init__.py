"""Collective communication: what an allreduce, allgather, reduce-scatter, alltoall or
broadcast costs on given links (the alpha-beta model), across nodes, and which
algorithm NCCL expects to win."""
