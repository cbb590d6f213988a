"""Bot-versus-bot tournaments played through the service: a client of the public API like the
bot workers (it never imports `service`). Modules: `schedule` (deals, seatings, shards),
`results` (the resumable SQLite result file), `play` (tables over gRPC), `ratings`, `report`,
`cli` (`croupier tournament` and `croupier tournament-merge`)."""
