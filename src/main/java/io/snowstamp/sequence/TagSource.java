package io.snowstamp.sequence;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import io.snowstamp.config.SequenceSettings;
import io.snowstamp.BadRecordException;
import io.snowstamp.BadRecordException.Code;
import io.snowstamp.json.JsonIdSplicer;

import java.io.IOException;

/**
 * Finds a record's tag: its key ({@code sequence.tag-source=key}) or a top-level member of its JSON
 * object value ({@code field:NAME}; a string, or a number taken as written). Anything else is a
 * {@link BadRecordException}: {@code no-tag}, {@code invalid-tag}, or the JSON codes. Thread-safe.
 */
final class TagSource {
    private final String field;
    private final JsonFactory factory;

    TagSource(SequenceSettings settings, int maxDepth) {
        this.field = settings.tagField();
        this.factory = JsonFactory.builder()
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(maxDepth).build())
                .build();
    }

    String tagOf(byte[] key, byte[] value) {
        return field == null ? Tags.fromKey(key) : Tags.checked(fromField(value));
    }

    private String fromField(byte[] value) {
        if (value == null) {
            throw new BadRecordException(Code.NOT_OBJECT, "value is null (a tombstone), not a JSON object with the tag field '"
                    + field + "'");
        }
        try (JsonParser parser = factory.createParser(value)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                throw new BadRecordException(Code.NOT_OBJECT, "value is not a JSON object, so it has no tag field '" + field + "'");
            }
            String tag = null;
            JsonToken token;
            while ((token = parser.nextToken()) == JsonToken.FIELD_NAME) {
                boolean isTag = field.equals(parser.currentName());
                JsonToken member = parser.nextToken();
                if (isTag) {
                    tag = switch (member) {
                        case VALUE_STRING -> parser.getText();
                        case VALUE_NUMBER_INT -> parser.getText();
                        case VALUE_NULL -> null;
                        default -> throw new BadRecordException(Code.INVALID_TAG, "tag field '" + field + "' is "
                                + describe(member) + "; a tag is a string or a whole number");
                    };
                }
                parser.skipChildren();
            }
            if (token != JsonToken.END_OBJECT) {
                throw new BadRecordException(Code.NOT_JSON, "value is not well-formed JSON");
            }
            if (parser.nextToken() != null) {
                throw new BadRecordException(Code.TRAILING_CONTENT, "value has content after the JSON object");
            }
            if (tag == null) {
                throw new BadRecordException(Code.NO_TAG, "the JSON object has no tag field '" + field + "' (or it is null)");
            }
            return tag;
        } catch (StreamConstraintsException e) {
            throw new BadRecordException(e.getMessage().contains("nesting depth") ? Code.TOO_DEEP : Code.LIMIT_EXCEEDED,
                    "value exceeds a JSON limit: " + e.getOriginalMessage());
        } catch (JsonProcessingException e) {
            throw new BadRecordException(JsonIdSplicer.codeOf(e), "value is not well-formed JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new BadRecordException(Code.NOT_JSON, "value cannot be read as JSON: " + e.getMessage());
        }
    }

    private static String describe(JsonToken token) {
        return switch (token) {
            case START_OBJECT -> "an object";
            case START_ARRAY -> "an array";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NUMBER_FLOAT -> "a decimal number";
            default -> String.valueOf(token);
        };
    }
}
