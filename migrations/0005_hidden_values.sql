-- 0005_hidden_values: hidden values enter the chain only as salted commitments (issue 10).
-- events.public: the chained form of an event with hidden values (data with each hidden value
-- replaced by {"commitment": hex}); NULL when the event has none or the game predates this
-- (canonical form 1). secrets.message_key: the key private table talk is committed under,
-- never revealed (NULL for games created before).
ALTER TABLE events ADD COLUMN public jsonb NULL;
ALTER TABLE secrets ADD COLUMN message_key bytea NULL CHECK (length(message_key) = 32);
