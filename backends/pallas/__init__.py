"""pallas backend (being written)."""
