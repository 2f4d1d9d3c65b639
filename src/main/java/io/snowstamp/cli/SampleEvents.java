package io.snowstamp.cli;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/** Sample input: small JSON order events (~80 bytes) with keys spread over 1000 users. */
final class SampleEvents {
    private static final String[] KINDS = {"order.created", "order.paid", "order.shipped", "cart.updated"};
    private final SplittableRandom random;

    SampleEvents(long seed) {
        this.random = new SplittableRandom(seed);
    }

    byte[] key(long n) {
        return ("user-" + (n * 7919 % 1000)).getBytes(StandardCharsets.UTF_8);
    }

    byte[] value(long n) {
        String json = "{\"event\":\"" + KINDS[(int) (n % KINDS.length)] + "\",\"n\":" + n
                + ",\"user\":\"user-" + (n * 7919 % 1000) + "\",\"amount\":" + (random.nextInt(100_000) / 100.0)
                + ",\"currency\":\"EUR\"}";
        return json.getBytes(StandardCharsets.UTF_8);
    }
}
