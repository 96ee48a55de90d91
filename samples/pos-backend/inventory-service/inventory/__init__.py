"""inventory-service: store stock levels and reservations for in-flight checkouts."""
