package io.snowstamp.stream;

import io.snowstamp.json.JsonIdSplicer;

import io.snowstamp.state.IdHeader;

/** The ID as a JSON member ({@code stamp.json-field}): {@link JsonIdSplicer} behind {@link ValueField}. */
final class JsonValueField implements ValueField {
    private final JsonIdSplicer splicer;
    private final int growth;

    JsonValueField(JsonIdSplicer splicer, String field) {
        this.splicer = splicer;
        // the member's name; its digits, quotes and comma are within the processor's margin
        this.growth = field.length();
    }

    @Override
    public Object inspect(byte[] value) {
        return splicer.inspect(value);
    }

    @Override
    public byte[] write(byte[] value, Object plan, long id, byte[] digits) {
        return splicer.write(value, (JsonIdSplicer.Plan) plan, digits != null ? digits : IdHeader.ascii(id));
    }

    @Override
    public int maxGrowth() {
        return growth;
    }
}
