"""Proving what happened: the audit of a stored game (:mod:`service.audit.audit`, a pure
function of its rows and seed, :mod:`service.audit.evidence`; its rules check in
:mod:`service.audit.adjudication`, its commitments check in :mod:`service.audit.openings`),
commitments to hidden values (:mod:`service.audit.commitments`), signed receipts and keys
(:mod:`service.audit.receipts`), the RFC 9162 Merkle tree and signed tree heads
(:mod:`service.audit.merkle`, :mod:`service.audit.treeheads`), and the export file, read back
offline (:mod:`service.audit.exportfile`). Reads records of the event store; writes nothing."""
