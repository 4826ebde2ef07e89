"""The demo warehouse: a shop whose schema holds the traps real warehouses have."""
