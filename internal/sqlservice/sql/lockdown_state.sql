-- Whether the guard of lockdown.sql is in force: external access off and the
-- configuration locked.
SELECT NOT current_setting('enable_external_access')::BOOLEAN
       AND current_setting('lock_configuration')::BOOLEAN;
