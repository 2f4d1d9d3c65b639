/**
 * The ID as a field of values framed for a schema registry (Confluent's wire format: byte 0, a 4-byte
 * schema ID, then Avro binary or Protobuf message indexes and message), without decoding them: the
 * framing ({@code WireFormat}), the output schemas (the input schema plus the field: {@code AvroEvolution},
 * {@code ProtobufEvolution}) and the per-record append ({@code Stamping}). Not the worker registry
 * ({@code io.snowstamp.registry}). May use config only.
 */
package io.snowstamp.schema;
