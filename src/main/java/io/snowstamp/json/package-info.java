/**
 * The JSON check and splice, pure: {@code JsonIdSplicer} checks that a value is exactly one JSON
 * object within the limits and writes the ID into it without re-encoding it; {@code MemberNames}
 * finds an object's member names, {@code Utf8} checks UTF-8. No Kafka import (ArchitectureTest), so
 * it is tested and benchmarked alone; {@code stream/JsonValueField} is the adapter on the record's
 * path, {@code schema/} uses it for JSON Schema values.
 */
package io.snowstamp.json;
