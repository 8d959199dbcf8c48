"""The SQL migrations (``NNNN_name.sql``), applied by :mod:`service.eventstore.migrate`.

A package only so that a wheel (``pip install .``) ships them beside ``service/``, where
``service.eventstore.migrate`` finds them; there is no Python here.
"""
