"""What every role shares and no role owns: the logging set-up, credential masking, the client
channel and resend rule, and the names of the built-in bot levels.

It sits below the server (`service`), the bots (`bots`) and the clients (`clients`), above the
engines: those three import it, it imports none of them (the import contracts in
pyproject.toml, checked by tests/test_import_contracts.py).
"""
