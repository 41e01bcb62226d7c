-- A rebuild derives the typed tables from the whole event log.
CREATE OR REPLACE TEMP VIEW batch_events AS SELECT * FROM events;
