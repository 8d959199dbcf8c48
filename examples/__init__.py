"""Examples for third parties: a typed Python client over the REST API and a bot."""
