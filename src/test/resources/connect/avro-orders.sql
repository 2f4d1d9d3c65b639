CREATE TABLE avro_orders (
    id        bigint PRIMARY KEY,   -- the value's id field
    customer  text,                 -- the other fields of the value's schema
    quantity  int,
    note      text
);
