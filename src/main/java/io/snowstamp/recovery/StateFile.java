package io.snowstamp.recovery;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.snowstamp.SnowstampException;
import io.snowstamp.state.WorkerState;
import io.snowstamp.state.WorkerStateJson;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The export file of {@code changelog export} / {@code changelog import}: JSON lines, UTF-8.
 * <pre>
 * line 1:  {"format":"snowstamp-worker-state","version":1,"applicationId":"A",
 *           "exportedAt":"2026-01-01T00:00:00.000Z","layout":"t41.d0.w10.s12.u1ms.e1577836800000.mid"}
 * line 2+: {"partition":0,"layoutFingerprint":"t41...","workerId":0,"epoch":3,"holder":"host/thread",
 *           "acquiredAt":1767225600000,"heartbeatAt":1767225605000,"lastId":123,"reservedUntil":456}
 * </pre>
 * One line per partition, every {@link WorkerState} field, times in Unix millis, -1 = no ID. The
 * header's {@code layout} is the layout configured when exporting. Reading refuses another format,
 * another version, a missing or mistyped field, an unknown field, a repeated partition and a state
 * {@link WorkerState} itself refuses: a backup that cannot be read exactly is never half-imported.
 */
public record StateFile(Header header, SortedMap<Integer, WorkerState> states) {
    public static final String FORMAT = "snowstamp-worker-state";
    public static final int VERSION = 1;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> HEADER_FIELDS = Set.of("format", "version", "applicationId", "exportedAt", "layout");
    private static final Set<String> STATE_FIELDS = Set.of("partition", "layoutFingerprint", "workerId", "epoch", "holder",
            "acquiredAt", "heartbeatAt", "lastId", "reservedUntil");

    /** The first line. {@code exportedAt} is an ISO-8601 instant, {@code layout} a layout fingerprint. */
    public record Header(String applicationId, String exportedAt, String layout) {
    }

    public StateFile {
        states = Collections.unmodifiableSortedMap(new TreeMap<>(states));
    }

    /** Writes the header and one line per partition, in partition order. */
    public void write(PrintWriter out) {
        out.println(text(new HeaderLine(FORMAT, VERSION, header.applicationId(), header.exportedAt(), header.layout())));
        states.forEach((partition, state) -> out.println(text(new StateLine(partition, WorkerStateJson.of(state)))));
        out.flush();
    }

    /** Line 1 as written. */
    private record HeaderLine(String format, int version, String applicationId, String exportedAt, String layout) {
    }

    /** Lines 2+ as written: the partition, then the state's own JSON view. */
    private record StateLine(int partition, @JsonUnwrapped WorkerStateJson state) {
    }

    /**
     * Reads a file written by {@link #write}; blank lines are skipped.
     *
     * @param name how to call the input in error messages (the file name)
     * @throws SnowstampException naming the line for anything that is not exactly this format
     */
    public static StateFile read(BufferedReader in, String name) {
        Header header = null;
        SortedMap<Integer, WorkerState> states = new TreeMap<>();
        int number = 0;
        try {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                number++;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode node = parse(line, name, number);
                if (header == null) {
                    header = header(node, name, number);
                    continue;
                }
                Where where = new Where(name, number);
                fields(node, STATE_FIELDS, where);
                int partition = (int) longField(node, "partition", 0, Integer.MAX_VALUE, where);
                WorkerState state;
                try {
                    state = new WorkerState(textField(node, "layoutFingerprint", where), longField(node, "workerId", 0, Long.MAX_VALUE, where),
                            longField(node, "epoch", 0, Long.MAX_VALUE, where), textField(node, "holder", where),
                            longField(node, "acquiredAt", Long.MIN_VALUE, Long.MAX_VALUE, where),
                            longField(node, "heartbeatAt", Long.MIN_VALUE, Long.MAX_VALUE, where),
                            longField(node, "lastId", -1, Long.MAX_VALUE, where),
                            longField(node, "reservedUntil", -1, Long.MAX_VALUE, where));
                } catch (IllegalArgumentException e) {
                    throw where.error(e.getMessage());
                }
                if (states.put(partition, state) != null) {
                    throw where.error("partition " + partition + " appears twice");
                }
            }
        } catch (IOException e) {
            throw new SnowstampException("cannot read " + name + ": " + e.getMessage(), e);
        }
        if (header == null) {
            throw new SnowstampException(name + " is empty: expected a snowstamp worker-state export (written by 'changelog export')");
        }
        return new StateFile(header, states);
    }

    private static Header header(JsonNode node, String name, int number) {
        JsonNode format = node.get("format");
        if (format == null || !format.isTextual() || !format.asText().equals(FORMAT)) {
            throw new SnowstampException(name + " is not a snowstamp worker-state export: line " + number
                    + " has format " + (format == null ? "(none)" : format) + ", expected \"" + FORMAT + "\"");
        }
        JsonNode version = node.get("version");
        if (version == null || !version.isIntegralNumber() || version.asLong() != VERSION) {
            throw new SnowstampException(name + " has format version " + (version == null ? "(none)" : version)
                    + ": this snowstamp reads version " + VERSION + " only (written by a newer snowstamp?)");
        }
        Where where = new Where(name, number);
        fields(node, HEADER_FIELDS, where);
        return new Header(textField(node, "applicationId", where), textField(node, "exportedAt", where),
                textField(node, "layout", where));
    }

    private static JsonNode parse(String line, String name, int number) {
        try {
            JsonNode node = JSON.readTree(line);
            if (node == null || !node.isObject()) {
                throw new Where(name, number).error("not a JSON object");
            }
            return node;
        } catch (JsonProcessingException e) {
            throw new Where(name, number).error("not valid JSON (" + e.getOriginalMessage() + ")");
        }
    }

    /** Every expected field present, no other. */
    private static void fields(JsonNode node, Set<String> expected, Where where) {
        Set<String> missing = new LinkedHashSet<>(expected);
        for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
            String field = names.next();
            if (!missing.remove(field)) {
                throw where.error("unknown field \"" + field + "\": accepted " + String.join(", ", sorted(expected)));
            }
        }
        if (!missing.isEmpty()) {
            throw where.error("missing field" + (missing.size() > 1 ? "s " : " ") + String.join(", ", missing));
        }
    }

    private static List<String> sorted(Set<String> names) {
        return names.stream().sorted().toList();
    }

    private static String textField(JsonNode node, String field, Where where) {
        JsonNode value = node.get(field);
        if (!value.isTextual()) {
            throw where.error(field + "=" + value + " is invalid: accepted a string");
        }
        return value.asText();
    }

    private static long longField(JsonNode node, String field, long min, long max, Where where) {
        JsonNode value = node.get(field);
        if (!value.isIntegralNumber() || !value.canConvertToLong() || value.asLong() < min || value.asLong() > max) {
            throw where.error(field + "=" + value + " is invalid: accepted a whole number " + min + ".." + max);
        }
        return value.asLong();
    }

    private static String text(Object line) {
        try {
            return JSON.writeValueAsString(line);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }

    private record Where(String name, int line) {
        SnowstampException error(String message) {
            return new SnowstampException(name + " line " + line + ": " + message);
        }
    }
}
