package io.snowstamp.registry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * The registry's record format, version 1: a UTF-8 JSON object, readable by any consumer (kcat,
 * a script). Fields: {@code version} (1), {@code space}, {@code datacenter}, {@code application},
 * {@code firstWorker}, {@code count}, {@code layout} (the layout fingerprint, e.g.
 * {@code t41.d0.w10.s12.u1ms.e1577836800000.mid}), {@code input}, {@code output}, {@code instance}
 * (who wrote the record), {@code claimedAt} and {@code heartbeatAt} (Unix millis), {@code state}
 * ({@code active}, {@code released}, {@code withdrawn}), {@code claimOffset} (offset of the claim's
 * first record, -1 in that record itself), {@code registryId} (the registry topic's id when
 * {@code claimOffset} was taken), {@code marks} (released claims: worker -> highest ID it may have
 * issued, -1 none), {@code note}. Unknown fields are ignored (a newer minor writer), a higher
 * version is refused.
 */
public final class ClaimCodec {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ClaimCodec() {
    }

    public static byte[] encode(Claim claim) {
        ObjectNode node = JSON.createObjectNode();
        node.put("version", Claim.VERSION);
        node.put("space", claim.space());
        node.put("datacenter", claim.datacenter());
        node.put("application", claim.application());
        node.put("firstWorker", claim.firstWorker());
        node.put("count", claim.count());
        node.put("layout", claim.layout());
        node.put("input", claim.input());
        node.put("output", claim.output());
        node.put("instance", claim.instance());
        node.put("claimedAt", claim.claimedAt());
        node.put("heartbeatAt", claim.heartbeatAt());
        node.put("state", claim.state().toString());
        node.put("claimOffset", claim.claimOffset());
        node.put("registryId", claim.registryId());
        ObjectNode marks = node.putObject("marks");
        claim.marks().forEach((worker, mark) -> marks.put(Long.toString(worker), mark));
        node.put("note", claim.note());
        try {
            return JSON.writeValueAsBytes(node);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write a registry record", e);
        }
    }

    /**
     * @throws IllegalArgumentException if the bytes are not a registry record of a known version
     */
    public static Claim decode(byte[] value) {
        JsonNode node;
        try {
            node = JSON.readTree(value);
        } catch (IOException e) {
            throw new IllegalArgumentException("not JSON: " + e.getMessage().lines().findFirst().orElse(""));
        }
        if (node == null || !node.isObject()) {
            throw new IllegalArgumentException("not a JSON object");
        }
        int version = node.path("version").asInt(-1);
        if (version < 1 || version > Claim.VERSION) {
            throw new IllegalArgumentException("record version " + node.path("version") + " is not supported (this version reads 1.."
                    + Claim.VERSION + "; upgrade snowstamp)");
        }
        TreeMap<Long, Long> marks = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = node.path("marks").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            marks.put(Long.parseLong(entry.getKey()), entry.getValue().asLong());
        }
        Claim.State state;
        try {
            state = Claim.State.valueOf(text(node, "state").toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown state " + node.path("state"));
        }
        return new Claim(text(node, "space"), number(node, "datacenter"), text(node, "application"), number(node, "firstWorker"),
                (int) number(node, "count"), text(node, "layout"), node.path("input").asText(""), node.path("output").asText(""),
                node.path("instance").asText(""), node.path("claimedAt").asLong(0), node.path("heartbeatAt").asLong(0), state,
                node.path("claimOffset").asLong(-1), node.path("registryId").asText(""), marks, node.path("note").asText(""));
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || !value.isTextual() || value.asText().isEmpty()) {
            throw new IllegalArgumentException("field " + field + " is missing or not text");
        }
        return value.asText();
    }

    private static long number(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || !value.canConvertToLong() || value.asLong() < 0) {
            throw new IllegalArgumentException("field " + field + " is missing or not a whole number >= 0");
        }
        return value.asLong();
    }
}
