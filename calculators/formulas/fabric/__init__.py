"""The scale-out fabric: how it is sized (tiers, switches, links, optics) and what
traffic sees of it: ring, alltoall and parameter-server patterns, flow collisions
under ECMP hashing, incast queues and loss recovery."""
