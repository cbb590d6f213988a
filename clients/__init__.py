"""Croupier's own person-facing clients: `croupier play` and `watch` in a terminal
(`terminal`, with a layout per game in `render/`), `croupier tables` (`lobby`), and how they
reach a server from the address a person types (`server_address`).

They are gRPC clients like any frontend: they import `common` and `engines` (option parsing,
move notation), never `service` or `bots` (the import contracts in pyproject.toml).
"""
