package io.snowstamp.config;

import java.time.Duration;

/**
 * The {@code recovery.*} keys: what every task start does to resume above what was issued before.
 *
 * @param tailGuard        whether a task reads its output partition's tail at start (the tail guard)
 * @param tailGuardTimeout how long the tail guard (and the other start-time reads of Kafka) may take
 * @param takeoverGap      time added to the resume point at every task start
 * @param stallAfter       how long a held partition with input waiting may issue nothing before the stream threads are
 *                         restarted ({@link Duration#ZERO}: never)
 */
public record RecoverySettings(boolean tailGuard, Duration tailGuardTimeout, Duration takeoverGap, Duration stallAfter) {

    /** The settings with the stall watch off. */
    public RecoverySettings(boolean tailGuard, Duration tailGuardTimeout, Duration takeoverGap) {
        this(tailGuard, tailGuardTimeout, takeoverGap, Duration.ZERO);
    }

    static RecoverySettings from(Values v, ConnectionSettings.Guarantee guarantee) {
        return new RecoverySettings(v.bool(Keys.RECOVERY_TAIL_GUARD),
                v.duration(Keys.RECOVERY_TAIL_GUARD_TIMEOUT, Duration.ofSeconds(1), Duration.ofHours(1)),
                v.isSet(Keys.RECOVERY_TAKEOVER_GAP) ? v.duration(Keys.RECOVERY_TAKEOVER_GAP, Duration.ZERO, Duration.ofHours(1))
                        : guarantee == ConnectionSettings.Guarantee.AT_LEAST_ONCE ? Duration.ofSeconds(1) : Duration.ZERO,
                stallAfter(v));
    }

    private static Duration stallAfter(Values v) {
        String value = v.string(Keys.RECOVERY_STALL_AFTER).trim();
        return value.equals("0") ? Duration.ZERO : v.duration(Keys.RECOVERY_STALL_AFTER, Duration.ofSeconds(1), Duration.ofHours(24));
    }
}
