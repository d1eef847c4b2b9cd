"""What a training cluster draws from its site: the IT load of its GPUs, hosts, network
and storage, the facility load through the PUE, the energy over a run, and the swing
of a synchronous job between computing and waiting."""
