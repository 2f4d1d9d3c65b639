package io.snowstamp.lease;

import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Who holds a lease: {@code instance-id#nonce/stream-thread}. The nonce is drawn once per process start, so two
 * processes never name the same holder — not two instances left with the same {@code instance.id} (the host name by
 * default: two containers of one host, a copy-pasted configuration), nor a process and its own restart — and a
 * lease record always says which run of which instance wrote it ({@code changelog inspect} shows it).
 */
public final class Holders {
    /** 8 hex digits, new at every start of the JVM. */
    static final String NONCE = HexFormat.of().toHexDigits(new SecureRandom().nextInt());

    private Holders() {
    }

    /** The holder the calling stream thread of this process names for {@code instanceId}. */
    public static String of(String instanceId) {
        return instanceId + "#" + NONCE + "/" + Thread.currentThread().getName();
    }
}
