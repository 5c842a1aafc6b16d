"""Built-in backends. Each is a plugin module registered through the same ``register_backends``
hook that third-party plugins implement."""
