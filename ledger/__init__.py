"""The ledger: what makes a game's record trustworthy, as pure functions of its rows and seed
(no I/O, no clock, no environment; imports nothing of ours but ``domain``).

The hash chain (:mod:`ledger.chain`), commitments to hidden values and their salts
(:mod:`ledger.commitments`, checked by :mod:`ledger.openings`), the RFC 9162 Merkle tree with
inclusion and consistency proofs (:mod:`ledger.merkle`) and signed tree heads
(:mod:`ledger.treeheads`), receipts signed and verified over a signer handed in
(:mod:`ledger.receipts`), the ruling that decides a command and folds its events into the next
table (:mod:`ledger.ruling`), the answer it builds (:mod:`ledger.answers`), and the export and
dispute files with their verification (:mod:`ledger.exportfile`, :mod:`ledger.audit`,
:mod:`ledger.adjudication`, :mod:`ledger.clocking`, :mod:`ledger.evidence`). The application,
the event store, the CLI and the offline verifier use it: a library, not a layer."""
