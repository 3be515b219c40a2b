"""Lab side of HIL: inventory (lab.yaml), leases, identity checks, virtual boards and the suite runner."""
