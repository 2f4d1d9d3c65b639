CREATE TABLE orders (
    id     bigint PRIMARY KEY,   -- the snowstamp ID, from the header
    source text UNIQUE,          -- snowstamp-src, from the header
    n      bigint,               -- the fields of the embedded schema
    kind   text
);
