"""What clients read: per-game projections folded from the event stream, kept in Redis (or in
process when no Redis is configured), each tagged with the stream version it reflects."""
