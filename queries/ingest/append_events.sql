-- Move the staged batch into the event log.
INSERT INTO events SELECT * FROM batch_events;
