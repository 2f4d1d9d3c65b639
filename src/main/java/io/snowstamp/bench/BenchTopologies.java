package io.snowstamp.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.UUID;

/** The baselines snowstamp is measured against, built as users would write them. */
public final class BenchTopologies {
    private static final ObjectMapper JSON = new ObjectMapper();

    private BenchTopologies() {
    }

    /** A pass-through: every record copied unchanged to the output. */
    public static Topology identity(String input, String output) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .to(output, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
        return builder.build();
    }

    /** What one writes by hand: parse the JSON into a tree, add a random UUID, serialize again. */
    public static Topology jacksonUuid(String input, String output) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .mapValues(BenchTopologies::addUuid)
                .to(output, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
        return builder.build();
    }

    private static byte[] addUuid(byte[] value) {
        try {
            ObjectNode node = (ObjectNode) JSON.readTree(value);
            node.put("id", UUID.randomUUID().toString());
            return JSON.writeValueAsBytes(node);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
