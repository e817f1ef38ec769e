"""Scoring across processes and machines.

    distributed  splitting one call across torch.distributed ranks
    cluster      score_on_ray: a table scored across a Ray cluster, surviving a lost scorer or driver (imports ray
                 only when called)

The package imports none of them, so that importing one does not load the others."""
