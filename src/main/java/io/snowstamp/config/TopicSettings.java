package io.snowstamp.config;

/**
 * The topics the stamper reads and writes ({@code input.topic}, {@code output.topic}, {@code dlq.topic}),
 * three different topics.
 *
 * @param input  the records to stamp
 * @param output the stamped records; partition p is written by the task of input partition p only
 * @param dlq    the records that cannot be stamped (dead letters)
 */
public record TopicSettings(String input, String output, String dlq) {

    public TopicSettings {
        if (input.equals(output)) {
            throw new ConfigException(Keys.OUTPUT_TOPIC, output, "a topic other than input.topic");
        }
        // as the input, bad records would loop forever; as the output, they would break "partition p written by task p only"
        if (dlq.equals(input) || dlq.equals(output)) {
            throw new ConfigException(Keys.DLQ_TOPIC, dlq, "a topic other than input.topic and output.topic");
        }
    }

    static TopicSettings from(Values v) {
        return new TopicSettings(v.topic(Keys.INPUT_TOPIC), v.topic(Keys.OUTPUT_TOPIC), v.topic(Keys.DLQ_TOPIC));
    }

    /** Whether {@code topic} is one of the three. */
    public boolean contains(String topic) {
        return topic.equals(input) || topic.equals(output) || topic.equals(dlq);
    }
}
