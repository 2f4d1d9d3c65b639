package io.snowstamp.config;

import java.time.Duration;

/**
 * The {@code recovery.*} keys: what every task start does to resume above what was issued before.
 *
 * @param tailGuard        whether a task reads its output partition's tail at start (the tail guard)
 * @param tailGuardTimeout how long the tail guard (and the other start-time reads of Kafka) may take
 * @param takeoverGap      time added to the resume point at every task start
 */
public record RecoverySettings(boolean tailGuard, Duration tailGuardTimeout, Duration takeoverGap) {

    static RecoverySettings from(Values v, ConnectionSettings.Guarantee guarantee) {
        return new RecoverySettings(v.bool(Keys.RECOVERY_TAIL_GUARD),
                v.duration(Keys.RECOVERY_TAIL_GUARD_TIMEOUT, Duration.ofSeconds(1), Duration.ofHours(1)),
                v.isSet(Keys.RECOVERY_TAKEOVER_GAP) ? v.duration(Keys.RECOVERY_TAKEOVER_GAP, Duration.ZERO, Duration.ofHours(1))
                        : guarantee == ConnectionSettings.Guarantee.AT_LEAST_ONCE ? Duration.ofSeconds(1) : Duration.ZERO);
    }
}
