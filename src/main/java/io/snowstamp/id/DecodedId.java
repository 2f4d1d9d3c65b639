package io.snowstamp.id;

import java.time.Instant;

/**
 * The fields of one ID, as {@link IdLayout#decode(long)} returns them.
 *
 * @param id         the ID itself
 * @param time       the time field: units of {@link IdLayout#unitMillis()} since {@link IdLayout#epochMillis()}
 * @param datacenter the datacenter field
 * @param worker     the worker field
 * @param sequence   the sequence field
 * @param wallMillis Unix milliseconds of the start of the time unit ({@link IdLayout#toWallMillis(long)})
 */
public record DecodedId(long id, long time, long datacenter, long worker, long sequence, long wallMillis) {

    /** {@link #wallMillis()} as an instant. */
    public Instant instant() {
        return Instant.ofEpochMilli(wallMillis);
    }
}
