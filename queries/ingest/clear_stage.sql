DELETE FROM batch_events;
