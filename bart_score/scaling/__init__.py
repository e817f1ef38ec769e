"""Scoring across processes and machines.

    _distributed  splitting one call across torch.distributed ranks
    cluster       score_on_ray: a table scored across a Ray cluster, surviving a lost scorer or driver (imports ray
                 only when called); its private parts:
    _cluster_input    the input, read and checked before the cluster is reached
    _cluster_ray      Ray itself: reaching a cluster, or starting a local one that ends with the driver
    _cluster_pool     the scorers: the pool's size, the actor that scores batches, the rows' signatures
    _cluster_output   the output folder, checked before a run and at its end

The package imports none of them, so that importing one does not load the others."""
