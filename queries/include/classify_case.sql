-- The taxonomy's classification of a lower-cased description d: one WHEN per
-- type, in priority order, up to 32 types (the Go side refuses more), NULL
-- when no type matches. Not a statement: analyze/mappings_task_types.sql
-- and ingest/classify_facts.sql include it where they say
-- "@include include/classify_case.sql". Parameters: $tax_types and $tax_patterns
-- (parallel lists, one RE2 pattern per type). Indexing the parameter keeps
-- each pattern a constant, compiled once per query, where a join against
-- the list would compile it per row.
CASE
    WHEN regexp_matches(d, $tax_patterns[1]) THEN $tax_types[1]
    WHEN regexp_matches(d, $tax_patterns[2]) THEN $tax_types[2]
    WHEN regexp_matches(d, $tax_patterns[3]) THEN $tax_types[3]
    WHEN regexp_matches(d, $tax_patterns[4]) THEN $tax_types[4]
    WHEN regexp_matches(d, $tax_patterns[5]) THEN $tax_types[5]
    WHEN regexp_matches(d, $tax_patterns[6]) THEN $tax_types[6]
    WHEN regexp_matches(d, $tax_patterns[7]) THEN $tax_types[7]
    WHEN regexp_matches(d, $tax_patterns[8]) THEN $tax_types[8]
    WHEN regexp_matches(d, $tax_patterns[9]) THEN $tax_types[9]
    WHEN regexp_matches(d, $tax_patterns[10]) THEN $tax_types[10]
    WHEN regexp_matches(d, $tax_patterns[11]) THEN $tax_types[11]
    WHEN regexp_matches(d, $tax_patterns[12]) THEN $tax_types[12]
    WHEN regexp_matches(d, $tax_patterns[13]) THEN $tax_types[13]
    WHEN regexp_matches(d, $tax_patterns[14]) THEN $tax_types[14]
    WHEN regexp_matches(d, $tax_patterns[15]) THEN $tax_types[15]
    WHEN regexp_matches(d, $tax_patterns[16]) THEN $tax_types[16]
    WHEN regexp_matches(d, $tax_patterns[17]) THEN $tax_types[17]
    WHEN regexp_matches(d, $tax_patterns[18]) THEN $tax_types[18]
    WHEN regexp_matches(d, $tax_patterns[19]) THEN $tax_types[19]
    WHEN regexp_matches(d, $tax_patterns[20]) THEN $tax_types[20]
    WHEN regexp_matches(d, $tax_patterns[21]) THEN $tax_types[21]
    WHEN regexp_matches(d, $tax_patterns[22]) THEN $tax_types[22]
    WHEN regexp_matches(d, $tax_patterns[23]) THEN $tax_types[23]
    WHEN regexp_matches(d, $tax_patterns[24]) THEN $tax_types[24]
    WHEN regexp_matches(d, $tax_patterns[25]) THEN $tax_types[25]
    WHEN regexp_matches(d, $tax_patterns[26]) THEN $tax_types[26]
    WHEN regexp_matches(d, $tax_patterns[27]) THEN $tax_types[27]
    WHEN regexp_matches(d, $tax_patterns[28]) THEN $tax_types[28]
    WHEN regexp_matches(d, $tax_patterns[29]) THEN $tax_types[29]
    WHEN regexp_matches(d, $tax_patterns[30]) THEN $tax_types[30]
    WHEN regexp_matches(d, $tax_patterns[31]) THEN $tax_types[31]
    WHEN regexp_matches(d, $tax_patterns[32]) THEN $tax_types[32]
END
