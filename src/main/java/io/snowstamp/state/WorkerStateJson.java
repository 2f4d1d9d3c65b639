package io.snowstamp.state;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * The one JSON view of a {@link WorkerState}, serialised by Jackson as it is (embed it with
 * {@code @JsonUnwrapped} next to other fields):
 * <pre>
 * "layoutFingerprint":"t41...","workerId":0,"epoch":3,"holder":"host/thread",
 * "acquiredAt":1767225600000,"heartbeatAt":1767225605000,"lastId":123,"reservedUntil":456
 * </pre>
 * Times in Unix millis, -1 = no ID. These names and this order are the export file format
 * ({@code snowstamp-worker-state} version 1) and the {@code changelog history --format json} lines:
 * changing them breaks files already written. {@code writtenAt} is not part of it (version 1 had none).
 */
@JsonPropertyOrder({"layoutFingerprint", "workerId", "epoch", "holder", "acquiredAt", "heartbeatAt", "lastId", "reservedUntil"})
public record WorkerStateJson(String layoutFingerprint, long workerId, long epoch, String holder, long acquiredAt,
                              long heartbeatAt, long lastId, long reservedUntil) {

    public static WorkerStateJson of(WorkerState state) {
        return new WorkerStateJson(state.layoutFingerprint(), state.workerId(), state.epoch(), state.holder(), state.acquiredAt(),
                state.heartbeatAt(), state.lastId(), state.reservedUntil());
    }
}
