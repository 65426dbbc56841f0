"""AWS's input contract, enforced on every request before moto sees it (see types.py)."""
